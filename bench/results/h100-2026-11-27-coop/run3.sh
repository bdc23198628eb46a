#!/bin/bash
# Winograd weight-gradient products with V quads along k (ops.test) against without (ops_base.test); tests on the H100; conv bench + PyTorch; ResNet-18 new/base builds + PyTorch; coop pipeline statistics.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s dw
cd ops
for i in 1 2; do for b in ops_base ops; do
  echo "== $b $i" >> $O/dw_products.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_PASSES=1 timeout 60 $B/$b.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E "gpu-us|winograd_coopmat" >> $O/dw_products.txt
done; done
s tests
timeout 150 $B/ops.test -test.run 'WinogradCoop|CoopMat|ConvolutionPaths|Pointwise' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:' | head -40 > $O/tests.txt
s stats
VKMPS_CONV_STATS=1 timeout 60 $B/ops.test -test.run TestConvPipelineStatistics -test.v > $O/conv_stats.txt 2>&1
cd ..
s conv
timeout 90 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
s torch-train
timeout 120 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
s resnet
for v in vkmps vkmps_base vkmps; do for dt in float16 float32; do
  echo "== $v $dt" >> $O/resnet18.txt
  timeout 60 $B/$v train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18_$v.jsonl >> $O/resnet18.txt 2>&1
done; done
s torch-resnet
for i in 1 2; do timeout 80 python3 bench/torch_resnet18.py --steps 30 >> $O/torch_resnet18.jsonl 2>>$O/torch_resnet18.err; done
s done
