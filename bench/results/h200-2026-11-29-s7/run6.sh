#!/bin/bash
# Issue 21: the packedf16 max forward (runs 4 and 5 used 64-144 bytes of local memory a thread): build A sums
# every fetched word for its NaN test (no per-word "used" test, whose nested loops may have stayed rolled);
# build B as A with the windows' maxima over columns in float32. Register and local-memory counts of both
# (TestPoolPipelineStatistics), then the max forwards by default and under half=0.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run6; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps* $B/ops*.test
trap 'tar czf $OUT/run6.tgz -C $OUT run6; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
for b in ops ops_B; do
  s stats $b
  (cd ops && VKMPS_POOL_STATS=1 VKMPS_POOL_STATS_TUNE="fastmax=1" timeout 120 $B/$b.test -test.run TestPoolPipelineStatistics -test.v > $O/stats_$b.txt 2>&1)
done
for rep in 1 2; do
  for b in vkmps vkmps_B; do
    s $b $rep
    timeout 100 $B/$b bench --ops max,dilated-max --argmax=false --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1
  done
  s nohalf $rep
  VKMPS_TUNE=half=0 timeout 100 $B/vkmps bench --ops max,dilated-max --argmax=false --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 > $O/nohalf.$rep.txt 2>&1
done
s done
cat $O/log.txt
for b in ops ops_B; do echo "== $b"; grep -A4 'float16 pass 0' $O/stats_$b.txt | grep -E 'Register|Local' | head -6; done
for f in $O/vkmps.2.txt $O/vkmps_B.2.txt $O/nohalf.2.txt; do echo "== $f"; grep -E '^\s+[0-9]+x' $f | grep -v '1\.[0-9][0-9]x' ; done
