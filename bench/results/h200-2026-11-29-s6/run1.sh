#!/usr/bin/env bash
# Run 1: Winograd parts (winopart=N: the most batch images one part of a
# Winograd convolution takes; the default takes the whole batch of 32):
# whether parts small enough for the transforms' V and X to stay in the
# L2 cache between passes pay. The 3x3 ResNet layers fwd/dx/dW, float32
# and float16, default and winopart=1..16; dispatch profiles of 64@56 at
# the default and winopart=4; ResNet-18 steps at the default and
# winopart=4, 8.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # tuning dtype
  echo "== ${1:-default} $2"
  (cd ops && VKMPS_GEMM=$1 VKMPS_BENCH_SHAPES='^resnet3x3-.*$' VKMPS_BENCH_DTYPE=$2 VKMPS_BENCH_LARGE=1 timeout 100 $B/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/.*/.*/.*\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
s parts
for d in float32 float16; do for t in "" winopart=1 winopart=2 winopart=4 winopart=8 winopart=16 ""; do bench "$t" $d; done; done > $o/parts.txt
s prof
for t in "" winopart=4; do for d in float32 float16; do
  (cd ops && VKMPS_GEMM=$t VKMPS_BENCH_SHAPES='^resnet3x3-64$' VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/.*/.*/(fwd|dW)$' -test.benchtime 1x -test.count 1 -test.v > $o/prof_${d}_${t:-default}.txt 2>&1)
done; done
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for t in "" winopart=4 winopart=8; do for d in float32 float16; do
  echo "== ${t:-default} $d" >> $o/resnet18.txt
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d ${t:+--conv-tuning $t} --json $o/resnet18_${t:-default}.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s done
cat $o/log.txt; python3 bench/configs_table.py $o/parts.txt 2>&1 | head -60; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//'
