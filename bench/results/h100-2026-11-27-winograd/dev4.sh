#!/bin/bash
# Final H100 run: conv layers f32/f16 (default and winograd=0) against cuDNN in the same run;
# ResNet-18 steps, base (bcfb72b) and new, with SM clock and power sampled; PyTorch ResNet-18.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
cd .devbuild
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do for g in "" "winograd=0"; do
  echo "### dtype=$dt VKMPS_GEMM=$g"
  VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM=$g ./ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet|stem|vgg|depth)' -test.benchtime 1x 2>&1 | grep -E "gpu-us|FAIL|panic|Error"
done; done > $OUT/bench_conv.txt
python3 torch_training_baseline.py --iters 20 > $OUT/torch_training.jsonl 2>&1
for g in "" "winograd=1,tile=1" "winograd=1,tile=2" ""; do
  echo "### VGG alone VKMPS_GEMM=$g"
  VKMPS_GEMM=$g ./ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/vgg' -test.benchtime 1x 2>&1 | grep -E "gpu-us|FAIL|panic|Error"
done > $OUT/vgg_alone.txt
for v in vkmps_base vkmps; do for dt in float32 float16; do for steps in 20 5; do
  echo "### $v $dt steps=$steps" >> $OUT/resnet18.txt
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 100 > $OUT/clk_${v}_${dt}_$steps.csv &
  smi=$!
  ./$v train synthetic models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps $steps --dtype $dt --json $OUT/resnet18_$v.jsonl >> $OUT/resnet18.txt 2>&1
  kill $smi
done; done; done
python3 torch_resnet18.py --steps 20 > $OUT/torch_resnet18.jsonl 2>&1
cd $OUT && tar czf clocks.tgz clk_*.csv && rm clk_*.csv
