#!/usr/bin/env bash
# Run 4: the training commands' --argmax (max pooling records its argmax
# for the gradient; now the default) against --argmax=false: ResNet-18
# steps of each, float32 and float16, alternating twice; PyTorch's step.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for t in true false; do for d in float32 float16; do
  echo "== argmax=$t $d" >> $o/resnet18.txt
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --argmax=$t --json $o/resnet18_argmax_$t.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s torch
python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.txt 2>&1
s done
cat $o/log.txt; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//'
grep -E "^  (max|max-gradient|sum) " $o/resnet18.txt
tail -6 $o/torch_resnet18.txt
