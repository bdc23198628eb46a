#!/usr/bin/env bash
# Run 6 (9b95713): the copy shader's time at the traffic of issue 21's two
# large pooling shapes (32, 64 and 128 MiB buffers: 64, 128 and 256 MiB
# moved; the max 3x3/2 forward at 112x112 moves 64 MB in float16 and 128
# in float32, the 2x2/2 at 56x56 128 and 257), beside the pooling kernels
# in the same process; the convolution table against cuDNN again; a
# ResNet-18 step of each type and PyTorch's, for the spread between calls.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
s copy
for mib in 32 64 128; do
  timeout 60 $B/vkmps bench --ops max,avg --dtype float32,float16 --shapes '32,64,112,112,3,2,1;64,256,56,56,2,2,0' --warmup 30ms --iters 10 --repeat 2 --copy-mib $mib --json $o/pool_copy$mib.jsonl > $o/pool_copy$mib.txt 2>&1
done
s conv
timeout 150 $B/vkmps bench --conv --dtype float32,float16 --json $o/conv.jsonl > $o/conv.txt 2>&1
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $o/torch_training.jsonl 2>$o/torch_training.err
python3 bench/compare_conv.py $o/conv.jsonl $o/torch_training.jsonl > $o/conv_compare.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
timeout 100 python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
s done
grep -i "copy" $o/pool_copy*.txt | head; grep 'per training step' $o/resnet18.txt; cut -c1-150 $o/torch_resnet18.jsonl; cat $o/log.txt
