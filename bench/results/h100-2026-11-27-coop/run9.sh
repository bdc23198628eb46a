#!/bin/bash
# Dispatch profiles of the float32 1x1 512->2048 passes split along K, FINISH_ROWS 8.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps* 2>/dev/null
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
cd ops
for g in "" splits=2 splits=3 splits=4 tile=1,splits=2 tile=1,splits=3 tile=2,splits=2 tile=2,splits=3; do
  echo "== $g" >> $O/split.txt
  VKMPS_GEMM=$g VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet1x1|stem)/.*/(fwd|dx)' -test.benchtime 1x -test.v 2>&1 | grep -E "gpu-us|^ +[0-9.]+ us" >> $O/split.txt
done
