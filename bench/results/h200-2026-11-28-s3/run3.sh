#!/usr/bin/env bash
# Run 3: where float16's memory-bound kernels lose their bandwidth. Pooling
# with 1x1 windows (average: a load, a multiply by 1 and a store per value
# in float32, so two conversions per value in float16; max: no arithmetic)
# and 3x3 stride-1 windows on the depthwise layer's shape, float32 and
# float16, beside the copy shader at that traffic.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $o/gpu.txt 2>&1
s probe
for mib in 25 50; do
timeout 120 $B/vkmps bench --ops avg,max,l2 --argmax=false --dtype float32,float16 --shapes '32,256,56,56,1,1,0;32,256,56,56,3,1,1;32,64,112,112,3,2,1' --warmup 30ms --iters 10 --repeat 2 --copy-mib $mib --json $o/probe$mib.jsonl > $o/probe$mib.txt 2>&1
done
s done
cat $o/probe50.txt
