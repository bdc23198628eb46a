#!/bin/bash
# Planes and rows per invocation of the max and dilated-max passes (VKMPS_TUNE pz, oy, wg) at 4f90c26,
# float32 and float16, 32x64x112x112 k3 s2 p1 and 64x256x56x56 k2 s2 p0 (dilation 2 for dilated max),
# each tuning twice, alternating.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run2; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run2.tgz run2' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
timeout 60 $B/vkmps bench --ops max --dtype float32 --iters 3 > /dev/null 2>&1
SH="32,64,112,112,3,2,1,2;64,256,56,56,2,2,0,2"
for rep in 1 2; do
for tune in "" pz=2 pz=4 pz=4,oy=1 pz=2,oy=1 pz=4,oy=1,wg=128 pz=2,oy=2 pz=4,oy=2 pz=2,wg=128; do
  n=$(echo "def$tune" | tr '=,' '__')
  s "$rep $tune"
  VKMPS_TUNE=$tune timeout 100 $B/vkmps bench --shapes "$SH" --ops max,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > "$O/$n.$rep.txt" 2>&1
done; done
s done
