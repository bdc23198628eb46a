#!/usr/bin/env bash
# Run 5: two larger cooperative-matrix tiles (an experiment's tiles 9 and
# 10: 256x128x16 in 4x2 subgroups and 128x256x16 in 2x4, 40 KiB of shared
# memory, a third more products per staged byte than 128x128) against the
# defaults, float16: the layers on the cooperative-matrix GEMM, the 1x1
# GEMM at 28x28, VGG's forward forced onto the GEMM, and the Winograd
# products of the 3x3 layers.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # tuning shapes passes
  echo "== ${1:-default}"
  (cd ops && VKMPS_GEMM=$1 VKMPS_BENCH_SHAPES="$2" VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_LARGE=1 timeout 100 $B/ops_big.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/.*/.*/$3\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
G='^(resnet1x1-512-2048|resnet1x1-512-512|resnet3x3s2-128|resnet3x3s2-256|resnet3x3s2-512|gemm1x1-1024)$'
s gemm
for t in "" cooptile=9 cooptile=10 ""; do bench "$t" "$G" '(fwd|dx)'; done > $o/gemm.txt
for t in cooptile=3 cooptile=9 cooptile=10; do bench "$t" '^vgg3x3-128$' fwd; done >> $o/gemm.txt
s wino
for t in "" winograd=1,cooptile=9 winograd=1,cooptile=10 winograd=1,cooptile=3; do bench "$t" '^resnet3x3-(64|128|256|512)$' '(fwd|dx)'; done > $o/wino.txt
s stats
(cd ops && VKMPS_CONV_STATS=1 timeout 100 $B/ops_big.test -test.run TestConvPipelineStatistics -test.v > $o/conv_stats.txt 2>&1)
s done
cat $o/log.txt; python3 .devbuild/configs_table.py $o/gemm.txt 2>&1 | head -30; python3 .devbuild/configs_table.py $o/wino.txt 2>&1 | head -20
grep -A2 "float16 \(256x128\|128x256\|128x128x32/2x4\)" $o/conv_stats.txt | grep -E "float16|Register" | head -12
