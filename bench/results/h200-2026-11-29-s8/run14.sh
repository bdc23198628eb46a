#!/bin/bash
# col2im by cells (convolution_col2im.comp) against the pass by dx pixel (prev: the commit before): the 3x3
# stride-2 data gradients of 128 and 256 input channels, float16 and float32, with dispatch profiles; ResNet-18
# steps of both types, prev and new.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run14; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run14.tgz run14' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1
for dt in float16 float32; do for b in ops.test.prev ops.test; do
  s "$dt $b"
  echo "== $dt $b" >> $O/dx.txt
  VKMPS_BENCH_DTYPE=$dt VKMPS_BENCH_SHAPES='^(resnet3x3s2-256|resnet3x3s2-512)$' timeout 40 $B/$b -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/dx' -test.benchtime 1x >> $O/dx.txt 2>&1
done; done
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30"
for d in float16 float32; do for b in vkmps.prev vkmps; do
  s "resnet $d $b"
  timeout 40 $B/$b train synthetic $m $a --dtype $d --json $O/resnet18_$b.jsonl >> $O/resnet18_$b.txt 2>&1
done; done
s done
grep -E '^==|gpu-us|col2im|^ +[0-9.]+ us' $O/dx.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
