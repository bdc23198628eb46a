#!/bin/bash
# run 4: with quad stores (run 3's build): the Winograd weight gradients' tile and split choices, and the products' tiles for fwd/dx at 14x14 and 7x7
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s dw
for g in "" splits=1 splits=2 splits=3 splits=4 "winograd=1,tile=0" "winograd=1,tile=0,splits=1" "winograd=1,tile=1,splits=1" "winograd=1,tile=2" "winograd=1,tile=2,splits=1" "winograd=1,tile=3"; do
  echo "== $g x" >> $O/bench.txt
  (cd ops && VKMPS_GEMM=$g VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet3x3-/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op|winograd_gemm|reduce' >> $O/bench.txt)
done
s fwd
for g in "" "winograd=1,tile=0" "winograd=1,tile=2" "winograd=1,tile=3"; do
  echo "== $g x" >> $O/bench_fwd.txt
  (cd ops && VKMPS_GEMM=$g VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet3x3-(256|512)/.*/(fwd|dx)' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op|winograd_gemm' >> $O/bench_fwd.txt)
done
s done
