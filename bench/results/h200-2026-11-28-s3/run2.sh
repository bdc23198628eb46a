#!/usr/bin/env bash
# Run 2: float16 depthwise 3x3 layers on 16-byte loads of 8 halves (strips
# of 8: this build's default where rows allow) under row counts and split
# counts, against strips of 4 on quads (dwstrip=4) and the session's
# start (ops_old.test); float32 again beside them.
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
s dw16
for t in "" dwrows=1 dwrows=2 dwrows=3 dwstrip=4 dwstrip=4,dwrows=2 splits=4 splits=16 dwrows=2,splits=16 dwrows=1,splits=16 dwrows=2,splits=4; do
  bench ops.test "$t" float16
done > $o/dw16.txt
bench ops_old.test "" float16 >> $o/dw16.txt
s dw32
for t in "" dwrows=2 dwstrip=8; do bench ops.test "$t" float32; done > $o/dw32.txt
bench ops_old.test "" float32 >> $o/dw32.txt
s done
cat $o/log.txt
