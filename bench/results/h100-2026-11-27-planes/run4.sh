#!/bin/bash
# Issue 21, final: every pooling kernel under the new defaults (planes per invocation; float16 dilated 3x3 gathers of
# 4 cells) on the three bench shapes, the old defaults on the two stride-2 shapes in the same run, PyTorch's
# baseline (float32, float16) and bench/compare.py; ResNet-18 training steps.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
python3 -c 'import torch; print(torch.__version__, torch.backends.cudnn.version())' >> $O/gpu.txt 2>&1
s def
timeout 150 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s old
VKMPS_TUNE=pz=1,gatherpz=1,gathercx=2 timeout 100 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes "32,64,112,112,3,2,1;64,256,56,56,2,2,0" --warmup 30ms --iters 10 --repeat 2 --json $O/old.jsonl > $O/old.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
python3 bench/pool_settings_table.py $O old,def > $O/old_def_table.txt 2>&1
s resnet
for dt in float32 float16; do
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done
s done
