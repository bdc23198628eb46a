#!/usr/bin/env bash
# Issue 21's measurement of the argmax passes, in one go on the GPU machine:
# vkmps bench of max and dilated max (with their "+argmax" rows) in float32
# and float16 under each argmax pass ($VKMPS_TUNE argmax=N; "def" is the
# kernels' own choice), the PyTorch baseline once per type, and for each
# setting the joined table with its training pairs (bench/compare.py).
#
#   bench/pool_argmax_sweep.sh [OUTDIR]   (VKMPS=path/to/vkmps if not on PATH;
#                                          SETTINGS="def argmax=3 ..." to choose)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-pool-argmax-out}
vkmps=${VKMPS:-vkmps}
mkdir -p "$out"
for s in ${SETTINGS:-def argmax=3 argmax=4}; do
	tune=$s
	[ "$s" = def ] && tune=
	VKMPS_TUNE=$tune "$vkmps" bench --ops max,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 \
		--json "$out/vkmps_$s.jsonl" ${VKMPS_BENCH_FLAGS:-} > /dev/null
done
PYTHONUNBUFFERED=1 python3 "$here/torch_pool_baseline.py" --iters "${TORCH_ITERS:-50}" > "$out/torch.jsonl"
PYTHONUNBUFFERED=1 python3 "$here/torch_pool_baseline.py" --iters "${TORCH_ITERS:-50}" --dtype float16 > "$out/torch16.jsonl"
for s in ${SETTINGS:-def argmax=3 argmax=4}; do
	echo "== $s"
	python3 "$here/compare.py" "$out/vkmps_$s.jsonl" "$out/torch.jsonl" "$out/torch16.jsonl"
done | tee "$out/compare.txt"
