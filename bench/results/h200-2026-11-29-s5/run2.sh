#!/usr/bin/env bash
# Run 2: the direct kernel for forwards of few input channels
# (glsl/convolution_forward_small.comp; ops.test, vkmps) against f391e37
# (ops_old.test, vkmps_old) on the ResNet stem, float32 and float16, the
# builds alternating twice, the new build also under small=0 (the GEMM);
# its dispatch profile; the stem's weight gradient under split counts
# (VKMPS_BENCH_SHAPES, new); ResNet-18 steps of both builds, alternating.
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
for d in float32 float16; do for r in 1 2; do bench ops_old.test "" $d fwd; bench ops.test "" $d fwd; done; bench ops.test small=0 $d fwd; done > $o/fwd.txt
s dw
for t in "" splits=44 splits=132 splits=176 splits=264 splits=352 splits=528 "tile=1,splits=132" "tile=1,splits=264" "tile=3,splits=528"; do bench ops.test "$t" float32 dW; done > $o/dw32.txt
for t in "" splits=132 splits=264 splits=528 splits=700 "coopmat=1,cooptile=0,splits=264" "coopmat=1,cooptile=2,splits=264" "coopmat=1,cooptile=1,splits=264"; do bench ops.test "$t" float16 dW; done > $o/dw16.txt
s prof
for d in float32 float16; do
  (cd ops && VKMPS_BENCH_SHAPES=stem7x7s2 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/stem' -test.benchtime 1x -test.count 1 -test.v > $o/prof_$d.txt 2>&1)
done
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for v in vkmps_old vkmps; do for d in float32 float16; do
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s done
cat $o/log.txt; for f in $o/fwd.txt $o/dw32.txt $o/dw16.txt; do echo "## $f"; grep -E '^==|gpu-us|rror|anic|exceed' $f | sed -E 's/BenchmarkConvolutionGPU.//; s/ +1 +/ /' ; done; grep -E "gpu-us|^ +[0-9.]+ us" $o/prof_*.txt | sed -E 's/BenchmarkConvolutionGPU.//'; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//'
