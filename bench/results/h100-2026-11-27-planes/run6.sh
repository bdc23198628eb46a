#!/bin/bash
# Issue 21: 8 planes per invocation (gatherpz=8, pz=8) against the defaults, max kinds and L2, float32 and float16.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
SH="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
b() { # name tune ops
  s "$1"; VKMPS_TUNE=$2 timeout 100 $B/vkmps bench --ops $3 --dtype float32,float16 --shapes "$SH" --warmup 30ms --iters 10 --repeat 2 --json $O/$1.jsonl > $O/$1.txt 2>&1
}
M=max,dilated-max,l2
b def "" $M
b gpz8 gatherpz=8 $M
b p8 pz=8,gatherpz=8 $M
b gpz4 gatherpz=4 $M
b wg512 wg=512 $M
s done
