#!/bin/bash
# Float16 weight gradients of 1x1 windows on the tile their rows and columns fill (convWeightsCoopTile), and the
# 1x1 data gradients by columns on tile 7 where the default was tile 2: ResNet-50's and ResNet-18's 1x1 layers and
# the stem, old (566f588) and new, twice; the 1x1 stride-2 64 -> 128 weight gradient on tiles 0, 1, 3.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run10; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run10.tgz run10' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16
for rep in 1 2; do for b in ops.test.old ops.test; do
  s "$rep $b"
  echo "== $rep $b" >> $O/w.txt
  VKMPS_BENCH_SHAPES='^(resnet50-1x1-.*|resnet1x1s2-.*|stem7x7s2|resnet1x1-512-.*)$' timeout 120 $B/$b -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/(dW|dx)' -test.benchtime 1x >> $O/w.txt 2>&1
done; done
for t in cooptile=0 cooptile=1 cooptile=3; do
  s "$t"
  echo "== $t" >> $O/w.txt
  VKMPS_GEMM=$t VKMPS_BENCH_SHAPES='^resnet1x1s2-128$' timeout 60 $B/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/dW' -test.benchtime 1x >> $O/w.txt 2>&1
done
s done
grep -E '^==|gpu-us' $O/w.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
