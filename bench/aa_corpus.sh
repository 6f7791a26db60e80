#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The A/A calibration of the speed verdict on every corpus model (docs/verify.md, "The speed verdict"): per model,
# bench_speed_verdict with a pass-through provider for one function the model calls in every block, the same plan on
# both sides (--study bench) or against the model as it is (--study compare), plus one power row with the provider
# slowed by 25% of the forward. Prints each run's table; summarise with the A/A and power rows.
#
#   bench/aa_corpus.sh [bench|compare] [repeats (40)] [power repeats (10)] [models...]
#
# AA_FUNCTION=mish makes the A/A plan an entry for a function no corpus model calls (a plan that can never fire)
# instead of the pass-through: a compare's baseline has no plan, and the pass-through's own cost (an in-place relu
# served as relu plus a copy into its input) is real.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
study=${1:-bench}
repeats=${2:-40}
power=${3:-10}
shift $(($# < 3 ? $# : 3))
# model form function: the scripted form where the corpus has one (Hugging Face models are traced only).
all=(
  "resnet18 script relu" "mobilenet_v2 script hardtanh" "mobilenet_v3_small script hardswish"
  "efficientnet_b0 script silu" "regnet_y_400mf script relu" "shufflenet_v2_x0_5 script relu"
  "squeezenet1_1 script relu" "convnext_tiny script layer_norm" "swin_t script gelu" "vit script gelu"
  "lraspp_mobilenet_v3_large script hardswish" "timm_vit_tiny script gelu" "timm_efficientvit_b0 script hardswish"
  "hf_llama trace linear" "hf_t5 trace linear" "hf_clip_vision trace linear" "hf_wav2vec2 trace gelu"
)
for row in "${all[@]}"; do
  read -r model form function <<<"$row"
  if (($# > 0)) && [[ ! " $* " == *" $model "* ]]; then continue; fi
  "$root/build/bin/bench_speed_verdict" --study "$study" --model "$model" --form "$form" --function "$function" \
    --repeats "$repeats" --power-repeats "$power" --slowdowns 0.25 --threads 1 \
    $([[ $study == compare ]] && echo --rounds 10 --warmup 3) ${AA_FUNCTION:+--aa-function "$AA_FUNCTION"}
done
