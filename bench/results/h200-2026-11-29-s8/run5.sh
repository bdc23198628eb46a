#!/bin/bash
# The bias gradient (convolution_bias_grad.comp) with quads and positions stepped without divisions, old (the
# session's start) against new: the weight-gradient passes (dW with db) of every BenchmarkConvolutionGPU shape
# but the fully connected ones, float16 and float32, twice, with dispatch profiles.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run5; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1
for dt in float16 float32; do for rep in 1 2; do for b in ops.test.old ops.test; do
  s "$dt $rep $b"
  echo "== $dt $rep $b" >> $O/dw.txt
  VKMPS_BENCH_DTYPE=$dt VKMPS_BENCH_SHAPES='^(stem7x7s2|resnet3x3-64|resnet3x3-128|resnet3x3-512|resnet1x1-512-2048|vgg3x3-128|depthwise3x3-256|resnet3x3s2-128)' timeout 100 $B/$b -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/dW' -test.benchtime 1x >> $O/dw.txt 2>&1
done; done; done
s done
grep -E '^==|gpu-us|bias_grad' $O/dw.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
cd $OUT && tar czf run5.tgz run5
