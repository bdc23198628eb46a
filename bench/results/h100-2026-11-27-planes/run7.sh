#!/bin/bash
# Issue 21: forward passes over several planes in a loop the compiler keeps rolled (vkmps-rolled: [[dont_unroll]])
# against the unrolled planes of cc2087a, pz=1/2/4, forward rows of every kind, float32 and float16.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
SH="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
b() { # name binary tune
  s "$1"; VKMPS_TUNE=$3 timeout 100 $B/$2 bench --ops max,dilated-max,avg,l2 --dtype float32,float16 --shapes "$SH" --warmup 30ms --iters 10 --repeat 2 --json $O/$1.jsonl > $O/$1.txt 2>&1
}
b def vkmps ""
b rolled1 vkmps-rolled pz=1
b rolled2 vkmps-rolled pz=2
b rolled4 vkmps-rolled pz=4
b unrolled2 vkmps pz=2
s done
