#!/usr/bin/env bash
# Run 5: the direct kernel (one input channel's window at a time) under
# forced shapes (an experiment build reading VKMPS_FS=ty,py,ocb; not
# committed): the stem forward in float32, and float16 on three.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # fs dtype
  echo "== ops [fs=$1] $2"
  (cd ops && VKMPS_FS="$1" VKMPS_BENCH_SHAPES=stem7x7s2 VKMPS_BENCH_DTYPE=$2 VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/stem7x7s2/.*/fwd\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
s fwd
for f in 16,4,16 16,4,8 16,4,4 16,2,16 16,2,8 16,1,16 8,4,16 8,2,16 8,1,16 16,3,8 "" ; do bench "$f" float32; done > $o/fwd.txt
for f in 16,2,16 16,2,8 16,4,8; do bench "$f" float16; done >> $o/fwd.txt
s done
cat $o/log.txt; for f in $o/fwd.txt; do echo "## $f"; grep -E '^==|gpu-us|rror|anic|exceed' $f | sed -E 's/BenchmarkConvolutionGPU.//; s/ +1 +/ /' ; done
