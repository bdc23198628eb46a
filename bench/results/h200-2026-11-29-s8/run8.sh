#!/bin/bash
# ResNet-50's float16 1x1 layers (and the 1024 x 25088 x 1024 GEMM) by default and on cooperative-matrix tiles
# 1, 2, 3, 7, 9, 10 and without cooperative matrices, with dispatch profiles.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run8; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16
for t in "" cooptile=1 cooptile=2 cooptile=3 cooptile=7 cooptile=9 cooptile=10 coopmat=0; do
  s "'$t'"
  echo "== '$t'" >> $O/r50.txt
  VKMPS_GEMM=$t VKMPS_BENCH_SHAPES='^(resnet50-1x1-.*|gemm1x1-1024)$' timeout 120 $B/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU' -test.benchtime 1x >> $O/r50.txt 2>&1
done
s done
grep -E '^==|gpu-us|^ +[0-9.]+ us' $O/r50.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
cd $OUT && tar czf run8.tgz run8
