#!/usr/bin/env bash
# Run 3: the Winograd products on cooperative matrices store quads from
# their epilogue (gemmStoreC4), X as float32 by default or as halves
# (winoxhalf=1): tests on the H200; float16 3x3 layers (forward, data
# and weight gradients) both ways with dispatch profiles; ResNet-18
# float16 steps both ways, twice.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'TestConvolutionWinogradCoop|TestConvolutionCoopPacked' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s winograd
for t in "" "winoxhalf=1"; do
  echo "== '$t'"; (cd ops && VKMPS_GEMM=$t VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 150 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3-|vgg3x3)[^/]*/' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ')
done > $o/winograd.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype float16"
for t in "" "winoxhalf=1" "" "winoxhalf=1"; do
  timeout 60 $B/vkmps train synthetic $m $a ${t:+--conv-tuning $t} --json $o/resnet18.jsonl 2>&1 | grep -E 'per training step|tuning' >> $o/resnet18.txt
done
s done
cat $o/tests.txt | tail -5; grep -c ns/op $o/winograd.txt; cat $o/resnet18.txt $o/log.txt
