#!/usr/bin/env bash
# Run 1: the image GEMM's tile 0 built with the tile fixed at compile time
# (ops.test / vkmps, the working tree after 44a7330) against its
# specialized build (the same binaries under fixedtile=0) and against an
# experiment (ops_exp.test / vkmps_exp: tile 0 16 deep in all three GEMM
# shaders, and the pooling buffers declared restrict); pooling by default
# and with two planes per invocation (pz=2) on both builds; ResNet-18
# steps.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # binary tuning dtype
  echo "== $1 [$2] $3"
  (cd ops && VKMPS_GEMM="$2" VKMPS_BENCH_DTYPE=$3 VKMPS_BENCH_LARGE=1 timeout 100 $B/$1 -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet[13]|gemm1x1|stem)' -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op' | sed -E 's/ +[0-9]+ ns\/op//')
}
s conv
for r in 1 2; do
  bench ops.test "" float32; bench ops.test fixedtile=0 float32; bench ops_exp.test "" float32
done > $o/conv32.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for v in "vkmps" "vkmps fixedtile=0" "vkmps_exp"; do
  set -- $v
  timeout 60 $B/$1 train synthetic $m $a --dtype float32 --conv-tuning "${2:-}" --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
s pool
for r in 1 2; do for v in vkmps vkmps_exp; do for t in "" "pz=2"; do
  echo "== $v [$t]" >> $o/pool.txt
  VKMPS_TUNE="$t" timeout 60 $B/$v bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes '32,64,112,112,3,2,1;64,256,56,56,2,2,0' --warmup 30ms --iters 10 --repeat 2 --copy-mib 50 >> $o/pool.txt 2>&1
done; done; done
s done
grep 'per training step' $o/resnet18.txt; cat $o/log.txt
