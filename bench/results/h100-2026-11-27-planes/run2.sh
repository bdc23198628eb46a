#!/bin/bash
# Issue 21: planes per invocation (pz for the direct passes, gatherpz for the gathers), float32 and float16.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps* $B/*.test
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
SH="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
b() { # name tune ops
  s "$1"; VKMPS_TUNE=$2 timeout 100 $B/vkmps bench --ops $3 --dtype float32,float16 --shapes "$SH" --warmup 30ms --iters 10 --repeat 2 --json $O/$1.jsonl > $O/$1.txt 2>&1
}
ALL=max,dilated-max,avg,l2
b base "" $ALL
b p2 pz=2,gatherpz=2 $ALL
b p4 pz=4,gatherpz=4 $ALL
b p2c4 pz=2,gatherpz=2,gathercx=4 $ALL
b p4c4 pz=4,gatherpz=4,gathercx=4 $ALL
b p2g4 pz=2,gatherpz=4 $ALL
s stats
(cd ops && VKMPS_POOL_STATS=1 VKMPS_POOL_STATS_TUNE="pz=2,gatherpz=2 pz=4,gatherpz=4" timeout 60 $B/ops.test -test.run 'TestPool(Pipeline|Gather)Statistics' -test.v > $O/stats.txt 2>&1)
s done
