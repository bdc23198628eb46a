#!/usr/bin/env bash
# Run 6: the direct cooperative-matrix GEMM's quads only where the whole
# destination takes them (gemmQuads), else its former per-value stores:
# tests on the H200; the float16 layers on that GEMM by default and under
# im2col=1 (and cooptile=0); ResNet-18 steps.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
s tests
(cd ops && timeout 200 $B/ops.test -test.run 'TestConvolutionCoopMatAgreesWithTiles|TestConvolutionIm2col|TestConvolutionCoopPacked|TestConvolutionWinogradCoopMat$|TestConvolutionPhaseTaps' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s bench
for t in "" "im2col=1" "im2col=1,cooptile=0"; do
  echo "== '$t'"; (cd ops && VKMPS_GEMM=$t VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1)[^/]*/.*/fwd$' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ')
done > $o/coop.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float16 float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
s done
cat $o/tests.txt | tail -8; grep 'per training step' $o/resnet18.txt; cat $o/log.txt
