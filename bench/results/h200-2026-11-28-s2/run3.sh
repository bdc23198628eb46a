#!/usr/bin/env bash
# Run 3: the committed build (weight gradients' tile 0 rated 0.9): the
# convolution table against cuDNN (vkmps bench --conv, float32 and
# float16; bench/torch_training_baseline.py; bench/compare_conv.py),
# ResNet-18 steps (float32, float16, twice each) and PyTorch's step, and
# the float16 1x1 layers at 7x7 under every cooperative-matrix tile
# (VKMPS_BENCH_SWEEP=1), for the next session; pooling on the two large
# shapes by default and with float16 loads of 16 bytes (vw=8, pz=2).
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16 float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
timeout 100 python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
s conv
timeout 150 $B/vkmps bench --conv --dtype float32,float16 --json $o/conv.jsonl > $o/conv.txt 2>&1
s torch-train
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $o/torch_training.jsonl 2>$o/torch_training.err
python3 bench/compare_conv.py $o/conv.jsonl $o/torch_training.jsonl > $o/conv_compare.txt 2>&1
s sweep16
(cd ops && VKMPS_BENCH_SWEEP=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 120 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet1x1-512[^/]*/' -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ') > $o/sweep16_1x1.txt
s pool
for t in "" "vw=8" "vw=8,pz=2"; do
  VKMPS_TUNE=$t timeout 60 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes '32,64,112,112,3,2,1;64,256,56,56,2,2,0' --warmup 30ms --iters 10 --repeat 2 --json $o/pool_${t:-def}.jsonl > /dev/null 2>>$o/pool.err
done
s done
grep 'per training step' $o/resnet18.txt; cut -c1-220 $o/torch_resnet18.jsonl; cat $o/log.txt
