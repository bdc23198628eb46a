#!/usr/bin/env bash
# Run 3: the phases split by tap and the stride-2 rules (this tree)
# against the session's start (vkmps_base): the cooperative-matrix and
# phase tests on the H100, the stride-2 layers under tapsplit=0/1 and
# splits=N, ResNet-18 steps of both builds, PyTorch's step.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; gunzip -f .devbuild/*.gz
o=$OUT/r; mkdir -p $o; trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $o/gpu.txt
timeout 120 .devbuild/ops.test -test.run 'TestConvolutionPhaseTaps|TestConvolutionCoopMatAgreesWithTiles|TestConvChoice|TestPhaseSplit' > $o/tests.txt 2>&1; echo "tests rc $?" >> $o/tests.txt
b() { VKMPS_BENCH_LARGE=1 .devbuild/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/$1" -test.benchtime 1x -test.count 2 "${@:2}"; }
for d in float32 float16; do
  for t in "" tapsplit=0 tapsplit=1 splits=2 splits=4; do
    echo "== $d $t"; VKMPS_GEMM=$t VKMPS_BENCH_DTYPE=$d b 'resnet3x3s2' 2>&1 | grep ns/op
  done
done > $o/s2.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for bin in vkmps vkmps_base vkmps vkmps_base; do for d in float32 float16; do
  echo "== $bin $d" >> $o/resnet18.txt
  .devbuild/$bin train synthetic $m $a --dtype $d --json $o/resnet18_$bin.jsonl >> $o/resnet18.txt 2>&1
done; done
python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.jsonl 2> $o/torch_resnet18.err
tail -3 $o/tests.txt; grep -v '^  ' $o/resnet18.txt | grep -v "^device memory\|^its\|^GPU time"; cut -c1-200 $o/torch_resnet18.jsonl
