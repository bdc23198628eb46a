#!/bin/bash
# The Winograd weight gradients' products of 64 and 128 channels (float16): the tiles not tried in run 2
# (6: 64x64x64/2x2, 8: 128x64x16/2x2) and split counts around the default, with dispatch profiles.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run6; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16
for rep in 1 2; do
for t in "" winograd=1,cooptile=6 winograd=1,cooptile=8 splits=7 splits=14 splits=56 splits=112 winograd=1,cooptile=6,splits=14 winograd=1,cooptile=6,splits=56; do
  s "$rep '$t'"
  echo "== $rep '$t'" >> $O/wdw.txt
  VKMPS_GEMM=$t VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet3x3-128)$' timeout 100 $B/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/dW' -test.benchtime 1x >> $O/wdw.txt 2>&1
done; done
s done
grep -E '^==|gpu-us|winograd_coopmat' $O/wdw.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
cd $OUT && tar czf run6.tgz run6
