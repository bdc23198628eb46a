#!/bin/bash
# run 2: Winograd products storing quads (vec4 epilogue) against HEAD (ops_base), float32 and float16 3x3 layers; tests
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s tests
(cd ops && timeout 120 $B/ops.test -test.run 'Winograd' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:' | head -20 > $O/tests.txt)
s bench
for rep in 1 2; do for b in ops_base ops; do for dt in float32 float16; do
  echo "== $b $dt $rep" >> $O/bench.txt
  (cd ops && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$dt timeout 60 $B/$b.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3-|vgg)' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op|winograd_(gemm|coopmat)' >> $O/bench.txt)
done; done; done
s done
