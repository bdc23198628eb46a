#!/bin/bash
# Issue 21: the session's last build (dilated max on halves too) against its start (old, 1600d6a): max and
# dilated max, float32 and float16, once each; then every kind on the three bench shapes, float32 and float16,
# with PyTorch's baseline and bench/compare.py (README's tables); ResNet-18 float16 steps, old and new, twice.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run5; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run5.tgz run5' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
for b in vkmps.old vkmps; do
  s $b
  timeout 100 $B/$b bench --ops max,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$b.txt 2>&1
done
s def
timeout 200 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
python3 bench/compare.py --md $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.md 2>&1
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype float16"
for b in vkmps.old vkmps vkmps.old vkmps; do
  s "resnet $b"
  timeout 60 $B/$b train synthetic $m $a >> $O/resnet18_$b.txt 2>&1
done
s done
