#!/usr/bin/env bash
# Run 4: split K's finishing pass (convolution_gemm.comp SPLITK 2) reading
# the partial sums through a readonly view of their binding: tests on the
# H200; float32 layers under forced splits and float16 layers by default
# (the cooperative-matrix splits), with dispatch profiles; ResNet-18 steps.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
b() { (cd ops && VKMPS_GEMM=$1 VKMPS_BENCH_DTYPE=${D:-float32} VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 timeout 120 $B/ops.test -test.run '^$' -test.bench "$2" -test.benchtime 1x -test.count ${C:-1} -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us '); }
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'TestConvolutionCoopMatAgreesWithTiles|TestConvolutionPhaseTaps|TestTuningKeeps' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s splits
L='BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1-512)[^/]*/.*/(fwd|dx)'
for t in "" "tile=0,splits=2" "tile=0,splits=3" "tile=1,splits=2" "splits=2" "splits=4"; do echo "== '$t'"; b "$t" "$L"; done > $o/splits32.txt
s f16
D=float16 C=2 b "" "$L" > $o/f16.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
s done
tail -4 $o/tests.txt; grep 'per training step' $o/resnet18.txt; cat $o/log.txt
