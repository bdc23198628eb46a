#!/usr/bin/env bash
# device call 1: convolution tunings, ResNet-18 steps, coop tests
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s coop-test
(cd ops && timeout 90 $B/ops.test -test.run 'TestConvolutionWinogradCoop' -test.v 2>&1 | grep -E '^(=== RUN|--- |\s+---|ok|FAIL|PASS|panic)|rror|skip' | head -60) > $O/cooptest.txt
s conv-bench-default
timeout 120 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv_default.jsonl > $O/conv_default.txt 2>&1
s torch-conv
timeout 100 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_train.jsonl 2>$O/torch_train.err
s conv-bench-winocoop
timeout 60 $B/vkmps bench --conv --dtype float16 --conv-tuning winocoop=1 --json $O/conv_winocoop.jsonl > $O/conv_winocoop.txt 2>&1
s conv-bench-winocoop3
timeout 60 $B/vkmps bench --conv --dtype float16 --conv-tuning winocoop=1,cooptile=3 --json $O/conv_winocoop3.jsonl > $O/conv_winocoop3.txt 2>&1
s resnet
for dt in float32 float16; do for tu in "" winocoop=1 winocoop=1,cooptile=3; do
  [ $dt = float32 ] && [ -n "$tu" ] && continue
  echo "### $dt '$tu'" >> $O/resnet18.txt
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --conv-tuning "$tu" --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done; done
echo "### float16 scratch-per-kernel" >> $O/resnet18.txt
timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype float16 --scratch-per-kernel --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
s torch-resnet
timeout 80 python3 bench/torch_resnet18.py --steps 30 > $O/torch_resnet18.jsonl 2>$O/torch_resnet18.err
s done
