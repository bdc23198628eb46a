#!/usr/bin/env bash
# Run 2: where the cooperative-matrix GEMM's time goes. Three builds of
# 1b388da's ops.test: as committed (ops.test), with the epilogue skipped
# at run time (ops_skipepi.test: convolution_gemm_coopmat.comp returns
# after gemmRun) and with the products taken out (ops_skipmma.test:
# COOP_MULADD empty; staging and epilogue kept). Float16 forward and data
# gradient of the layers that run on the cooperative-matrix GEMM by
# default, and the stem forced onto it (coopmat=1); dispatch profiles of
# the committed build.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # binary tuning shapes passes
  echo "== $1 ${2:-default}"
  (cd ops && VKMPS_GEMM=$2 VKMPS_BENCH_SHAPES="$3" VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_LARGE=1 timeout 100 $B/$1 -test.run '^$' -test.bench "BenchmarkConvolutionGPU/.*/.*/$4\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
s gemm
for r in 1 2; do for b in ops.test ops_skipepi.test ops_skipmma.test; do
  bench $b "" '^(resnet1x1-512-2048|resnet1x1-512-512|resnet3x3s2-256|resnet3x3s2-512|gemm1x1-1024)$' '(fwd|dx)'
  bench $b coopmat=1 '^stem7x7s2$' fwd
done; done > $o/split.txt
s prof
(cd ops && VKMPS_BENCH_PASSES=1 VKMPS_BENCH_SHAPES='^(resnet1x1-512-2048|resnet3x3s2-512|gemm1x1-1024)$' VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_LARGE=1 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/.*/.*/(fwd|dx)$' -test.benchtime 1x -test.count 1 -test.v > $o/prof.txt 2>&1)
s done
cat $o/log.txt; python3 .devbuild/configs_table.py $o/split.txt 2>&1 | head -40
