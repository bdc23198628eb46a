#!/bin/bash
# Final measurement at the session's last code commit: tests on the H100, bench --conv with PyTorch, ResNet-18 steps with PyTorch.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps* 2>/dev/null
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s tests
(cd ops && timeout 200 $B/ops.test -test.run 'Winograd|CoopMat|ConvolutionTuningKeeps|ConvolutionPaths|ConvolutionDepthwise' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:' | head -40 > $O/tests.txt)
s conv
timeout 90 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
s torch-train
timeout 120 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
s resnet
for i in 1 2; do for dt in float32 float16; do
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done; done
s torch-resnet
for i in 1 2; do timeout 80 python3 bench/torch_resnet18.py --steps 30 >> $O/torch_resnet18.jsonl 2>>$O/torch_resnet18.err; done
s done
