#!/usr/bin/env bash
# Run 8: the direct cooperative-matrix GEMM's quads decided per quad
# again (as run 5), its per-value fallback stepping the destinations from
# one pixelOf per accumulator; no condition in the shared epilogue: tests
# on the H200; float16 layers; ResNet-18 steps.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
s tests
(cd ops && timeout 100 $B/ops.test -test.run 'TestConvolutionCoopMatAgreesWithTiles|TestConvolutionIm2col|TestConvolutionWinogradCoopMat$' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s bench
(cd ops && VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1|resnet3x3-64)[^/]*/.*/fwd$' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ') > $o/coop.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float16 float32; do
  timeout 40 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
s done
tail -5 $o/tests.txt; grep 'per training step' $o/resnet18.txt; cat $o/log.txt
