#!/usr/bin/env bash
# Run 5: image GEMMs on the tiles from windows of several taps, 1024 deep
# or more, with fewer than two workgroups of tile 1 per multiprocessor
# split K in two on tile 1 by default (tiledImageSplits): tests on the
# H200; the float32 stride-2 layers by default, and the 3x3 layers at
# 14x14 and 7x7 on the GEMM path (winograd=0) by default, on tile 2 and
# tile 1 unsplit; ResNet-18 steps (float32, float16, twice each) and
# PyTorch's step.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
b() { (cd ops && VKMPS_GEMM=$1 VKMPS_BENCH_DTYPE=${D:-float32} VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 timeout 120 $B/ops.test -test.run '^$' -test.bench "$2" -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us '); }
s tests
(cd ops && timeout 120 $B/ops.test -test.run 'TestConvolutionTiledSplitDefault|TestConvolutionCol2imDefault|TestConvolutionEveryPath' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s layers
b "" 'BenchmarkConvolutionGPU/resnet3x3s2[^/]*/.*/fwd' > $o/s2.txt
for t in "winograd=0" "winograd=0,tile=2" "winograd=0,tile=1"; do echo "== '$t'"; b "$t" 'BenchmarkConvolutionGPU/resnet3x3-(256|512)/.*/fwd'; done > $o/gemm3x3.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16 float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
timeout 100 python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
s done
tail -4 $o/tests.txt; grep 'per training step' $o/resnet18.txt; cut -c1-150 $o/torch_resnet18.jsonl; cat $o/log.txt
