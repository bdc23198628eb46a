#!/bin/bash
# run 1: baseline (bcfb72b) against the word loads (ops.test) and the
# diagnostic build (ops_v1b.test: word loads converted at fetch time).
B='BenchmarkConvolutionGPU/(resnet|stem|vgg)[^/]*/.*/(fwd|dW)$'
one() {
	echo "## $1 VKMPS_BENCH_DTYPE=$2 VKMPS_GEMM=$3"
	VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$2 VKMPS_GEMM=$3 timeout 50 ./$1 -test.run '^$' -test.bench "$B" -test.benchtime 1x 2>&1 | grep -E '^Benchmark|FAIL|panic|rror'
}
nvidia-smi --query-gpu=name,driver_version --format=csv
date
for g in "" tile=1; do
	for d in float32 float16; do
		for b in ops_base.test ops.test ops_v1b.test ops_base.test; do
			[ $b = ops_v1b.test ] && [ $d = float32 ] && continue
			one $b $d "$g"
		done
	done
done
date
