#!/bin/bash
# Packed cooperative-matrix staging (gemm_coopmat.glsl's COOP_PACKED) (199eacf) against the session's start, 84dd5d4 (ops_base.test, vkmps_base):
# the real build's tests, float16 layers under the default, packed=0, the base build and two forced tiles, ResNet-18 steps.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'CoopPacked|WinogradCoop|CoopMatAgrees' -test.v 2>&1 | grep -E -- '^(--- FAIL|FAIL|ok|PASS|panic)|--- (PASS|SKIP|FAIL)|Error:|Messages:' | head -60 > $O/tests.txt)
s bench
L='BenchmarkConvolutionGPU/(resnet3x3|resnet1x1-512-2048|gemm1x1|vgg)'
b() { # label binary tuning [env]
  echo "=== $1" >> $O/bench.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_GEMM="$3" $4 timeout 120 $B/$2 -test.run '^$' -test.bench "$L" -test.benchtime 1x 2>&1 | grep -E 'ns/op|FAIL|panic|Error' >> $O/bench.txt
}
b new ops.test ""
b new-packed0 ops.test "packed=0"
b base ops_base.test ""
b new ops.test ""
b new-wino-cooptile3 ops.test "winograd=1,cooptile=3"
b new-wino-cooptile5 ops.test "winograd=1,cooptile=5"
s prof
VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_PASSES=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3-128|gemm1x1)' -test.benchtime 1x > $O/prof.txt 2>&1
s resnet
for i in 1 2; do for v in vkmps vkmps_base; do
  timeout 60 $B/$v train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype float16 --json $O/resnet18_$v.jsonl 2>&1 | head -3 | sed "s/^/$v: /" >> $O/resnet18.txt
done; done
s done
