#!/bin/bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
cd .devbuild
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
(cd ../ops && ../.devbuild/ops.test -test.run 'TestConvolutionWinograd|TestConvolutionMatchesReference|TestConvolutionTorch|TestConvolutionEveryPath' -test.v 2>&1 | grep -E "^(--- |ok|FAIL|PASS)|differ|panic") > $OUT/tests.txt
./wino.sh > $OUT/wino.txt 2>&1
for v in vkmps_base vkmps; do for dt in float32 float16; do
  echo "### $v $dt" >> $OUT/resnet18.txt
  ./$v train synthetic models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 20 --dtype $dt --json $OUT/resnet18_$v.jsonl >> $OUT/resnet18.txt 2>&1
done; done
python3 torch_training_baseline.py --iters 20 > $OUT/torch_training.jsonl 2>&1
