#!/usr/bin/env bash
# session 25 run 1: the Winograd products' direct stores (STORE_DIRECT) on real cooperative matrices:
# tests, the float16 3x3 layers default against coopdirect=0 (alternating), ResNet-18 float16 steps, the conv table.
set -u
LIMIT=${LIMIT:-400}
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b && for b in vkmps ops.test; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
python3 -c 'import torch; print(torch.__version__, torch.backends.cudnn.version())' >> $OUT/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $OUT/log.txt; }
late(){ [ $(( $(date +%s)-T0 )) -gt $LIMIT ] && { el "skip $1"; return 0; }; return 1; }
el tests
(cd ops && timeout 150 /tmp/b/ops.test -test.run 'TestConvolutionWinogradCoopDirect|TestConvolutionCoopDirect|TestConvolutionWinogradCoopMat$|TestConvolutionCoopPacked|TestConvolutionCoopMatAgreesWithTiles' -test.v > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt)
tail -3 $OUT/tests.txt | tee -a $OUT/log.txt
for rep in 1 2; do for g in def off; do
  late "bench $rep $g" && continue
  el "bench $rep $g"
  G=""; [ $g = off ] && G=coopdirect=0; P=0; [ $rep = 1 ] && P=1
  echo "== $rep $g" >> $OUT/wino.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=$P VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-.*|vgg3x3-128|stem7x7s2|resnet3x3s2-256|resnet3x3s2-512)$' timeout 100 /tmp/b/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $OUT/wino.txt 2>&1)
done; done
grep -E '^==|gpu-us|winograd_coopmat' $OUT/wino.txt | sed -E 's/BenchmarkConvolutionGPU\///; s/-16 +\t? *1\t.*TFLOP\/s//' > $OUT/wino_summary.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for rep in 1 2; do for g in def off; do
  late "resnet $rep $g" && continue
  el "resnet $rep $g"
  G=""; [ $g = off ] && G="--conv-tuning coopdirect=0"
  timeout 60 /tmp/b/vkmps train synthetic $m $a --dtype float16 $G > $OUT/resnet_${rep}_${g}.txt 2>&1
done; done
grep -H 'per training step' $OUT/resnet_*.txt >> $OUT/log.txt
late conv || { el conv; timeout 100 /tmp/b/vkmps bench --conv --dtype float16 --json $OUT/conv.jsonl > $OUT/conv.txt 2>&1; }
late torch || { el torch; timeout 120 python3 bench/torch_training_baseline.py --iters 30 > $OUT/torch_training.jsonl 2>$OUT/torch_training.err; python3 bench/compare_conv.py $OUT/conv.jsonl $OUT/torch_training.jsonl > $OUT/conv_compare.txt 2>&1; }
el done
