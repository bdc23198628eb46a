#!/usr/bin/env bash
# Run 2: the weight gradients' tile 0 (its compile-time "t0" build) rated
# 0.9 instead of 0.066 in gemmTiles (the default then takes it for the
# stride-2 and 1x1 weight gradients); an experimental build with two
# 16-deep tiles (4: 128x128x16/8x8, 5: 64x128x16/4x8) forced on the image
# GEMMs (fwd, dx) with Winograd off; the float32 3x3 layers' dispatch
# profiles (Winograd transforms against products).
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
b() { (cd ops && VKMPS_GEMM=$1 VKMPS_BENCH_PASSES=${P:-0} VKMPS_BENCH_LARGE=1 timeout 120 $B/ops.test -test.run '^$' -test.bench "$2" -test.benchtime 1x -test.count ${C:-1} -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us '); }
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'TestConvolutionEveryPath|TestConvolutionWeightsHalf|TestConvolutionImageHalf|TestConvChoice' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s weights
for t in "" "tile=2"; do echo "== '$t'"; C=2 b "$t" 'BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1|stem7x7s2)[^/]*/.*/dW'; done > $o/weights.txt
for t in "tile=0" "tile=1" "tile=2"; do echo "== '$t'"; b "$t" 'BenchmarkConvolutionGPU/(vgg|resnet3x3-)[^/]*/.*/dW'; done >> $o/weights.txt
s tiles
for t in "" "tile=0" "tile=1" "tile=4" "tile=5" "winograd=0,tile=0" "winograd=0,tile=4" "winograd=0,tile=5" "winograd=0,tile=1" "winograd=0,tile=2"; do
  echo "== '$t'"; b "$t" 'BenchmarkConvolutionGPU/(gemm1x1|resnet3x3|resnet1x1|stem7x7s2|vgg)[^/]*/.*/(fwd|dx)'
done > $o/tiles.txt
s profiles
P=1 b "" 'BenchmarkConvolutionGPU/(resnet3x3-|vgg)[^/]*/' > $o/profiles.txt
s done
cat $o/tests.txt | tail -5; cat $o/log.txt
