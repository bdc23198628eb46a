#!/usr/bin/env bash
# Run 5: strided data gradients as a columns GEMM and col2im (col2im=1)
# against the phases, on the stride-2 layers (and their tile choices),
# tests on the H100, ResNet-18 steps with and without col2im=1.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; gunzip -f .devbuild/*.gz
o=$OUT/r; mkdir -p $o; trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $o/gpu.txt
timeout 100 .devbuild/ops.test -test.run 'TestConvolutionPhaseTaps|TestConvolutionCoopMatAgreesWithTiles' > $o/tests.txt 2>&1; echo "tests rc $?" >> $o/tests.txt
for d in float32 float16; do
  for t in "" col2im=1 col2im=1,coopmat=1 col2im=1,cooptile=2 col2im=1,cooptile=7 col2im=1,tile=1 col2im=1,tile=2 col2im=1,splits=2; do
    echo "== $d $t"; VKMPS_GEMM=$t VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$d .devbuild/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/(resnet3x3s2|resnet1x1s2)/.*/dx" -test.benchtime 1x -test.count 2 2>&1 | grep ns/op
  done
done > $o/dx.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for i in 1 2; do for d in float32 float16; do for t in "" col2im=1; do
  echo "== $d $t" >> $o/resnet18.txt
  .devbuild/vkmps train synthetic $m $a --dtype $d ${t:+--conv-tuning $t} --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1
done; done; done
tail -2 $o/tests.txt; grep -v '^  ' $o/resnet18.txt | grep -v "^device memory\|^its\|^GPU time\|^each"
