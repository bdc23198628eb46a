#!/bin/bash
# Diagnosis: max 2x2 stride 2 over 64x256x82x82 took 816 us in float16 in run 4 (58x58: 60). Widths 58, 80, 82, 84,
# float32 and float16, by default and under tunings of the forward passes.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run5; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run5.tgz run5' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
M="64,256,58,58,2,2,0;64,256,80,80,2,2,0;64,256,82,82,2,2,0;64,256,84,84,2,2,0;16,256,82,82,2,2,0"
s def; timeout 100 $B/vkmps bench --shapes "$M" --ops max --dtype float32,float16 --argmax=false --warmup 30ms --iters 5 > $O/def.txt 2>&1
for t in fastmax=0 half=0 vw=1 vstore=0 ox=2 wg=64; do
  s $t; VKMPS_TUNE=$t timeout 60 $B/vkmps bench --shapes "$M" --ops max --dtype float16 --argmax=false --warmup 30ms --iters 5 > $O/$t.txt 2>&1
done
s def2; timeout 100 $B/vkmps bench --shapes "$M" --ops max --dtype float32,float16 --argmax=false --warmup 30ms --iters 5 > $O/def2.txt 2>&1
s done
