#!/bin/bash
# run 4 (f0d58e6): tests; the split default against splits=1 and tile 7's counts; vkmps bench --conv with PyTorch's layers in the same run
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/ops.test $B/vkmps
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s tests
timeout 200 $B/ops.test -test.run 'Depthwise|TestConvolutionCoopMatAgreesWithTiles|TestConvolutionCoopPacked|TestConvolutionTuning|TestConvChoice|TestConvolutionEveryPath' -test.count=1 > $O/tests.txt 2>&1; echo "exit $?" >> $O/tests.txt
s split
for g in "" "splits=1" "cooptile=7,splits=4" "cooptile=7,splits=5" "cooptile=7,splits=8"; do
  echo "== gemm=$g"
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_GEMM="$g" timeout 60 $B/ops.test -test.run XXX -test.bench 'BenchmarkConvolutionGPU/resnet1x1-512' -test.benchtime 1x -test.count 2 2>&1 | grep Benchmark
done > $O/split.txt 2>&1
s conv
timeout 100 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
s torch-train
timeout 130 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
s done
