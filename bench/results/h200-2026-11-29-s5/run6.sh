#!/usr/bin/env bash
# Run 6: the 3x3 Winograd weight gradients (ResNet-18's stride-1 layers)
# under split counts of their products' tiles (splits=N), float32 and
# float16, a55a4fd; one dispatch profile of each default.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # shape tuning dtype
  echo "== ops [$2] $3"
  (cd ops && VKMPS_BENCH_SHAPES="^$1\$" VKMPS_GEMM="$2" VKMPS_BENCH_DTYPE=$3 VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/$1/.*/dW\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
s sweep
for d in float32 float16; do
  for sp in "" 4 7 10 14 21 28; do bench resnet3x3-64 "${sp:+splits=$sp}" $d; done
  for sp in "" 3 5 8 10 15; do bench resnet3x3-128 "${sp:+splits=$sp}" $d; done
  for sp in "" 1 2 3 4 6; do bench resnet3x3-256 "${sp:+splits=$sp}" $d; done
  for sp in "" 1 2 3 4; do bench resnet3x3-512 "${sp:+splits=$sp}" $d; done
done > $o/dw.txt
s prof
for d in float32 float16; do
  (cd ops && VKMPS_BENCH_SHAPES='^resnet3x3-' VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/.*/dW$' -test.benchtime 1x -test.count 1 -test.v > $o/prof_$d.txt 2>&1)
done
s done
cat $o/log.txt; grep -E '^==|gpu-us|rror|anic|exceed' $o/dw.txt | sed -E 's/BenchmarkConvolutionGPU.//; s/ +1 +/ /; s/\t+/ /g'; grep -E "gpu-us|^ +[0-9.]+ us" $o/prof_*.txt | sed -E 's/BenchmarkConvolutionGPU.//' | grep -E "gpu-us|gemm|coopmat"
