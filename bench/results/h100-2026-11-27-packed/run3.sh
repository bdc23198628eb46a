#!/bin/bash
# Float16 weight gradients on cooperative matrices (d7aac0d) against 856be4c (ops_prev.test, vkmps_prev) and the session's start (vkmps_start, 84dd5d4):
# tests on the H100, the stem and 1x1 layers' float16 passes, ResNet-18 steps.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'CoopMatAgrees|CoopPacked|WinogradCoop|ConvolutionMatchesReference|ConvolutionTorch|BatchNorm|FullyConnected' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:' | head -40 > $O/tests.txt)
s bench
for v in ops.test ops_prev.test ops.test ops_prev.test; do
  echo "=== $v" >> $O/bench.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 100 $B/$v -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(stem|resnet1x1|gemm1x1)' -test.benchtime 1x 2>&1 | grep -E 'ns/op|FAIL|panic' >> $O/bench.txt
done
echo "=== ops.test cooptile=0" >> $O/bench.txt
VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_GEMM=cooptile=0 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(stem|resnet1x1|gemm1x1)' -test.benchtime 1x 2>&1 | grep -E 'dW.*ns/op|FAIL|panic' >> $O/bench.txt
echo "=== ops.test cooptile=3" >> $O/bench.txt
VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_GEMM=cooptile=3 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(stem|resnet1x1|gemm1x1)' -test.benchtime 1x 2>&1 | grep -E 'dW.*ns/op|FAIL|panic' >> $O/bench.txt
s prof
VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(stem|resnet1x1-512-2048)' -test.benchtime 1x -test.v > $O/prof.txt 2>&1
s resnet
for i in 1 2; do for dt in float16 float32; do for v in vkmps vkmps_prev vkmps_start; do
  timeout 60 $B/$v train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18_$v.jsonl > $O/t.txt 2>&1
  head -1 $O/t.txt | sed "s/^/$v: /" >> $O/resnet18.txt
done; done; done
rm -f $O/t.txt
s done
