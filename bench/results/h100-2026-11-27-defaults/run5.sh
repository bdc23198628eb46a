#!/usr/bin/env bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
cd ops
for bin in base epi nofin; do for tu in "" splits=2 splits=3 "tile=1,splits=3"; do
  echo "### $bin '$tu'" >> $O/split.txt
  VKMPS_DEBUG_NOFINISH=1 VKMPS_GEMM=$tu VKMPS_BENCH_LARGE=1 timeout 40 $B/ops-$bin.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet1x1-512-2048|resnet3x3-128)/.*/(fwd|dx)$' -test.benchtime 1x 2>&1 | grep -E 'gpu-us|FAIL|panic|rror' >> $O/split.txt
done; done
