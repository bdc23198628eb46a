#!/usr/bin/env bash
# session 25 run 4: the cooperative matrices of 16x16x16 (coopshape=2, the shape NVIDIA lists first) against the
# default 16x8x16: tests on the GPU, ResNet-18 float16 steps alternating twice, float16 layers alternating twice.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b $OUT/r && for b in vkmps ops.test; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
trap 'cd $OUT && tar czf run4.tgz r && rm -rf r' EXIT
O=$OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $O/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $O/log.txt; }
el tests
(cd ops && timeout 60 /tmp/b/ops.test -test.run 'TestConvolutionCoopShape' -test.v > $O/tests.txt 2>&1; echo "rc $?" >> $O/tests.txt)
tail -3 $O/tests.txt | tee -a $O/log.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype float16"
for rep in 1 2; do for g in def s2; do
  el "resnet $rep $g"; G=""; [ $g = s2 ] && G="--conv-tuning coopshape=2"
  timeout 60 /tmp/b/vkmps train synthetic $m $a $G > $O/resnet_${rep}_${g}.txt 2>&1
done; done
grep -H 'per training step' $O/resnet_*.txt >> $O/log.txt
for rep in 1 2; do for g in def s2; do
  el "layers $rep $g"; G=""; [ $g = s2 ] && G=coopshape=2
  echo "== $rep $g" >> $O/layers.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet3x3-256|resnet3x3-512|resnet1x1-512-2048|stem7x7s2|vgg3x3-128|gemm1x1-1024|resnet3x3s2-256)$' timeout 80 /tmp/b/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/layers.txt 2>&1)
done; done
el done
