#!/usr/bin/env bash
# session 25 run 5: the new default (16x16x16 matrices for the forward GEMMs only) against coopshape=1 (the old
# default): tests, ResNet-18 float16 steps alternating twice, then the float16 convolution table against cuDNN.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b $OUT/r && for b in vkmps ops.test; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
trap 'cd $OUT && tar czf run5.tgz r && rm -rf r' EXIT
O=$OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $O/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $O/log.txt; }
el tests
(cd ops && timeout 60 /tmp/b/ops.test -test.run 'TestConvolutionCoopShape|TestConvolutionCoopMatAgreesWithTiles|TestConvolutionCoopPacked' -test.v > $O/tests.txt 2>&1; echo "rc $?" >> $O/tests.txt)
tail -3 $O/tests.txt | tee -a $O/log.txt
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype float16"
for rep in 1 2; do for g in def s1; do
  el "resnet $rep $g"; G=""; [ $g = s1 ] && G="--conv-tuning coopshape=1"
  timeout 60 /tmp/b/vkmps train synthetic $m $a $G > $O/resnet_${rep}_${g}.txt 2>&1
done; done
grep -H 'per training step' $O/resnet_*.txt >> $O/log.txt
el conv
timeout 60 /tmp/b/vkmps bench --conv --dtype float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
el torch
timeout 90 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
python3 bench/compare_conv.py $O/conv.jsonl $O/torch_training.jsonl > $O/conv_compare.txt 2>&1
el done
