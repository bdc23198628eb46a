#!/bin/bash
# run 1: ResNet-18 training steps (batch 32): the GPU time of each step after
# the old fixed warm-up (--warmup 0s: 10 steps) and with the new default
# (--warmup 1s), float32 and float16, and PyTorch's steps in the same run
# (bench/torch_resnet18.py, warm-up of 10 steps and at least 1 s).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
M=cmd/vkmps/models/resnet18.json
A="--batch 32 --input x=3,224,224 --input labels=1000,1,1"
for w in ${WARMUPS:-0s 1s}; do for dt in float16 float32; do
  s "vkmps $dt warmup $w"
  timeout 60 $B/vkmps train synthetic $M $A --steps 40 --warmup $w --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done; done
s "vkmps float16 warmup 0s again"
timeout 60 $B/vkmps train synthetic $M $A --steps 40 --warmup 0s --dtype float16 --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
s torch
timeout 150 python3 bench/torch_resnet18.py --steps 30 > $O/torch_resnet18.jsonl 2>$O/torch_resnet18.err
s done
