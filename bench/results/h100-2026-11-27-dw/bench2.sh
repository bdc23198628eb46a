#!/bin/bash
# run 2: baseline (bcfb72b) against the word loads (v1) and the word loads
# with per-slice parities (v2), float32 and float16 weight gradients,
# default choice and tile 1; then ResNet-18 training steps, base and v2.
# Run from the repository root: .devbuild-dw/bench2.sh $OUT
out=$1
cd .devbuild-dw
for f in *.gz; do gunzip -f $f; done
chmod +x ops_* vkmps_*
B='BenchmarkConvolutionGPU/(resnet|stem|vgg)[^/]*/.*/(fwd|dW)$'
one() {
	echo "## $1 VKMPS_BENCH_DTYPE=$2 VKMPS_GEMM=$3"
	VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$2 VKMPS_GEMM=$3 timeout 30 ./$1 -test.run '^$' -test.bench "$B" -test.benchtime 1x 2>&1 | grep -E '^Benchmark|FAIL|panic|rror'
}
{
nvidia-smi --query-gpu=name,driver_version --format=csv
date
for g in "" tile=1; do
	for d in float32 float16; do
		for b in ops_base.test ops_v1.test ops_v2.test; do
			one $b $d "$g"
		done
	done
done
date
} > $out/dw2.txt 2>&1
cd ..
for d in float16 float32; do
	for v in base v2; do
		echo "## vkmps_$v train --dtype $d"
		timeout 25 .devbuild-dw/vkmps_$v train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 20 --dtype $d 2>&1 | head -30
	done
done > $out/train2.txt 2>&1
date >> $out/train2.txt
