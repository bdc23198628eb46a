#!/bin/bash
# run 3: Winograd products' quad stores as a specialization constant (VEC_C): default (on) against winoquads=0, float32 3x3 layers; statistics
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s stats
(cd ops && VKMPS_CONV_STATS=1 timeout 60 $B/ops.test -test.run TestConvPipelineStatistics -test.v 2>&1 | grep -A1 "Winograd" > $O/stats.txt)
s bench
for rep in 1 2; do for g in "" winoquads=0; do
  echo "== ops $g $rep" >> $O/bench.txt
  (cd ops && VKMPS_GEMM=$g VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3-|vgg)' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op|winograd_(gemm|coopmat)' >> $O/bench.txt)
done; done
s done
