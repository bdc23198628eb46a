#!/bin/bash
# run 7 (7f71ef1): the depthwise weight gradient's passes (profile) and its split counts, float32 and float16
B=.devbuild
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
gunzip -f $B/*.gz; chmod +x $B/ops.test
O=${OUT:-/tmp/out}; mkdir -p $O
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do
  echo "== dtype=$dt profile"
  VKMPS_BENCH_DTYPE=$dt VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise3x3-256' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -v "^=== "
  for g in "splits=1" "splits=2" "splits=4" "splits=8" "splits=16" "splits=32"; do
   echo "== dtype=$dt gemm=$g"
   VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM="$g" timeout 60 $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 2>&1 | grep 'dW'
  done
done > $O/dw.txt 2>&1
