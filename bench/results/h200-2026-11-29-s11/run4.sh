#!/bin/bash
# Rows per invocation of the float16 max value pass on halves where its strips are stored value by value (rows no
# multiple of 4 wide): max 2x2 stride 2 over 58..110 (29..55 wide) and dilated max at 112 (55 wide) and 56 (27 wide),
# under oy=1 and oy=4 (d0d0486's default: 1 there), alternating twice.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run4; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run4.tgz run4' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
M="64,256,58,58,2,2,0;64,256,66,66,2,2,0;64,256,74,74,2,2,0;64,256,82,82,2,2,0;64,256,90,90,2,2,0;64,256,98,98,2,2,0;64,256,110,110,2,2,0;32,64,110,110,3,2,0"
DL="32,64,112,112,3,2,1,2;64,256,56,56,2,2,0,2;32,64,114,114,3,2,1,2"
for rep in 1 2; do for oy in 1 4; do
  s "$rep oy=$oy"
  VKMPS_TUNE=oy=$oy timeout 120 $B/vkmps bench --shapes "$M" --ops max --dtype float16 --argmax=false --warmup 30ms --iters 10 > $O/max.oy$oy.$rep.txt 2>&1
  VKMPS_TUNE=oy=$oy timeout 120 $B/vkmps bench --shapes "$DL" --ops dilated-max --dtype float16 --argmax=false --warmup 30ms --iters 10 > $O/dil.oy$oy.$rep.txt 2>&1
done; done
s done
