#!/usr/bin/env bash
# Run 5: dispatch profiles (VKMPS_BENCH_PASSES=1) of ResNet-18's
# convolution passes, float32 and float16 (the commit of run 4's vkmps):
# where the time of each pass goes.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
for d in float32 float16; do
  s $d
  (cd ops && VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 150 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet[13]|stem)' -test.benchtime 1x -test.count 1 -test.v > $o/prof_$d.txt 2>&1)
done
s done
grep -E 'gpu-us' $o/prof_float32.txt | head -3; cat $o/log.txt
