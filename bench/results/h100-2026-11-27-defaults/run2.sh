#!/usr/bin/env bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s parts
(cd ops && timeout 30 $B/ops.test -test.run 'TestConvolutionWinogradCoopParts' -test.v > $O/parts.txt 2>&1)
s resnet
for dt in float32 float16; do for tu in "" winocoop=1 winocoop=1,cooptile=3; do
  [ $dt = float32 ] && [ -n "$tu" ] && continue
  echo "### $dt '$tu'" >> $O/resnet18.txt
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --conv-tuning "$tu" --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done; done
echo "### float16 scratch-per-kernel" >> $O/resnet18.txt
timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype float16 --scratch-per-kernel --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
s torch-resnet
timeout 80 python3 bench/torch_resnet18.py --steps 30 > $O/torch_resnet18.jsonl 2>$O/torch_resnet18.err
s torch-conv
timeout 100 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_train.jsonl 2>$O/torch_train.err
s pool
VKMPS=$B/vkmps timeout 200 bash bench/pool_argmax_sweep.sh $O/pool > $O/pool.txt 2>&1
s done
