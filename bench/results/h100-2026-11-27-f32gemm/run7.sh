#!/bin/bash
# run 7: CHANNELS_FAST transforms as 8x8 (channels x tiles) workgroups, against winocf=0, float32 dW; ResNet-18 steps
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s tests
(cd ops && timeout 120 $B/ops.test -test.run 'Winograd' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:' | head -20 > $O/tests.txt)
s bench
for rep in 1 2; do for g in "" winocf=0; do
  echo "== $g x" >> $O/bench.txt
  (cd ops && VKMPS_GEMM=$g VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3-|vgg)/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op| us  ' >> $O/bench.txt)
done; done
s resnet
for dt in float32 float16; do
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done
s done
