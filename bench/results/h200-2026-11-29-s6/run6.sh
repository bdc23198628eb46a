#!/usr/bin/env bash
# Run 6: batch normalization's fused pass (one workgroup per channel:
# sums, merge and apply) on more layers, and larger workgroups. Builds of
# a4b5519 with bnFusedValues / the workgroup size: vkmps 8192 / 256 (as
# committed), vkmps_A 32768 / 256 (ResNet-18's 28x28 layers fused too),
# vkmps_B 32768 / 512, 8192 / 512, vkmps_D 131072 / 512 (every
# layer but the stem's). ResNet-18 steps, float32
# and float16, the builds alternating twice.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --warmup 500ms"
for r in 1 2; do for v in vkmps vkmps_A vkmps_B vkmps_D; do for d in float32 float16; do
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s done
cat $o/log.txt; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//; s/, loss.*//'
grep -E '^==|^  batch_norm' $o/resnet18.txt | paste - - - | head -12
