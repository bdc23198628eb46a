#!/bin/bash
# Strided data gradients over their phases' own taps (42a3ad4): tests on the H100, the stride-2 layers and the stem
# under the default and phasetaps=0 (the whole grid, as before), ResNet-18 steps.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s tests
(cd ops && timeout 90 $B/ops.test -test.run 'PhaseTaps|CoopMatAgrees|ConvolutionMatchesReference|ConvolutionTranspose' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:' | head -40 > $O/tests.txt)
s bench
for dt in float32 float16; do for tu in "" phasetaps=0; do
  echo "=== $dt $tu" >> $O/bench.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM=$tu timeout 40 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1s2|stem)' -test.benchtime 1x 2>&1 | grep -E 'dx.*ns/op|FAIL|panic' >> $O/bench.txt
done; done
s resnet
for dt in float32 float16; do
  timeout 40 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done
s done
