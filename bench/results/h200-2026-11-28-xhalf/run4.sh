#!/usr/bin/env bash
# Run 4: convolutions as an explicit im2col and a GEMM over its columns
# (im2col=1, a tuning; off by default): tests on the H200; the stem and
# the stride-2 3x3 forwards, float32 and float16, by default and under
# im2col=1 with several tiles, with dispatch profiles.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'TestConvolutionIm2col|TestConvolutionWinogradCoopMat$|TestConvolutionCoopPacked' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s bench
for d in float16 float32; do
  for t in "" "im2col=1" "im2col=1,tile=0" "im2col=1,tile=2" "im2col=1,tile=3" "im2col=1,cooptile=0" "im2col=1,cooptile=2" "im2col=1,cooptile=3" "im2col=1,cooptile=7"; do
    case "$d$t" in float32*coop*) continue;; esac
    echo "== $d '$t'"; (cd ops && VKMPS_GEMM=$t VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$d timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(stem|resnet3x3s2)[^/]*/.*/fwd$' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ')
  done
done > $o/im2col.txt
s done
cat $o/tests.txt | tail -6; grep -c ns/op $o/im2col.txt; cat $o/log.txt
