#!/bin/bash
# The session's final measurement (5e8dfe8): vkmps bench --conv with PyTorch's layers, ResNet-18's stride-2 layers, ResNet-18 steps with PyTorch.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s conv
timeout 100 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
s torch-train
timeout 130 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
s s2
for dt in float32 float16; do
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$dt timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1s2)' -test.benchtime 1x 2>&1 | grep -E 'ns/op|FAIL|panic' >> $O/s2.txt
done
s resnet
for dt in float32 float16; do
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done
s torch-resnet
timeout 80 python3 bench/torch_resnet18.py --steps 30 >> $O/torch_resnet18.jsonl 2>>$O/torch_resnet18.err
s done
