#!/bin/bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
cd .devbuild
(cd ../ops && ../.devbuild/ops.test -test.run 'TestConvolutionWinograd|TestConvolutionMatchesReference|TestConvolutionTorch|TestConvolutionEveryPath|TestConvolutionTranspose' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|differ|panic") > $OUT/tests.txt
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do for g in "" "winograd=0"; do
  echo "### dtype=$dt VKMPS_GEMM=$g"
  VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM=$g ./ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)[^/]*/.*/(fwd|dx|dW)$' -test.benchtime 1x 2>&1 | grep -E "gpu-us|FAIL|panic|Error"
done; done > $OUT/wino3.txt
for v in vkmps_base vkmps; do for dt in float32 float16; do
  echo "### $v $dt" >> $OUT/resnet18.txt
  ./$v train synthetic models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 20 --dtype $dt --json $OUT/resnet18_$v.jsonl >> $OUT/resnet18.txt 2>&1
done; done
python3 torch_resnet18.py --steps 20 > $OUT/torch_resnet18.jsonl 2>&1
