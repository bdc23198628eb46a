#!/bin/bash
# (1) The 128 x 112 float32 tile (tile 4, forced: tile=4) against tile 0 (forced) and the default on the GEMMs
# of 1568 columns (batch 32 at 7x7), float32, alternating twice (ops.test's BenchmarkConvolutionGPU).
# (2) Diagnostics: dilated max (2x2, dilation 2, stride 2) at 56x56 (output 27 wide) and 58x58 (28 wide)
# under tunings, float32 and float16, plain max beside it. (3) ResNet-18 steps with sgd, momentum, adam.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run1; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run1.tgz run1' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
for rep in 1 2; do for tune in "" tile=0 tile=4; do
  s "conv $rep tune=$tune"
  echo "== $rep tune=$tune" >> $O/tile.txt
  VKMPS_GEMM=$tune VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_SHAPES='^(resnet1x1-512-2048|resnet1x1-512-512|resnet1x1s2-512|resnet3x3-512)$' timeout 120 $B/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/tile.txt 2>&1
done; done
grep -E '^==|gpu-us' $O/tile.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/tile_summary.txt
SH="64,256,56,56,2,2,0,2;64,256,58,58,2,2,0,2"
for tune in "" oy=1 oy=2 ox=2 vw=2 wg=128 wg=64 pz=2 half=0 fastmax=0 vstore=0; do
  s "dilated tune=$tune"
  VKMPS_TUNE=$tune timeout 100 $B/vkmps bench --shapes "$SH" --ops dilated-max,max --dtype float32,float16 --warmup 30ms --iters 10 > "$O/dil.$tune.txt" 2>&1
done
for opt in sgd momentum adam; do for dt in float32 float16; do
  s "resnet $opt $dt"
  timeout 120 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --optimizer $opt > $O/resnet.$opt.$dt.txt 2>&1
done; done
s done
