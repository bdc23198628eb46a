#!/usr/bin/env bash
# Convolution tunings side by side, in one go on the GPU machine: the
# convolution benchmark's layers (GPU timestamps) and ResNet-18 training
# steps under the default and each given tuning, then PyTorch's ResNet-18
# step in the same run.
#
#   bench/conv_tunings.sh OUTDIR DTYPE [TUNING]...
#
# e.g. bench/conv_tunings.sh out float16 winocoop=0 winograd=0
# TUNING is ops.ParseConvolutionTuning's text ($VKMPS_GEMM of the
# benchmark, --conv-tuning of vkmps train synthetic). OPS_TEST: the ops
# test binary (go test -c ./ops), VKMPS: the vkmps binary (both built here
# when unset); LAYERS: the benchmark's layer pattern (default: the 3x3,
# 1x1, stem and VGG layers, forward, data and weight gradients).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
[ $# -ge 2 ] || { echo "usage: bench/conv_tunings.sh OUTDIR DTYPE [TUNING]..." >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
dtype=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ops=${OPS_TEST:-}
if [ -z "$ops" ]; then ops=$tmp/ops.test; (cd "$root" && go test -c -o "$ops" ./ops) || exit 1; fi
vkmps=${VKMPS:-}
if [ -z "$vkmps" ]; then vkmps=$tmp/vkmps; (cd "$root" && go build -o "$vkmps" ./cmd/vkmps) || exit 1; fi
layers=${LAYERS:-'BenchmarkConvolutionGPU/(resnet|stem|vgg)[^/]*/.*/(fwd|dx|dW)$'}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
for tu in "" "$@"; do
	echo "### dtype=$dtype tuning=$tu"
	(cd "$root/ops" && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$dtype VKMPS_GEMM=$tu "$ops" -test.run '^$' \
		-test.bench "$layers" -test.benchtime 1x 2>&1 | grep -E 'gpu-us|FAIL|panic|rror')
done > "$out/layers.txt"
for tu in "" "$@"; do
	"$vkmps" train synthetic "$root/cmd/vkmps/models/resnet18.json" --batch 32 --input x=3,224,224 --input labels=1000,1,1 \
		--steps 30 --dtype "$dtype" --conv-tuning "$tu" --json "$out/resnet18.jsonl" >> "$out/resnet18.txt" 2>&1
done
PYTHONUNBUFFERED=1 python3 "$here/torch_resnet18.py" --steps 30 > "$out/torch_resnet18.jsonl" 2>&1
echo "results in $out"
