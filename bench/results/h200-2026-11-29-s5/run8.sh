#!/usr/bin/env bash
# Run 8: parameter updates recorded in the backward pass, each after its
# parameter's last reader (graph/schedule.go placeUpdates; vkmps) against
# 910ebb5 (vkmps_old): ResNet-18 steps, float32 and float16, alternating
# twice. Also the weight-gradient passes of run 7 that did not run
# (ops.test 910ebb5 against ops_old.test a55a4fd, the reduce's lanes),
# and PyTorch's step.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for v in vkmps_old vkmps; do for d in float32 float16; do
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s dw
bench() { # binary dtype
  echo "== $1 [] $2"
  (cd ops && VKMPS_BENCH_SHAPES='^(stem7x7s2|resnet3x3-.*)$' VKMPS_BENCH_DTYPE=$2 VKMPS_BENCH_LARGE=1 timeout 100 $B/$1 -test.run '^$' -test.bench "BenchmarkConvolutionGPU/(stem7x7s2|resnet3x3-.*)/.*/dW\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
for d in float32 float16; do for r in 1 2; do bench ops_old.test $d; bench ops.test $d; done; done > $o/dw.txt
(cd ops && VKMPS_BENCH_SHAPES='^stem7x7s2$' VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/stem7x7s2/.*/dW$' -test.benchtime 1x -test.count 1 -test.v > $o/prof_float16.txt 2>&1)
s torch
python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.txt 2>&1
s done
cat $o/log.txt; grep -E '^==|per training step|barriers|device memory' $o/resnet18.txt | head -12; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//'; python3 bench/configs_table.py $o/dw.txt 2>&1 | head -30; grep -E "^ +[0-9.]+ us" $o/prof_float16.txt; grep -o '"dtype": "[a-z0-9]*", "tf32": [a-z]*, "batch": 32, "warmup_steps": [0-9]*, "ms_per_step": [0-9.]*, "gpu_ms_per_step": [0-9.]*' $o/torch_resnet18.txt
