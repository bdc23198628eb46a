#!/bin/bash
# Issue 21 diagnostics: the max gather without its compare/select (nocmp) and without its loads (noload)
# against the build of bc99760; the existing knobs (workgroup, gather cells) on the float16 max kinds.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
SH="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
b() { # name binary tune ops
  s "$1"; VKMPS_TUNE=$3 timeout 100 $B/$2 bench --ops $4 --dtype float32,float16 --shapes "$SH" --warmup 30ms --iters 10 --repeat 2 --json $O/$1.jsonl > $O/$1.txt 2>&1
}
b base vkmps "" max,dilated-max,avg,l2
b nocmp vkmps-nocmp "" max
b noload vkmps-noload "" max
b wg64 vkmps wg=64 max,dilated-max,avg
b wg1024 vkmps wg=1024 max,dilated-max,avg
b cx4 vkmps gathercx=4 max,dilated-max,avg
b cx8 vkmps gathercx=8 max,dilated-max,avg
b ox8 vkmps ox=8,vw=8 max,dilated-max
s done
