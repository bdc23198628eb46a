#!/bin/bash
# The committed build (the average and L2-norm gathers load planes ahead; vkmps) against 0a6d454 (vkmps.old), every
# kind, alternating twice; then its table against PyTorch's baseline in both types (README's pooling table).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run3; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run3.tgz run3' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
timeout 60 $B/vkmps.old bench --ops max --dtype float32 --iters 3 > /dev/null 2>&1
b() { s "$1"; local n=$1; shift; timeout 120 "$@" bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$n.txt 2>&1; }
for rep in 1 2; do
  b old.$rep $B/vkmps.old
  b new.$rep $B/vkmps
done
s def
timeout 200 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
python3 bench/compare.py --md $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.md 2>&1
s done
