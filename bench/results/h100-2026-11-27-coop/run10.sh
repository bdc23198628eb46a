#!/bin/bash
# Winograd output transform storing quads, and the products' X blocks stored straight from the accumulators (ops.test, vkmps) against 0cdaf39 (ops_base.test, vkmps_base): tests on the H100, profiles, ResNet-18 steps.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps* 2>/dev/null
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
cd ops
s tests
timeout 120 $B/ops.test -test.run 'Winograd' 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|Error:|Messages:' | head -40 > $O/tests.txt
for i in 1 2; do for b in ops_base ops; do for dt in float16 float32; do
  s $b $dt
  echo "== $b $dt $i" >> $O/prof.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$dt VKMPS_BENCH_PASSES=1 timeout 60 $B/$b.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)/.*/(fwd|dx)' -test.benchtime 1x -test.v 2>&1 | grep -E "gpu-us|winograd_(coopmat|gemm|output)" >> $O/prof.txt
done; done; done
cd ..
for v in vkmps vkmps_base vkmps vkmps_base; do for dt in float16 float32; do
  s resnet $v $dt
  echo "== $v $dt" >> $O/resnet18.txt
  timeout 60 $B/$v train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18_$v.jsonl >> $O/resnet18.txt 2>&1
done; done
s done
