#!/usr/bin/env bash
# Run 2: ResNet-18's stride-2 3x3 layers (BenchmarkConvolutionGPU
# resnet3x3s2-*): the dispatches of each pass by default, the sweep of
# tiles and split counts, and float16 on cooperative matrices split K.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; gunzip -f .devbuild/*.gz
o=$OUT/r; mkdir -p $o; trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $o/gpu.txt
b() { VKMPS_BENCH_LARGE=1 .devbuild/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/$1" -test.benchtime 1x "${@:2}"; }
for d in float32 float16; do
  VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_PASSES=1 b resnet3x3s2 -test.count 2 -test.v > $o/passes_$d.txt 2>&1
  VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_SWEEP=1 timeout 150 bash -c "$(declare -f b); b resnet3x3s2" > $o/sweep_$d.txt 2>&1
done
for t in splits=2 splits=3 splits=4 splits=6 cooptile=7,splits=2 cooptile=7,splits=4 coopmat=1 coopmat=1,splits=2 coopmat=1,splits=4 cooptile=2; do
  echo "== $t"; VKMPS_GEMM=$t VKMPS_BENCH_DTYPE=float16 b resnet3x3s2 -test.count 2 2>&1 | grep ns/op
done > $o/f16_tunings.txt
grep -h ns/op $o/passes_*.txt | awk 'NR%2==0 || 1' | cut -c1-150
