#!/bin/bash
# Rows per invocation (oy) of the float16 max and dilated-max value passes on the session's build (the max
# passes' window test only for a maximum of -inf; the average as at 4f90c26), the three bench shapes,
# default, oy=1 and oy=2, twice.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run7; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run7.tgz run7' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
for rep in 1 2; do for tune in "" oy=1 oy=2; do
  n=$(echo "tune_$tune" | tr '=,' '__')
  s "$rep $tune"
  VKMPS_TUNE=$tune timeout 60 $B/vkmps bench --ops max,dilated-max --argmax=false --dtype float16 --warmup 30ms --iters 10 > $O/$n.$rep.txt 2>&1
done; done
s done
