#!/usr/bin/env bash
# Run 7: the Winograd products of convolutions and data gradients split
# over the input channels, doubled while they would give multiprocessors
# fewer than five workgroups, the output transform's sum a specialization
# (ops.test, vkmps: the commit after b734d44) against
# b734d44 (ops_old.test, vkmps_old): the 3x3 passes in float32
# and float16, ResNet-18 steps, the builds alternating twice.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # binary tuning dtype
  echo "== $1 [$2] $3"
  (cd ops && VKMPS_GEMM="$2" VKMPS_BENCH_DTYPE=$3 VKMPS_BENCH_LARGE=1 timeout 100 $B/$1 -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet3x3-' -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op' | sed -E 's/ +[0-9]+ ns\/op//')
}
s conv
for r in 1 2; do bench ops_old.test "" float32; bench ops.test "" float32; done > $o/conv32.txt
for r in 1 2; do bench ops_old.test "" float16; bench ops.test "" float16; done > $o/conv16.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for v in vkmps_old vkmps; do for d in float32 float16; do
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s done
grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//'; cat $o/log.txt
