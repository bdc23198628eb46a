#!/bin/bash
# run 1: where the float32 GEMMs spend their time: pipeline statistics, dispatch profiles of the 3x3/1x1 layers,
# the weight-gradient tile/split sweep at 14x14 and 7x7, and a ResNet-18 float32 step.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/ops.test $B/vkmps
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
s stats
(cd ops && VKMPS_CONV_STATS=1 timeout 60 $B/ops.test -test.run TestConvPipelineStatistics -test.v > $O/stats.txt 2>&1)
s prof
(cd ops && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 timeout 120 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3-|resnet1x1-512-2048|gemm1x1)' -test.benchtime 1x -test.v > $O/prof.txt 2>&1)
s sweep
(cd ops && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_SWEEP=1 timeout 150 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet3x3-(256|512)/.*/dW' -test.benchtime 1x 2>&1 | grep -E 'ns/op|FAIL|panic' > $O/sweep_dw.txt)
(cd ops && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_SWEEP=1 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet1x1-512-2048/.*/fwd' -test.benchtime 1x 2>&1 | grep -E 'ns/op|FAIL|panic' > $O/sweep_1x1.txt)
s resnet
timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype float32 --json $O/resnet18.jsonl > $O/resnet18.txt 2>&1
s done
