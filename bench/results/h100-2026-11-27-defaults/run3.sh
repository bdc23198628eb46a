#!/usr/bin/env bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
cd ops
s depthwise
for dt in float32 float16; do for bin in ops-base ops ops-base ops; do
  echo "### $bin $dt" >> $O/dw.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$dt timeout 40 $B/$bin.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x 2>&1 | grep -E 'gpu-us|FAIL|panic|rror' >> $O/dw.txt
done; done
s tests-ops
timeout 240 $B/ops.test -test.run 'Conv|Winograd|FullyConnected|Argmax|Tuning' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:|rror Trace' | head -80 > $O/tests_ops.txt
echo "rc=$?" >> $O/tests_ops.txt
s sweep
VKMPS_BENCH_LARGE=1 VKMPS_BENCH_SWEEP=1 VKMPS_BENCH_DTYPE=float32 timeout 150 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet1x1-512-2048|resnet3x3-256|resnet3x3-512)' -test.benchtime 1x > $O/sweep.txt 2>&1
s tests-graph
cd ../graph && timeout 100 $B/graph.test 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:' | head -40 > $O/tests_graph.txt
s done
