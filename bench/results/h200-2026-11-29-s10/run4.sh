#!/bin/bash
# Window tap tests by compares (anyTap from the strip's columns and rows; tapsIn for the average's counts)
# against 4f90c26 (old): every kind, float32 and float16, the three bench shapes, old and new alternating
# twice; then the new build with --repeat 2, PyTorch's baseline in both types and bench/compare.py (tables).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run4; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run4.tgz run4' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
timeout 60 $B/vkmps.old bench --ops max --dtype float32 --iters 3 > /dev/null 2>&1
for rep in 1 2; do for b in vkmps.old vkmps; do
  s "$rep $b"
  timeout 120 $B/$b bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1
done; done
s def
timeout 200 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
python3 bench/compare.py --md $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.md 2>&1
s done
