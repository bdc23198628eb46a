#!/usr/bin/env bash
# Run 1: the ResNet stem (32x3x224x224, 7x7/2 -> 64) under tunings:
# forward and weight gradient, float32 and float16 (f391e37), with
# dispatch profiles of the defaults; ResNet-18 steps for reference.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # tuning dtype pass
  echo "== ops [$1] $2"
  (cd ops && VKMPS_GEMM="$1" VKMPS_BENCH_DTYPE=$2 VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench "BenchmarkConvolutionGPU/stem7x7s2/.*/$3\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic' | sed -E 's/ +[0-9]+ ns\/op//')
}
s fwd
for t in "" tile=0 tile=2 tile=3 im2col=1 "im2col=1,tile=0" "im2col=1,tile=2"; do bench "$t" float32 fwd; done > $o/fwd32.txt
for t in "" coopmat=1 "coopmat=1,cooptile=0" "coopmat=1,cooptile=2" "coopmat=1,cooptile=6" "coopmat=1,cooptile=7" "coopmat=1,cooptile=8" "im2col=1" "im2col=1,coopmat=1" "im2col=1,coopmat=1,cooptile=2" "tile=0" "tile=2"; do bench "$t" float16 fwd; done > $o/fwd16.txt
s dw
for t in "" "tile=1" "tile=0" "tile=3" "splits=44" "splits=132" "splits=176" "splits=264" "splits=352" "tile=1,splits=132" "tile=1,splits=264" "tile=3,splits=264"; do bench "$t" float32 dW; done > $o/dw32.txt
for t in "" "splits=132" "splits=264" "splits=528" "cooptile=0,coopmat=1" "cooptile=2,coopmat=1" "cooptile=6,coopmat=1" "coopmat=1,cooptile=0,splits=528" "coopmat=0"; do bench "$t" float16 dW; done > $o/dw16.txt
s prof
for d in float32 float16; do
  (cd ops && VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 VKMPS_GEMM="" timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/stem' -test.benchtime 1x -test.count 1 -test.v > $o/prof_$d.txt 2>&1)
  (cd ops && VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 VKMPS_GEMM="coopmat=1" timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/stem' -test.benchtime 1x -test.count 1 -test.v > $o/prof_coop_$d.txt 2>&1)
done
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do echo "== vkmps $d" >> $o/resnet18.txt; timeout 60 $B/vkmps train synthetic $m $a --dtype $d --json $o/resnet18.jsonl >> $o/resnet18.txt 2>&1; done
s done
cat $o/log.txt; for f in $o/fwd32.txt $o/fwd16.txt $o/dw32.txt $o/dw16.txt; do echo "## $f"; grep -E '^==|gpu-us|rror|anic' $f | sed -E 's/BenchmarkConvolutionGPU.//; s/ +1 +/ /' ; done; grep -E '^==|per training step' $o/resnet18.txt
