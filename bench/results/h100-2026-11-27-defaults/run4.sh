#!/usr/bin/env bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
cd ops
for dt in float32 float16; do for bin in ops-base ops ops-base ops; do
  echo "### $bin $dt" >> $O/dw.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$dt timeout 40 $B/$bin.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x 2>&1 | grep -E 'gpu-us|FAIL|panic|rror' >> $O/dw.txt
done; done
timeout 60 $B/ops.test -test.run 'Depthwise|TestConvolutionEveryPath|TestConvolutionSmallChannels' 2>&1 | tail -5 > $O/tests.txt
