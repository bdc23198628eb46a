#!/bin/bash
# Winograd sweep: 3x3 layers fwd/dx, f32 and f16, default / winograd=0 / winograd=1 on each tile.
cd "$(dirname "$0")"
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do
  for g in "" "winograd=0" "winograd=1,tile=0" "winograd=1,tile=1" "winograd=1,tile=2" "winograd=1,tile=3"; do
    echo "### dtype=$dt VKMPS_GEMM=$g"
    VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM=$g ./ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)[^/]*/.*/(fwd|dx)$' -test.benchtime 1x 2>&1 | grep -E "gpu-us|FAIL|panic|Error"
  done
done
