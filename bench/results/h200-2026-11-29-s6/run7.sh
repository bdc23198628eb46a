#!/usr/bin/env bash
# Run 7: ResNet-18's classifier (fully connected 512 -> 1000 at batch 32;
# 42 and 53 µs forward and data gradient in the step's profile) by
# default with dispatch profiles, and under split counts and tiles;
# float32 and float16 (3811a73 with the benchmark shape).
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # tuning dtype
  echo "== ${1:-default} $2"
  (cd ops && VKMPS_GEMM=$1 VKMPS_BENCH_SHAPES='^resnet-fc512-1000$' VKMPS_BENCH_DTYPE=$2 VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/.*/.*/.*\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
s fc
for d in float32 float16; do for t in "" splits=2 splits=4 splits=8 splits=16 splits=32 tile=0 tile=1 tile=2 tile=3 tile=3,splits=8 tile=3,splits=16 direct=1; do bench "$t" $d; done; done > $o/fc.txt
for d in float32 float16; do
  (cd ops && VKMPS_BENCH_PASSES=1 VKMPS_BENCH_SHAPES='^resnet-fc512-1000$' VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/.*/.*/.*$' -test.benchtime 1x -test.count 1 -test.v > $o/prof_$d.txt 2>&1)
done
s done
cat $o/log.txt; python3 .devbuild/configs_table.py $o/fc.txt 2>&1 | cut -c1-400 | head -20; grep -E "profile|  us  " $o/prof_*.txt | head -30
