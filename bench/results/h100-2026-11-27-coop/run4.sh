#!/bin/bash
# One A matrix live in gemm_coopmat.glsl's multiply (ops.test) against all FM (ops_base.test): registers, and float16 layers under four settings.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps* 2>/dev/null
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
cd ops
for b in ops_base ops; do
  s stats $b
  VKMPS_CONV_STATS=1 timeout 60 $B/$b.test -test.run TestConvPipelineStatistics -test.v > $O/stats_$b.txt 2>&1
done
for i in 1 2; do for b in ops_base ops; do for g in "" winograd=0 cooptile=7 winograd=1,cooptile=7; do
  s bench $b $g
  echo "== $b $i $g" >> $O/bench.txt
  VKMPS_GEMM=$g VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 timeout 60 $B/$b.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet(3x3|1x1)' -test.benchtime 1x 2>&1 | grep -E "gpu-us" >> $O/bench.txt
done; done; done
s done
