#!/usr/bin/env bash
# Run 1 (889ca6b, the session's start) on an H200: the convolution table
# (vkmps bench --conv against torch_training_baseline.py), pooling
# (vkmps bench against torch_pool_baseline.py, float32 and float16),
# ResNet-18 steps (float32, float16) and PyTorch's step, same call.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $o/gpu.txt
python3 -c 'import torch; print(torch.__version__, torch.backends.cudnn.version())' >> $o/gpu.txt 2>&1
s conv
timeout 150 $B/vkmps bench --conv --dtype float32,float16 --json $o/conv.jsonl > $o/conv.txt 2>&1
s torch-train
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $o/torch_training.jsonl 2>$o/torch_training.err
s pool
timeout 150 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $o/pool.jsonl > $o/pool.txt 2>&1
s torch-pool
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_pool_baseline.py --iters 50 > $o/torch_pool.jsonl 2> $o/torch_pool.err
PYTHONUNBUFFERED=1 timeout 100 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $o/torch_pool16.jsonl 2>> $o/torch_pool.err
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do
  timeout 100 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
timeout 100 python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
s done
grep -v '^  ' $o/resnet18.txt | grep -v "^device memory\|^its\|^GPU time"; cut -c1-200 $o/torch_resnet18.jsonl; cat $o/log.txt
