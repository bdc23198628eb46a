#!/bin/bash
# The argmax passes on halves over several destination rows (new) (oy=1 below: one row) against
# the session's start (old): max and dilated max, float32 and float16; then tunings of the float16 argmax passes:
# rows, planes, workgroup size.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run2; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run2.tgz run2' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
for b in vkmps.old vkmps; do
  s "$b"
  timeout 120 $B/$b bench --ops max,dilated-max --dtype float32,float16 > $O/maxes_$b.txt 2>&1
done
i=0
for tu in oy=1 oy=2 oy=4 wg=128 wg=128,oy=1 wg=128,oy=4 wg=64 pz=2,oy=4 pz=1,oy=4 pz=2,oy=2; do
  i=$((i+1)); s "tune $i $tu"
  echo "VKMPS_TUNE=$tu" > $O/tune$i.txt
  VKMPS_TUNE=$tu timeout 120 $B/vkmps bench --ops max --dtype float16 >> $O/tune$i.txt 2>&1
done
timeout 120 $B/vkmps bench --ops max --dtype float16 > $O/tune0_default.txt 2>&1
s done
