#!/bin/bash
# run 2: depthwise dispatch grid (flat vs 2D) x quads, dx warm, plus a 14x14 layer (rows not quads)
B=.devbuild
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
gunzip -f $B/*.gz; chmod +x $B/ops.test $B/ops_base.test
O=${OUT:-/tmp/out}; mkdir -p $O
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do
  for g in "" "dwquads=0" "dwgrid=1" "dwgrid=1,dwquads=0" "dwstrip=8"; do
   echo "== new dtype=$dt gemm=$g"
   VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM="$g" $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 2>&1 | grep Benchmark
  done
  echo "== base dtype=$dt"
  VKMPS_BENCH_DTYPE=$dt $B/ops_base.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 2>&1 | grep Benchmark
done > $O/dw.txt 2>&1
