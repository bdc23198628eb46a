#!/usr/bin/env bash
# Run 1: depthwise 3x3 layers (32x256x56x56, 32x512x14x14), float32 and
# float16: the weight gradient on quads and blocks of dy rows (this
# build) against the session's start (ops_old.test), and the forward and
# data gradients under strips of 8 and other row counts; split counts of
# the weight gradient; the copy bandwidth of the same machine.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s copy
timeout 60 $B/vkmps bench --ops avg --dtype float16 --shapes '32,256,56,56,3,1,1' --warmup 30ms --iters 10 --copy-mib 50 > $o/copy.txt 2>&1
s dw
bench() { # binary tuning dtype
  echo "== $1 [$2] $3"
  (cd ops && VKMPS_GEMM="$2" VKMPS_BENCH_DTYPE=$3 VKMPS_BENCH_LARGE=1 timeout 60 $B/$1 -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x -test.count 2 -test.v 2>&1 | grep -E 'ns/op' | sed -E 's/ +[0-9]+ ns\/op//')
}
for d in float32 float16; do
  bench ops_old.test "" $d
  for t in "" dwvec=0 dwrows=1 dwrows=2 dwrows=8 dwstrip=8 dwstrip=8,dwrows=2 dwstrip=8,dwrows=1 splits=4 splits=16 splits=32 dwrows=2,splits=16 dwrows=2,splits=32 dwrows=8,splits=32; do
    bench ops.test "$t" $d
  done
done > $o/dw.txt
s done
grep copy: $o/copy.txt; cat $o/log.txt
