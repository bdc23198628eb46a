#!/bin/bash
# run 8 (6d29956): tests; the weight output transform's coalesced stores against ea37d6c (ops_base), 3x3 dW float32/float16;
# vkmps bench --conv with PyTorch's layers in the same run; ResNet-18 steps, vkmps and PyTorch
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'Winograd|TestConvolutionTuning|TestConvolutionEveryPath|TestConvolutionCoopMatAgreesWithTiles' -test.count=1 > $O/tests.txt 2>&1; echo "exit $?" >> $O/tests.txt)
s wout
for b in ops_base ops; do for dt in float32 float16; do
  echo "== $b $dt" >> $O/wout.txt
  (cd ops && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$dt timeout 60 $B/$b.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet3x3-/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op|wout' >> $O/wout.txt)
done; done
s conv
timeout 120 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
s torch-train
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
s resnet
for dt in float32 float16; do
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done
s torch-resnet
timeout 90 python3 bench/torch_resnet18.py --steps 30 >> $O/torch_resnet18.jsonl 2>>$O/torch_resnet18.err
s done
