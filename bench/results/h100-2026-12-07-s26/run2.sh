#!/usr/bin/env bash
# session 26 run 2: the Winograd products on the tiles of more subgroups (run 1's register counts: 64x128x16 in 1 x 4,
# the default for 64 output channels, 136 registers an invocation; in 2 x 4, tile 12, 82; 128x128x16 in 2 x 4, the
# default above 64, 128; in 4 x 4, tile 11, 76), forced with winograd=1,cooptile=N, alternating twice; float16
# dispatch profiles of the 3x3 layers' forward, data and weight gradients.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b $OUT/r && gunzip -c .devbuild/ops.test.gz > /tmp/b/ops.test && chmod +x /tmp/b/ops.test
O=$OUT/r
snap(){ (cd $OUT && tar czf run2.tgz r); }
trap 'snap; rm -rf $OUT/r' EXIT
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $O/log.txt; }
for rep in 1 2; do
  for G in "" winograd=1,cooptile=12 winograd=1,cooptile=0; do
    el "64 $rep $G"; echo "== $rep $G" >> $O/w64.txt
    (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64)$' timeout 20 /tmp/b/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/w64.txt 2>&1)
  done
  for G in "" winograd=1,cooptile=11 winograd=1,cooptile=12; do
    el "big $rep $G"; echo "== $rep $G" >> $O/wbig.txt
    (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-128|resnet3x3-256|resnet3x3-512)$' timeout 25 /tmp/b/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/wbig.txt 2>&1)
  done
  snap
done
el done
