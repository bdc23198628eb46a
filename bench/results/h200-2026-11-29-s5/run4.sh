#!/usr/bin/env bash
# Run 4: the direct kernel, one input channel's window at a time, 4 pixels an
# invocation (16 x 16 x 4; ops.test) against f391e37 (ops_old.test):
# the stem forward, float32 and float16, alternating twice; its profile.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # binary tuning dtype pass
  echo "== $1 [$2] $3"
  (cd ops && VKMPS_BENCH_SHAPES=stem7x7s2 VKMPS_GEMM="$2" VKMPS_BENCH_DTYPE=$3 VKMPS_BENCH_LARGE=1 timeout 60 $B/$1 -test.run '^$' -test.bench "BenchmarkConvolutionGPU/stem7x7s2/.*/$4\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
s fwd
for d in float32 float16; do for r in 1 2; do bench ops_old.test "" $d fwd; bench ops.test "" $d fwd; done; done > $o/fwd.txt
s done
cat $o/log.txt; for f in $o/fwd.txt; do echo "## $f"; grep -E '^==|gpu-us|rror|anic|exceed' $f | sed -E 's/BenchmarkConvolutionGPU.//; s/ +1 +/ /' ; done
