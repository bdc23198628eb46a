#!/bin/bash
# Issue 15/18, the committed form (tiles 9 and 10 the 64-row ones; the Winograd products of 64 channels on tile 10):
# every float16 layer of BenchmarkConvolutionGPU with a 64-row GEMM, old (the session's start) and new, twice;
# ResNet-50's 1x1 256->64 without cooperative matrices; ResNet-18 float16 and float32 steps, old and new, twice.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run4; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_PASSES=1
for rep in 1 2; do for b in ops.test.old ops.test; do
  s "convs $rep $b"
  echo "== $rep $b" >> $O/convs.txt
  VKMPS_BENCH_SHAPES='^(resnet3x3-64|stem7x7s2|resnet3x3s2-128|resnet1x1s2-128|resnet50-1x1-256-64)$' timeout 100 $B/$b -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/convs.txt 2>&1
done; done
s "r50 coopmat=0"
echo "== coopmat=0" >> $O/convs.txt
VKMPS_GEMM=coopmat=0 VKMPS_BENCH_SHAPES='^resnet50-1x1-256-64$' timeout 100 $B/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/convs.txt 2>&1
for dt in float16 float32; do for rep in 1 2; do for b in vkmps.old vkmps; do
  s "resnet $dt $rep $b"
  timeout 100 $B/$b train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype $dt --json $O/resnet_${dt}_${b}_$rep.json > $O/resnet_${dt}_${b}_$rep.txt 2>&1
done; done; done
s done
grep -E '^==|gpu-us' $O/convs.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
for f in $O/resnet_*.json; do python3 -c "import json; d=json.load(open('$f')); print('$f'.split('/')[-1], round(d['ms_per_step'],4), round(d['gpu_ms_per_step'],4))" >> $O/summary.txt; done
cd $OUT && tar czf run4.tgz run4
