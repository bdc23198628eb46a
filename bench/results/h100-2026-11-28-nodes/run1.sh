#!/usr/bin/env bash
# Run 1: per-node profiles of ResNet-18's training step (float32, float16,
# float32 with a scratch per kernel) and cuDNN's time per ResNet-18
# convolution layer (bench/torch_resnet18_convs.py), same call.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; gunzip -f .devbuild/*.gz
o=$OUT/r; mkdir -p $o; trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $o/gpu.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do
  .devbuild/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
.devbuild/vkmps train synthetic $m $a --dtype float32 --scratch-per-kernel --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
python3 bench/torch_resnet18_convs.py --iters 30 > $o/torch_convs.jsonl 2> $o/torch_convs.err
python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
cat $o/resnet18.txt | grep -v '^  ' ; cat $o/torch_convs.jsonl | grep total; cat $o/torch_resnet18.jsonl | cut -c1-300
