#!/usr/bin/env bash
# Run 8: the session's result. vkmps_new: 3811a73 with the fully
# connected split (fewTileSplits; its commit) against vkmps_old, c2f8d13
# (the session's start): ResNet-18 steps, float32 and float16, the
# builds alternating twice; PyTorch's step in the same call; the
# classifier's passes by default (ops.test of the new tree).
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s fc
for d in float32 float16; do echo "== default $d"; (cd ops && VKMPS_BENCH_SHAPES='^resnet-fc512-1000$' VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/.*/.*/.*$' -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic' | sed -E 's/ +[0-9]+ ns\/op//'); done > $o/fc.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for v in vkmps_old vkmps_new; do for d in float32 float16; do
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s torch
python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.txt 2>&1
s done
cat $o/log.txt; cat $o/fc.txt; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//; s/, loss.*//'
grep -E '^==|^  fully_connected' $o/resnet18.txt | paste - - - - | head -4
grep resnet18-step $o/torch_resnet18.txt | cut -c1-200
