#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The A/A calibration of compare, bench and optimize on builtin:tiny-gpt quiet and under a competing load
# (docs/verify.md, "Stalls"), in the CLI and through the desktop's batch mode: a pass-through plan (ATen's own gelu,
# through the provider) for the gelu the model calls. Counts the verdicts; a "faster" or "slower" is a false positive.
# Also the forward `kforge profile` reports, quiet against under load.
#
#   bench/aa_under_load.sh [repeats (100)] [threads (1 2)] [what (compare bench optimize studio profile)]
#
# The load: bench/competing_load, one thread spinning all the while and one more for 5 ms in every 50 ms.
# KFORGE_LOAD="--busy 1 --burst-threads 1 --burst-ms 5 --period-ms 50" changes it; loads: "quiet busy" by default
# (LOADS="busy" for the loaded half only).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${KFORGE_BIN:-$root/build/bin}
repeats=${1:-100}
threads=${2:-"1 2"}
what=${3:-"compare bench optimize studio profile"}
load_args=${KFORGE_LOAD:-"--busy 1 --burst-threads 1 --burst-ms 5 --period-ms 50"}
loads=${LOADS:-"quiet busy"}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
plan="$work/pass-through.kfplan.json"
"$bin/kforge" plan new "$plan" --model builtin:tiny-gpt --provide ":gelu:AtenGeluProvider" >/dev/null
export QT_QPA_PLATFORM=offscreen

# The verdict of one run, from its JSON.
verdict() {
  case $1 in
  compare) "$bin/kforge" compare builtin:tiny-gpt --plan "$plan" --threads "$2" -q --json 2>/dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['total']['verdict'])" ;;
  bench) "$bin/kforge" bench builtin:tiny-gpt --plan "$plan" --threads "$2" -q --json 2>/dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['verdict'])" ;;
  optimize) "$bin/kforge" optimize builtin:tiny-gpt --providers AtenGeluProvider --include-reference \
    --generators none --threads "$2" --out "$work/o.kfplan.json" -q --json 2>/dev/null |
    python3 -c "import json, sys; print(next(c['verdict'] for c in json.load(sys.stdin)['candidates'] if c['function'] == 'gelu'))" ;;
  studio) OMP_NUM_THREADS=$2 "$bin/kforge-studio" builtin:tiny-gpt --plan "$plan" --compare \
    --screenshot "$work/s.png" --save-profile "$work/s.kfprof" >/dev/null 2>&1 &&
    "$bin/kforge" report "$work/s.kfprof" --json 2>/dev/null |
    python3 -c "import json, sys; print(json.load(sys.stdin)['total']['verdict'])" ;;
  profile) "$bin/kforge" profile builtin:tiny-gpt --threads "$2" -q --json 2>/dev/null |
    python3 -c "import json, sys; j = json.load(sys.stdin); print('%.3f %.3f %d' % (j['forward_ms'], j['wall_ns'] / 1e6 / j['iterations'], j['stalls']['stalled_iterations']))" ;;
  esac
}

printf '%-9s %-7s %-5s %5s %7s %7s %10s %10s %7s\n' what threads load runs faster slower "no change" "too noisy" errors
for w in $what; do
  for t in $threads; do
    for load in $loads; do
      if [ "$load" = busy ]; then
        # shellcheck disable=SC2086
        "$bin/competing_load" $load_args &
        loader=$!
      fi
      if [ "$w" = profile ]; then
        : >"$work/profile"
        for ((i = 0; i < repeats; i++)); do verdict profile "$t" >>"$work/profile" || true; done
        python3 - "$w" "$t" "$load" "$work/profile" <<'EOF'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[4]) if line.strip()]
forward = statistics.median(r[0] for r in rows)
wall = [r[1] for r in rows]
print(f"{sys.argv[1]:<9} {sys.argv[2]:<7} {sys.argv[3]:<5} {len(rows):5d}  forward (median of runs) {forward:.3f} ms, "
      f"wall per iteration median {statistics.median(wall):.3f} ms, max {max(wall):.3f} ms; "
      f"runs with stalls {sum(r[2] > 0 for r in rows)}")
EOF
      else
        faster=0 slower=0 none=0 noisy=0 errors=0
        for ((i = 0; i < repeats; i++)); do
          case $(verdict "$w" "$t" || echo error) in
          faster) faster=$((faster + 1)) ;; slower) slower=$((slower + 1)) ;;
          "too noisy to judge") noisy=$((noisy + 1)) ;; "no detectable change") none=$((none + 1)) ;;
          *) errors=$((errors + 1)) ;;
          esac
        done
        printf '%-9s %-7s %-5s %5d %7d %7d %10d %10d %7d\n' "$w" "$t" "$load" "$repeats" "$faster" "$slower" "$none" \
          "$noisy" "$errors"
      fi
      if [ "$load" = busy ]; then
        kill "$loader" 2>/dev/null || true
        wait "$loader" 2>/dev/null || true
      fi
    done
  done
done
