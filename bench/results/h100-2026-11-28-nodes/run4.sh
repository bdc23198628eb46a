#!/usr/bin/env bash
# Run 4: 40894c6 + the resident inputs (this tree) against the session's
# start (vkmps_base, df39b62): tests on the H100, the stride-2 layers by
# default, ResNet-18 steps (inputs resident and --upload) of both builds
# twice, PyTorch's step twice.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; gunzip -f .devbuild/*.gz
o=$OUT/r; mkdir -p $o; trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $o/gpu.txt
timeout 150 .devbuild/ops.test -test.run 'TestConvolutionPhaseTaps|TestConvolutionCoopMatAgreesWithTiles|TestConvChoice|TestPhaseSplit|TestConvolutionTorch' > $o/tests.txt 2>&1; echo "tests rc $?" >> $o/tests.txt
for d in float32 float16; do
  echo "== $d"; VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$d .devbuild/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/resnet3x3s2" -test.benchtime 1x -test.count 2 2>&1 | grep ns/op
done > $o/s2.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for i in 1 2; do for d in float32 float16; do
  for v in "vkmps" "vkmps --upload" "vkmps_base"; do
    set -- $v
    echo "== $v $d" >> $o/resnet18.txt
    .devbuild/$1 train synthetic $m $a --dtype $d ${2:-} --json $o/resnet18_$1${2:-}.jsonl >> $o/resnet18.txt 2>&1
  done
done; done
for i in 1 2; do python3 bench/torch_resnet18.py --steps 30 >> $o/torch_resnet18.jsonl 2>> $o/torch_resnet18.err; done
tail -2 $o/tests.txt; grep -v '^  ' $o/resnet18.txt | grep -v "^device memory\|^its\|^GPU time"; cut -c1-200 $o/torch_resnet18.jsonl
