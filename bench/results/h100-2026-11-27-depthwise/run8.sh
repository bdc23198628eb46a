#!/bin/bash
# run 8: the depthwise weight gradient two items per pass, against 7f71ef1 (ops_base); tests
B=.devbuild
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
gunzip -f $B/*.gz; chmod +x $B/ops.test $B/ops_base.test
O=${OUT:-/tmp/out}; mkdir -p $O
( timeout 100 $B/ops.test -test.run 'Depthwise' -test.count=1 2>&1 | tail -3 ) > $O/tests.txt
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do
  for bin in ops.test ops_base.test; do
   echo "== dtype=$dt $bin"
   VKMPS_BENCH_DTYPE=$dt timeout 60 $B/$bin -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 2>&1 | grep 'dW'
  done
done > $O/dw.txt 2>&1
