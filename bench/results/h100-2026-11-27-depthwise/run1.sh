#!/bin/bash
# run 1: depthwise quads/flattened grid (this tree) against HEAD a183504 (ops_base)
B=.devbuild
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
gunzip -f $B/*.gz; chmod +x $B/ops.test $B/ops_base.test $B/vkmps
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
export VKMPS_BENCH_LARGE=1
( $B/ops.test -test.run 'Depthwise|TestConvolutionTuning' -test.count=1 2>&1 | tail -5 ) > $O/tests.txt
for dt in float32 float16; do
 for rep in 1 2; do
  for g in "" "dwstrip=8" "dwquads=0" "dwstrip=8,dwquads=0" "dwstrip=2"; do
   echo "== new dtype=$dt gemm=$g rep=$rep"
   VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM="$g" $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x 2>&1 | grep Benchmark
  done
  echo "== base dtype=$dt rep=$rep"
  VKMPS_BENCH_DTYPE=$dt $B/ops_base.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/depthwise' -test.benchtime 1x 2>&1 | grep Benchmark
 done
done > $O/dw.txt 2>&1
$B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
