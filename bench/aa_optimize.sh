#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The A/A calibration of `kforge optimize` (docs/verify.md, "The speed verdict"): per corpus model, optimize runs
# REPEATS times with one candidate, the reference provider of a function the model calls in every block (it runs the
# original op itself, called through the provider), no generators. Its verdict against the original is counted: a
# "faster" verdict keeps it in the plan, a false positive; "slower" is the boxed call's own cost or noise.
#
#   bench/aa_optimize.sh [repeats (100)] [models...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
repeats=${1:-100}
shift $(($# < 1 ? $# : 1))
# The corpus folder, as the corpus tests find it (KFORGE_CORPUS_DIR overrides).
python=$(ls -d "${KFORGE_CACHE:-$HOME/.cache/kforge}"/torch-*/bin/python 2>/dev/null | tail -1)
corpus=${KFORGE_CORPUS_DIR:-$("$python" "$root/scripts/corpus_export.py" --print-out-dir)}
# model form function provider
all=(
  "resnet18 script relu AtenReluProvider" "timm_vit_tiny script gelu AtenGeluProvider"
  "hf_llama trace linear AtenLinearProvider" "efficientnet_b0 script silu AtenSiluProvider"
)
printf '%-18s %-7s %-8s %8s %8s %8s %8s\n' model form function runs faster slower none
for row in "${all[@]}"; do
  read -r model form function provider <<<"$row"
  if (($# > 0)) && [[ ! " $* " == *" $model "* ]]; then continue; fi
  faster=0 slower=0 none=0
  for ((i = 0; i < repeats; i++)); do
    verdict=$("$root/build/bin/kforge" optimize "$corpus/$model.$form.pt" --inputs-file "$corpus/$model.input.pt" \
      --providers "$provider" --include-reference --generators none --min-share 0 --threads 1 \
      --out /tmp/aa_optimize.kfplan.json --json 2>/dev/null |
      python3 -c "import json, sys; print(next(c['verdict'] for c in json.load(sys.stdin)['candidates'] if c['function'] == '$function'))")
    case $verdict in
    faster) faster=$((faster + 1)) ;; slower) slower=$((slower + 1)) ;; *) none=$((none + 1)) ;;
    esac
  done
  printf '%-18s %-7s %-8s %8d %8d %8d %8d\n' "$model" "$form" "$function" "$repeats" "$faster" "$slower" "$none"
done
