#!/bin/bash
# The 1x1 rules (cooperative matrices for 1x1 GEMMs of 128+ rows, 64+ deep over 16384+ columns; data gradients by
# columns on tile 7) against the session's start on ResNet-50's and ResNet-18's float16 1x1 layers, twice; then, same
# call, the convolution table against cuDNN (vkmps bench --conv, bench/torch_training_baseline.py), ResNet-18 steps
# of both types, old and new, and PyTorch's (bench/torch_resnet18.py).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run9; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run9.tgz run9' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
python3 -c 'import torch; print(torch.__version__, torch.backends.cudnn.version())' >> $O/gpu.txt 2>&1
for rep in 1 2; do for b in ops.test.old ops.test; do
  s "1x1 $rep $b"
  echo "== $rep $b" >> $O/oneone.txt
  VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet50-1x1-.*|gemm1x1-1024|resnet1x1s2-.*|resnet1x1-512-.*)$' timeout 120 $B/$b -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/oneone.txt 2>&1
done; done
grep -E '^==|gpu-us' $O/oneone.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $O/summary.txt
s conv
timeout 150 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
python3 bench/compare_conv.py $O/conv.jsonl $O/torch_training.jsonl > $O/conv_compare.txt 2>&1
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for rep in 1 2; do for d in float32 float16; do for b in vkmps.old vkmps; do
  timeout 60 $B/$b train synthetic $m $a --dtype $d --json $O/resnet18_$b.jsonl >> $O/resnet18_$b.txt 2>&1
done; done; done
s torch
timeout 150 python3 bench/torch_resnet18.py --steps 30 > $O/torch_resnet18.jsonl 2> $O/torch_resnet18.err
s done
grep 'per training step' $O/resnet18_*.txt >> $O/summary.txt
