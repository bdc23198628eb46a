#!/bin/bash
# Dispatch profiles of the convolution passes (VKMPS_BENCH_PASSES=1), float16 and float32, and float16 1x1/stem layers on cooperative-matrix tile 3.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
R=$OUT/r; mkdir -p $R
trap 'cd $OUT && tar czf r.tgz r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/gpu.txt
cd ops
B='BenchmarkConvolutionGPU/(resnet|stem|vgg)'
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1
VKMPS_BENCH_DTYPE=float16 timeout 200 ../.devbuild/ops.test -test.run '^$' -test.bench "$B" -test.benchtime 1x -test.v > $R/prof_f16.txt 2>&1
VKMPS_BENCH_DTYPE=float32 timeout 200 ../.devbuild/ops.test -test.run '^$' -test.bench "$B" -test.benchtime 1x -test.v > $R/prof_f32.txt 2>&1
VKMPS_BENCH_DTYPE=float16 VKMPS_GEMM=cooptile=3 timeout 120 ../.devbuild/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet1x1|stem)' -test.benchtime 1x -test.v > $R/prof_f16_coop3.txt 2>&1
