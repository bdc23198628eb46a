#!/bin/bash
# Issue 15: cooperative-matrix tiles for GEMMs of 64 rows (the float16 Winograd products of 64 channels, the stem,
# ResNet-18's 64->128 stride-2 layers): every pass of those shapes by default and under cooptile=N for the old
# tiles 0, 2, 3, 7 and the new 64-row tiles 9-12, with dispatch profiles.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run1; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_PASSES=1
export VKMPS_BENCH_SHAPES='^(resnet3x3-64|stem7x7s2|resnet3x3s2-128|resnet1x1s2-128)$'
for rep in 1 2; do
for t in "" cooptile=0 cooptile=2 cooptile=3 cooptile=7 cooptile=9 cooptile=10 cooptile=11 cooptile=12; do
  s "rep $rep $t"
  echo "== rep $rep '$t'" >> $O/tiles.txt
  VKMPS_GEMM=$t timeout 120 $B/ops.test -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/tiles.txt 2>&1
done
done
s done
grep -E '^==|gpu-us' $O/tiles.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
