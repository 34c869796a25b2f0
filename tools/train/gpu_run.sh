#!/usr/bin/env bash
# One GPU session: train the demo model, score it on the test split, and leave the results in
# $OUT as few files as possible: the model shards, meta.tar (configs, tokenizer, training log) and
# eval.tar (scores, hypotheses).
#
#   bash tools/train/gpu_run.sh            # needs tools/corpus/out/corpus.tar.xz and
#                                          # tools/corpus/out/tokenizer/ in the tree
# Environment: OUT (default tools/corpus/out/gpu-out), BUDGET_MIN (training budget including data preparation
# and compilation, default 7), PER_DIRECTION (test sentences per direction, default 300),
# TRAIN_ARGS (extra train.py arguments, e.g. "--no-compile").
# About BUDGET_MIN + 2 minutes in all on one H200.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT="${OUT:-$PWD/tools/corpus/out/gpu-out}"
BUDGET_MIN="${BUDGET_MIN:-7}"
PER_DIRECTION="${PER_DIRECTION:-300}"
work="$(mktemp -d)"
mkdir -p "$OUT" "$work/eval"
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$work/gpu.txt" || true
python3 -c "import torch, transformers, sentencepiece, sacrebleu; print('torch', torch.__version__, 'transformers', transformers.__version__, 'sentencepiece', sentencepiece.__version__, 'sacrebleu', sacrebleu.__version__)" | tee -a "$work/gpu.txt"

# shellcheck disable=SC2086
python3 tools/train/train.py --device cuda --time-budget-min "$BUDGET_MIN" --out "$work/model" \
    ${TRAIN_ARGS:-} 2>&1 | grep -v "Unrecognized keys in .rope_parameters" | tee "$work/train.log"
# The shards go to $OUT before scoring, so a run cut short still returns the model.
cp "$work"/model/model-*.safetensors "$OUT"/ 2> /dev/null || cp "$work"/model/model.safetensors "$OUT"/
(cd "$work" && tar -cf "$OUT/meta.tar" gpu.txt train.log \
    model/config.json model/generation_config.json model/tokenizer_config.json model/tokenizer.model \
    model/training_summary.json $(cd "$work" && ls model/model.safetensors.index.json 2> /dev/null))
python3 tools/train/evaluate.py --device cuda --model "$work/model" --per-direction "$PER_DIRECTION" \
    --out "$work/eval" --heldout "$work/eval/heldout.tsv" 2>&1 \
    | grep -v "Unrecognized keys in .rope_parameters" | tee "$work/eval.log"

(cd "$work" && tar -cf "$OUT/eval.tar" eval.log eval)
ls -la "$OUT"
