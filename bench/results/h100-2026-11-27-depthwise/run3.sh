#!/bin/bash
# run 3: split K on the cooperative-matrix image GEMMs (float16 1x1 layers)
B=.devbuild
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
gunzip -f $B/*.gz; chmod +x $B/ops.test
O=${OUT:-/tmp/out}; mkdir -p $O
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16
( $B/ops.test -test.run 'TestConvolutionCoopMatAgreesWithTiles|TestConvolutionCoopPacked' -test.count=1 2>&1 | tail -3 ) > $O/tests.txt
for g in "" "splits=1" "cooptile=2,splits=2" "cooptile=2,splits=4" "cooptile=2,splits=6" "cooptile=3,splits=3" "cooptile=3,splits=5" "cooptile=3,splits=8" "cooptile=7,splits=5" "cooptile=8,splits=4"; do
  echo "== gemm=$g"
  VKMPS_GEMM="$g" $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/(resnet1x1|gemm1x1)' -test.benchtime 1x -test.count 2 2>&1 | grep Benchmark
done > $O/split.txt 2>&1
VKMPS_BENCH_PASSES=1 $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/resnet1x1-512-2048' -test.benchtime 1x -test.v 2>&1 | grep -v "^=== " > $O/prof.txt
