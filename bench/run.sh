#!/usr/bin/env bash
# Issue 9's side-by-side measurement, in one go on the GPU machine: vkmps's
# own benchmark (GPU timestamps, its copy kernel as the bandwidth ceiling)
# and the PyTorch/cuDNN baseline, then the joined table.
#
#   bench/run.sh [OUTDIR]      (VKMPS=path/to/vkmps if not on PATH)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-bench-out}
vkmps=${VKMPS:-vkmps}
mkdir -p "$out"
# float32 and float16 images in one run (the table ends with float16's
# speed-up); PyTorch once per type.
"$vkmps" bench --dtype float32,float16 --repeat 2 --json "$out/vkmps.jsonl" --plot "$out/vkmps.png" ${VKMPS_BENCH_FLAGS:-}
PYTHONUNBUFFERED=1 python3 "$here/torch_pool_baseline.py" --iters "${TORCH_ITERS:-50}" > "$out/torch.jsonl"
PYTHONUNBUFFERED=1 python3 "$here/torch_pool_baseline.py" --iters "${TORCH_ITERS:-50}" --dtype float16 > "$out/torch16.jsonl"
python3 "$here/compare.py" "$out/vkmps.jsonl" "$out/torch.jsonl" "$out/torch16.jsonl" | tee "$out/compare.txt"
python3 "$here/compare.py" "$out/vkmps.jsonl" "$out/torch.jsonl" "$out/torch16.jsonl" --md > "$out/compare.md"
