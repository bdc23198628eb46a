#!/usr/bin/env bash
# Run 5: the direct cooperative-matrix GEMM's epilogue stores quads
# (convolution_gemm_coopmat.comp's gemmStoreC4), with run 3's Winograd
# defaults and the im2col tuning: tests on the H200; float16 layers on
# the direct cooperative-matrix GEMM with profiles; the convolution table
# against cuDNN; ResNet-18 steps (float32, float16) and PyTorch's.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
s tests
(cd ops && timeout 200 $B/ops.test -test.run 'TestConvolutionCoopMatAgreesWithTiles|TestConvolutionIm2col|TestConvolutionCoopPacked|TestConvolutionCol2imDefault|TestConvolutionWinogradCoop' -test.v 2>&1 | grep -E '^(--- |ok|FAIL|PASS)|^\s+--- (FAIL|SKIP)|Error' > $o/tests.txt)
s bench
for t in "" "im2col=1,cooptile=0" "im2col=1,cooptile=3"; do
  echo "== '$t'"; (cd ops && VKMPS_GEMM=$t VKMPS_BENCH_PASSES=1 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(stem|resnet3x3s2|resnet1x1)[^/]*/' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op|^\s+[0-9.]+ us ')
done > $o/coop.txt
s conv
timeout 150 $B/vkmps bench --conv --dtype float32,float16 --json $o/conv.jsonl > $o/conv.txt 2>&1
s torch-train
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $o/torch_training.jsonl 2>$o/torch_training.err
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16 float32 float16; do
  timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done
timeout 100 python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
s done
cat $o/tests.txt | tail -8; grep 'per training step' $o/resnet18.txt; cut -c1-200 $o/torch_resnet18.jsonl; cat $o/log.txt
