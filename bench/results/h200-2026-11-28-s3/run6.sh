#!/usr/bin/env bash
# Run 6 (the commit adding dwexact): the depthwise layers by default and
# with workgroups sized exactly to a plane's strips and rows (dwexact=1),
# float32 and float16; the driver's register counts of the depthwise
# pipelines and of the pooling passes (1x1 windows of max, average and
# L2-norm included); pooling with 1x1 windows under 8 halves a load on
# strips of 8 (VKMPS_TUNE=ox=8,vw=8) beside the defaults.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # binary tuning dtype
  echo "== $1 [$2] $3"
  (cd ops && VKMPS_GEMM="$2" VKMPS_BENCH_DTYPE=$3 VKMPS_BENCH_LARGE=1 timeout 60 $B/$1 -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op' | sed -E 's/ +[0-9]+ ns\/op//')
}
s dw
for d in float32 float16; do
  for t in "" dwexact=1; do bench ops.test "$t" $d; done
done > $o/dw.txt
s stats
(cd ops && VKMPS_CONV_STATS=1 timeout 120 $B/ops.test -test.run TestConvPipelineStatistics -test.v > $o/conv_stats.txt 2>&1)
(cd ops && VKMPS_POOL_STATS=1 timeout 120 $B/ops.test -test.run TestPoolPipelineStatistics -test.v > $o/pool_stats.txt 2>&1)
s pool
for t in "" ox=8,vw=8; do
  VKMPS_TUNE=$t timeout 60 $B/vkmps bench --ops avg,max,l2 --argmax=false --dtype float32,float16 --shapes '32,256,56,56,1,1,0;32,64,112,112,3,2,1' --warmup 30ms --iters 10 --repeat 2 --copy-mib 50 > $o/pool_$t.txt 2>&1
done
s done
grep -A2 "depthwise" $o/conv_stats.txt | grep -i "register\|depthwise" | head -20; cat $o/log.txt
