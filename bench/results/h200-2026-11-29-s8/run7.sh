#!/bin/bash
# The 1x1 float16 layers at 7x7 (ResNet-50's 512 <-> 2048, ResNet-18's 512 -> 512) and the plain 1024 x 25088 x 1024
# GEMM on every cooperative-matrix tile, the new 64-row ones included, with dispatch profiles.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run7; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16
for t in "" cooptile=1 cooptile=2 cooptile=3 cooptile=7 cooptile=8 cooptile=9 cooptile=10; do
  s "'$t'"
  echo "== '$t'" >> $O/oneone.txt
  VKMPS_GEMM=$t VKMPS_BENCH_SHAPES='^(resnet1x1-512-2048|resnet1x1-512-512|gemm1x1-1024)$' timeout 100 $B/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU' -test.benchtime 1x >> $O/oneone.txt 2>&1
done
s done
grep -E '^==|gpu-us|^ +[0-9.]+ us' $O/oneone.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
cd $OUT && tar czf run7.tgz run7
