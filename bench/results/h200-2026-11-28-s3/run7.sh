#!/usr/bin/env bash
# Run 7: pooling whose invocations skip the division of their plane index
# by the channels where every buffer holds whole images (vkmps, the
# working tree after d36af62) against d36af62 (vkmps_old): issue 21's two
# large shapes and the 1x1 probe, every kind with the argmax rows,
# float32 and float16, the two builds alternating.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
for v in vkmps_old vkmps vkmps_old vkmps; do
  s $v
  timeout 100 $B/$v bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes '32,64,112,112,3,2,1;64,256,56,56,2,2,0;32,256,56,56,1,1,0' --warmup 30ms --iters 10 --repeat 2 --copy-mib 50 --json $o/$v.jsonl >> $o/$v.txt 2>&1
done
s done
cat $o/log.txt
