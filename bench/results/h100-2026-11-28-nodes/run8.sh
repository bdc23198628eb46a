#!/usr/bin/env bash
# Run 8: the session's defaults (col2im for the 3x3 stride-2 gradients of
# 128 channels or more): the stride-2 data gradients, ResNet-18 steps,
# PyTorch's step, same call.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; gunzip -f .devbuild/*.gz
o=$OUT/r; mkdir -p $o; trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $o/gpu.txt
for d in float32 float16; do
  echo "== $d"; VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$d .devbuild/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1s2)" -test.benchtime 1x -test.count 2 2>&1 | grep ns/op
done > $o/s2.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do
  .devbuild/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
grep -v '^  ' $o/resnet18.txt | grep -v "^device memory\|^its\|^GPU time"; cut -c1-160 $o/torch_resnet18.jsonl
