#!/usr/bin/env bash
# Run 3: ResNet-18 steps (44a7330) with the convolution kernels' shared
# scratch (the default) against a scratch per kernel
# (--scratch-per-kernel), float32 and float16, alternating twice.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for x in "" "--scratch-per-kernel"; do for d in float32 float16; do
  echo "== [$x] $d" >> $o/resnet18.txt
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d $x --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s done
grep -E '^==|per training step|commands' $o/resnet18.txt; cat $o/log.txt
