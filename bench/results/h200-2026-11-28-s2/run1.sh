#!/usr/bin/env bash
# Run 1 (reconnaissance, the session's start): float32 layers that run on
# the tiled GEMM (ResNet-18's stride-2 3x3 layers, the stem, ResNet-50's
# 1x1 512->2048 at 7x7): every tile forced, split counts, Winograd off/on
# (VKMPS_BENCH_SWEEP=1), then tile x split combinations and im2col forced
# through VKMPS_GEMM; the pipelines' profiles with VKMPS_BENCH_PASSES=1.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $o/gpu.txt 2>&1
L='BenchmarkConvolutionGPU/(resnet3x3s2|stem7x7s2|resnet1x1-512-2048|resnet1x1s2)[^/]*/'
s sweep
(cd ops && VKMPS_BENCH_SWEEP=1 VKMPS_BENCH_LARGE=1 timeout 250 $B/ops.test -test.run '^$' -test.bench "$L" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op') > $o/sweep.txt
s combos
for t in "tile=0,splits=2" "tile=0,splits=4" "tile=1,splits=2" "tile=1,splits=4" "tile=2,splits=2" "im2col=1" "im2col=1,tile=0" "im2col=1,tile=1"; do
  echo "== '$t'"; (cd ops && VKMPS_GEMM=$t VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 timeout 80 $B/ops.test -test.run '^$' -test.bench "$L" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ')
done > $o/combos.txt
s done
cat $o/log.txt
