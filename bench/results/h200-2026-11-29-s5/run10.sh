#!/usr/bin/env bash
# Run 10: a neuron's gradient adding the two contributions to its dy itself
# (no sum node: NeuronGradientOp.SumDy, ops.NeuronGradient.EncodeSum; vkmps) against 910ebb5
# (vkmps_old): ResNet-18 steps, float32 and float16, alternating twice;
# every node's profile in the --json lines.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for v in vkmps_old vkmps; do for d in float32 float16; do
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s done
cat $o/log.txt; grep -E '^==|barriers|device memory' $o/resnet18.txt | head -12; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//'
