#!/bin/bash
# 1x1 data gradients by columns (5c7d93a) and the fused batch normalization (96b97c4) against 199eacf (ops_base.test, vkmps_base):
# tests on the H100, 1x1 layers float32 and float16, batch normalization (fused against unfused chunk sizes), ResNet-18 steps, PyTorch.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s tests
(cd ops && timeout 120 $B/ops.test -test.run 'BatchNorm|CoopPacked|CoopMatAgrees|ConvolutionEveryPath|FullyConnected' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:' | head -40 > $O/tests.txt)
s bench
for dt in float32 float16; do for v in ops.test ops_base.test ops.test; do
  echo "=== $v $dt" >> $O/bench.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$dt timeout 100 $B/$v -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet1x1|gemm1x1)' -test.benchtime 1x 2>&1 | grep -E 'ns/op|FAIL|panic' >> $O/bench.txt
done; done
s bn
for dt in float32 float16; do
  echo "=== bn $dt" >> $O/bn.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_BN_SWEEP=1 VKMPS_BENCH_DTYPE=$dt timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkBatchNormalizationGPU' -test.benchtime 1x 2>&1 | grep -E 'ns/op|FAIL|panic' >> $O/bn.txt
done
s resnet
for i in 1 2; do for dt in float32 float16; do for v in vkmps vkmps_base; do
  timeout 60 $B/$v train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18_$v.jsonl 2>&1 | head -1 | sed "s/^/$v: /" >> $O/resnet18.txt
done; done; done
s torch
timeout 80 python3 bench/torch_resnet18.py --steps 30 >> $O/torch_resnet18.jsonl 2>>$O/torch_resnet18.err
s done
