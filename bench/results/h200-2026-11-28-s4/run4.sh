#!/usr/bin/env bash
# Run 4: ResNet-18 steps with the weight gradients recorded one node
# later on a scratch of their own (vkmps: the working tree after
# 44a7330), two and four nodes later (vkmps_d2, vkmps_d4), against
# 44a7330 (vkmps_old, also with --scratch-per-kernel), float32 and
# float16, alternating twice; PyTorch's step in the same call.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for v in "vkmps_old" "vkmps_old --scratch-per-kernel" vkmps vkmps_d2 vkmps_d4; do for d in float32 float16; do
  set -- $v
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$1 train synthetic $m $a --dtype $d ${2:-} --json $o/resnet18_$1${2:+_spk}.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s torch
timeout 100 python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
s done
grep -E '^==|per training step|commands' $o/resnet18.txt | paste - - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//; s/each step: inputs kept on the device, //'; cut -c1-160 $o/torch_resnet18.jsonl; cat $o/log.txt
