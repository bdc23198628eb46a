#!/bin/bash
# Issue 15: (a) the Winograd products of 64 channels (3x3 64@56) on each cooperative-matrix tile, and the direct
# paths without Winograd; (b) the 64-row GEMMs' new default (convCoopRowsTile) against the session's start (old) on
# the stem, the 64->128 stride-2 layers and ResNet-50's 1x1 256->64; (c) ResNet-18 float16 steps, old and new, twice.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run2; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_PASSES=1
for t in "" winograd=1,cooptile=0 winograd=1,cooptile=2 winograd=1,cooptile=7 winograd=1,cooptile=9 winograd=1,cooptile=10 winograd=1,cooptile=12 winograd=0 winograd=0,coopmat=0; do
  s "wino '$t'"
  echo "== '$t'" >> $O/wino.txt
  VKMPS_GEMM=$t VKMPS_BENCH_SHAPES='^resnet3x3-64$' timeout 100 $B/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/wino.txt 2>&1
done
for rep in 1 2; do for b in ops.test.old ops.test; do
  s "rows $rep $b"
  echo "== $rep $b" >> $O/rows.txt
  VKMPS_BENCH_SHAPES='^(stem7x7s2|resnet3x3s2-128|resnet1x1s2-128|resnet50-1x1-256-64)$' timeout 100 $B/$b -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/rows.txt 2>&1
done; done
for rep in 1 2; do for b in vkmps.old vkmps; do
  s "resnet $rep $b"
  timeout 100 $B/$b train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype float16 --json $O/resnet16_${b}_$rep.json > $O/resnet16_${b}_$rep.txt 2>&1
done; done
s done
grep -E '^==|gpu-us' $O/wino.txt $O/rows.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
grep -h -i 'ms' $O/resnet16_*.txt | tail -20 >> $O/summary.txt
