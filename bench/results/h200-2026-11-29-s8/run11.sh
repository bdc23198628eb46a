#!/bin/bash
# The session's last build (14a5804) against its start (566f588): ResNet-18 training steps of both types, alternating,
# three times each, and PyTorch's steps (bench/torch_resnet18.py), same call.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run11; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run11.tgz run11' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for rep in 1 2 3; do for d in float32 float16; do for b in vkmps.old vkmps; do
  s "$rep $d $b"
  timeout 60 $B/$b train synthetic $m $a --dtype $d --json $O/resnet18_$b.jsonl >> $O/resnet18_$b.txt 2>&1
done; done; done
s torch
timeout 150 python3 bench/torch_resnet18.py --steps 30 > $O/torch_resnet18.jsonl 2> $O/torch_resnet18.err
s done
