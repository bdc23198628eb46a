#!/usr/bin/env bash
# Run 4 (f37442f): the depthwise layers (56x56, 14x14 and MobileNetV2's
# 7x7) by default and under 1 and 2 rows per block, against the session's
# start (ops_old.test); the convolution table against cuDNN (vkmps bench
# --conv, bench/torch_training_baseline.py, bench/compare_conv.py); a
# ResNet-18 training step of each type and PyTorch's, same call.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # binary tuning dtype
  echo "== $1 [$2] $3"
  (cd ops && VKMPS_GEMM="$2" VKMPS_BENCH_DTYPE=$3 VKMPS_BENCH_LARGE=1 timeout 60 $B/$1 -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op' | sed -E 's/ +[0-9]+ ns\/op//')
}
s dw
for d in float32 float16; do
  bench ops_old.test "" $d
  for t in "" dwrows=1 dwrows=2; do bench ops.test "$t" $d; done
done > $o/dw.txt
s conv
timeout 150 $B/vkmps bench --conv --dtype float32,float16 --json $o/conv.jsonl > $o/conv.txt 2>&1
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $o/torch_training.jsonl 2>$o/torch_training.err
python3 bench/compare_conv.py $o/conv.jsonl $o/torch_training.jsonl > $o/conv_compare.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
timeout 100 python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
s done
grep depthwise $o/conv_compare.txt; grep 'per training step' $o/resnet18.txt; cut -c1-200 $o/torch_resnet18.jsonl; cat $o/log.txt
