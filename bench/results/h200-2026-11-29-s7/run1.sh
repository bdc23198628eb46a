#!/bin/bash
# Issue 21: float16 pooling against float32 on the H200 at the session's start (2e30c83): every kind on the
# bench shapes with PyTorch's baseline; and whether odd destination widths cost float16 (the dilated shapes'
# outputs are 55 and 27 wide): max and dilated max on 112/114 and 56/58 (each pair: one odd, one even width).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run1; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
python3 -c 'import torch; print(torch.__version__, torch.backends.cudnn.version())' >> $O/gpu.txt 2>&1
s def
timeout 150 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s odd
timeout 150 $B/vkmps bench --ops max,dilated-max --dtype float32,float16 --shapes "32,64,112,112,3,2,1;32,64,114,114,3,2,1;64,256,56,56,2,2,0;64,256,58,58,2,2,0" --warmup 30ms --iters 10 --repeat 2 --json $O/odd.jsonl > $O/odd.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
s done
