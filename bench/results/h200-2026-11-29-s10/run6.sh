#!/bin/bash
# The average's N by branch but one shared division (forward) and the average gradient's N without the
# closed form where the strip's windows lie inside the region (vkmps, the session's build) against run 5's
# build (vkmps.r5) and 4f90c26 (old): every kind, alternating twice; then tunings of the float16 dilated
# max value pass at 56x56 on the new build.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run6; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run6.tgz run6' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
timeout 60 $B/vkmps.old bench --ops max --dtype float32 --iters 3 > /dev/null 2>&1
for rep in 1 2; do for b in vkmps.old vkmps.r5 vkmps; do
  s "$rep $b"
  timeout 120 $B/$b bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1
done; done
for tune in pz=4,oy=1,wg=128 pz=4,oy=1 pz=2,oy=1 oy=1 oy=2 wg=128; do
  n=$(echo "tune_$tune" | tr '=,' '__')
  s "$tune"
  VKMPS_TUNE=$tune timeout 60 $B/vkmps bench --shapes "64,256,56,56,2,2,0,2" --ops dilated-max --argmax=false --dtype float16 --warmup 30ms --iters 10 > $O/$n.txt 2>&1
done
s done
