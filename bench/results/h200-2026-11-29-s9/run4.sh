#!/bin/bash
# Dilated max (3x3, dilation 2) on halves: 2411b9c (cur: float32 arithmetic for dilation along x) against A
# (its argmax passes on halves) and B (its value pass too, over 4 rows an invocation), float32 and float16,
# the three bench shapes, alternating twice.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run4; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'cd $OUT && tar czf run4.tgz run4' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
for rep in 1 2; do for b in vkmps vkmps.A vkmps.B; do
  s $b $rep
  timeout 100 $B/$b bench --ops dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1
done; done
s done
