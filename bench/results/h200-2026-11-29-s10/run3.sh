#!/bin/bash
# The max value pass without anyTap (A: results wrong for windows with no tap inside, a timing probe only)
# against 4f90c26, max and dilated max at 112 and 56, float32 and float16, alternating twice; then the
# driver's pipeline statistics (--pipeline-stats) of both on dilated max at 56 in float16.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run3; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run3.tgz run3' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
timeout 60 $B/vkmps.A bench --ops max --dtype float32 --iters 3 > /dev/null 2>&1
SH="32,64,112,112,3,2,1,2;64,256,56,56,2,2,0,2"
for rep in 1 2; do for b in vkmps vkmps.A; do
  s "$rep $b"
  timeout 100 $B/$b bench --shapes "$SH" --ops max,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > "$O/$b.$rep.txt" 2>&1
done; done
for b in vkmps vkmps.A; do
  s "stats $b"
  timeout 100 $B/$b bench --shapes "64,256,56,56,2,2,0,2" --ops dilated-max,max --dtype float16 --iters 3 --pipeline-stats > "$O/$b.stats.txt" 2>&1
done
s done
