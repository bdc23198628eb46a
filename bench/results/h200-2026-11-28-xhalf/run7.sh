#!/usr/bin/env bash
# Run 7: run 6's build again on a fresh machine (run 6's tensor-core
# kernels all ran about twice as slow, its other kernels did not): the
# GPU's clocks and throttle reasons before and after; the float16 layers
# on the direct cooperative-matrix GEMM; ResNet-18 steps.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > $o/smi_before.txt 2>&1
s bench
(cd ops && VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1|resnet3x3-64)[^/]*/.*/fwd$' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ') > $o/coop.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float16 float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
nvidia-smi -q -d CLOCK,POWER,PERFORMANCE > $o/smi_after.txt 2>&1
s done
grep 'per training step' $o/resnet18.txt; grep -A12 'Clocks Event Reasons\|Clocks Throttle' $o/smi_after.txt | head -14; grep -i 'SM  \|Power Draw\|Power Limit' $o/smi_after.txt | head -6; cat $o/log.txt
