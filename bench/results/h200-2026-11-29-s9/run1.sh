#!/bin/bash
# The argmax passes on halves (pooling_max_argmax.comp's packedf16 build) against the session's start (old):
# max and dilated max, float32 and float16, the three bench shapes, alternating twice; then tunings of the
# float16 passes (argmax passes' planes, rows, loads; the gathers' cells and planes) with the new build.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run1; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run1.tgz run1' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
for i in 1 2; do for b in vkmps.old vkmps; do
  s "$b $i"
  timeout 120 $B/$b bench --ops max,dilated-max --dtype float32,float16 > $O/maxes_${b}_$i.txt 2>&1
done; done
for tu in half=0 pz=2 pz=8 oy=2 vw=8 ox=8 "ox=8,vw=8"; do
  s "tune $tu"
  VKMPS_TUNE=$tu timeout 120 $B/vkmps bench --ops max --dtype float16 > "$O/tune_max_$tu.txt" 2>&1
done
for tu in gathercx=1 gathercx=2 gathercx=4 gatherpz=1 gatherpz=2 gatherpz=8 wg=128 wg=512; do
  s "gather $tu"
  VKMPS_TUNE=$tu timeout 120 $B/vkmps bench --ops avg,l2,max --dtype float16 > "$O/tune_grad_$tu.txt" 2>&1
done
timeout 120 $B/vkmps bench --ops avg,l2,max --dtype float16 > "$O/tune_grad_default.txt" 2>&1
s done
