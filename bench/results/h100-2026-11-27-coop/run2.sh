#!/bin/bash
# Sweeps: float16 1x1 and stem layers (VKMPS_BENCH_SWEEP=1); the Winograd products' cooperative-matrix tile and splits on 3x3 float16 layers (dW, fwd) with dispatch profiles.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
R=$OUT/r; mkdir -p $R
trap 'cd $OUT && tar czf r.tgz r' EXIT
cd ops
T=../.devbuild/ops.test
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16
VKMPS_BENCH_SWEEP=1 timeout 200 $T -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet1x1|stem)' -test.benchtime 1x > $R/sweep_1x1_stem.txt 2>&1
for t in 0 2 3 6 8; do
  for s in 0 16 32 64; do
    g="winograd=1,cooptile=$t"; [ $s != 0 ] && g="$g,splits=$s"
    echo "== $g" >> $R/wino_dw.txt
    VKMPS_BENCH_PASSES=1 VKMPS_GEMM=$g timeout 60 $T -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E "gpu-us|winograd_coopmat|wout" >> $R/wino_dw.txt
  done
  echo "== winograd=1,cooptile=$t" >> $R/wino_fwd.txt
  VKMPS_BENCH_PASSES=1 VKMPS_GEMM="winograd=1,cooptile=$t" timeout 60 $T -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)/.*/fwd' -test.benchtime 1x -test.v 2>&1 | grep -E "gpu-us|winograd_coopmat" >> $R/wino_fwd.txt
done
