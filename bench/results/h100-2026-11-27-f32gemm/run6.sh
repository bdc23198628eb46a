#!/bin/bash
# run 6: Winograd weight gradients with D and V channels fastest (CHANNELS_FAST) against winocf=0 (run 3's layout), float32;
# float16 unchanged (coop) as a check; statistics; the Winograd tests on the H100
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s tests
(cd ops && timeout 120 $B/ops.test -test.run 'Winograd' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:' | head -20 > $O/tests.txt)
(cd ops && VKMPS_CONV_STATS=1 timeout 60 $B/ops.test -test.run TestConvPipelineStatistics -test.v 2>&1 | grep -A1 "Winograd weight" > $O/stats.txt)
s bench
for rep in 1 2; do for g in "" winocf=0 "splits=1" "splits=4"; do
  echo "== $g x" >> $O/bench.txt
  (cd ops && VKMPS_GEMM=$g VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3-|vgg)/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op| us  ' >> $O/bench.txt)
done; done
s done
