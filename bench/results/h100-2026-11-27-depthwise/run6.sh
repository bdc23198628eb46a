#!/bin/bash
# run 6: depthwise weight gradients reading quads and pairs, against single values (dwvec=0); tests
B=.devbuild
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
gunzip -f $B/*.gz; chmod +x $B/ops.test
O=${OUT:-/tmp/out}; mkdir -p $O
( timeout 120 $B/ops.test -test.run 'Depthwise|TestConvolutionTuning' -test.count=1 2>&1 | tail -3 ) > $O/tests.txt
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do
  for g in "" "dwvec=0"; do
   echo "== dtype=$dt gemm=$g"
   VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM="$g" timeout 60 $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 2>&1 | grep Benchmark
  done
done > $O/dw.txt 2>&1
