#!/usr/bin/env bash
# Run 3: the cooperative-matrix GEMM with its loads two slices ahead
# (ops_pf2.test: gemm_coopmat.glsl's GEMM_PREFETCH2 experiment, a second
# register set, convolution_gemm_coopmat.comp only) against 1b388da
# (ops.test), alternating twice; float16 forward and data gradient of the
# layers on the cooperative-matrix GEMM, the stem forced onto it, and the
# 1x1 weight gradients.
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
for r in 1 2; do for b in ops.test ops_pf2.test; do
  bench $b "" '^(resnet1x1-512-2048|resnet1x1-512-512|resnet3x3s2-128|resnet3x3s2-256|resnet3x3s2-512|resnet1x1s2-.*|gemm1x1-1024)$' '(fwd|dx)'
  bench $b coopmat=1 '^stem7x7s2$' fwd
  bench $b cooptile=3 '^vgg3x3-128$' fwd
done; done > $o/pf2.txt
s done
cat $o/log.txt; python3 .devbuild/configs_table.py $o/pf2.txt 2>&1 | head -40
