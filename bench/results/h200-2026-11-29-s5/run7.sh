#!/usr/bin/env bash
# Run 7: convolution_reduce.comp's lanes (several invocations an output
# where the sums' workgroups would leave multiprocessors idle; ops.test,
# vkmps) against a55a4fd (ops_old.test, vkmps_old): the stem's and the
# 3x3 layers' weight gradients, float32 and float16, alternating twice;
# dispatch profiles of the new build's; ResNet-18 steps of both builds,
# alternating twice; PyTorch's step.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r && rm -rf $OUT/r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
bench() { # binary dtype
  echo "== $1 [] $2"
  (cd ops && VKMPS_BENCH_SHAPES='^(stem7x7s2|resnet3x3-.*)$' VKMPS_BENCH_DTYPE=$2 VKMPS_BENCH_LARGE=1 timeout 100 $B/$1 -test.run '^$' -test.bench "BenchmarkConvolutionGPU/.*/dW\$" -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op|rror|anic|exceed' | sed -E 's/ +[0-9]+ ns\/op//')
}
s dw
for d in float32 float16; do for r in 1 2; do bench ops_old.test $d; bench ops.test $d; done; done > $o/dw.txt
s prof
for d in float32 float16; do
  (cd ops && VKMPS_BENCH_SHAPES='^(stem7x7s2|resnet3x3-64)$' VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 60 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/.*/dW$' -test.benchtime 1x -test.count 1 -test.v > $o/prof_$d.txt 2>&1)
done
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for r in 1 2; do for v in vkmps_old vkmps; do for d in float32 float16; do
  echo "== $v $d" >> $o/resnet18.txt
  timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
done; done; done
s torch
python3 bench/torch_resnet18.py --steps 30 > $o/torch_resnet18.txt 2>&1
s done
cat $o/log.txt; python3 bench/configs_table.py $o/dw.txt 2>&1 | head -40; grep -E "^ +[0-9.]+ us +convolution_reduce" $o/prof_*.txt; grep -E '^==|per training step' $o/resnet18.txt | paste - - | sed -E 's/cmd.vkmps.models.resnet18.json on NVIDIA H200, //; s/ \(1 submissions each\)//'; tail -12 $o/torch_resnet18.txt
