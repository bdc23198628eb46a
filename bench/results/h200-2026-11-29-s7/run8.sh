#!/bin/bash
# Issue 21: the max forward's pass on halves over several destination rows per invocation (oy=2, oy=4;
# default 1), float16 with float32 beside; register and local-memory counts under each.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run8; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps* $B/ops.test
trap 'tar czf $OUT/run8.tgz -C $OUT run8; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
s stats
(cd ops && VKMPS_POOL_STATS=1 VKMPS_POOL_STATS_TUNE="fastmax=1 oy=2 oy=4 oy=2,ox=8,vw=8" timeout 120 $B/ops.test -test.run TestPoolPipelineStatistics -test.v > $O/stats.txt 2>&1)
for rep in 1 2; do
  for tu in "" oy=2 oy=4 oy=2,vw=8; do
    s "tune=$tu" $rep
    VKMPS_TUNE=$tu timeout 100 $B/vkmps bench --ops max --argmax=false --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 > "$O/oy_${tu:-def}.$rep.txt" 2>&1
  done
done
s done
cat $O/log.txt
grep -A4 'max .* float16 pass 0' $O/stats.txt | grep -E 'tune|Register|Local' | sed 's/.*pooling_stats_internal_test.go:[0-9]*: //' | paste - - - | head -12
for f in $O/oy_*.2.txt; do echo "== $f"; grep -E '^\s+[0-9]+x.* f16' $f ; done
