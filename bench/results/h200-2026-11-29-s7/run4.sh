#!/bin/bash
# Issue 21: the packedf16 max forward without `continue` in its unrolled loops (run 3's build took 365 us):
# the driver's register and instruction counts of the pooling passes (TestPoolPipelineStatistics) by default
# and under half=0, and the max forwards, float16 and float32, by default and under half=0.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run4; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps* $B/ops.test
trap 'tar czf $OUT/run4.tgz -C $OUT run4; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
s stats
(cd ops && VKMPS_POOL_STATS=1 VKMPS_POOL_STATS_TUNE="fastmax=1 half=0" timeout 120 $B/ops.test -test.run TestPoolPipelineStatistics -test.v > $O/stats.txt 2>&1)
for rep in 1 2; do
  s half $rep
  timeout 100 $B/vkmps bench --ops max,dilated-max --argmax=false --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 --json $O/half.$rep.jsonl > $O/half.$rep.txt 2>&1
  s nohalf $rep
  VKMPS_TUNE=half=0 timeout 100 $B/vkmps bench --ops max,dilated-max --argmax=false --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 --json $O/nohalf.$rep.jsonl > $O/nohalf.$rep.txt 2>&1
done
s done
cat $O/log.txt
grep -i -E 'max .*(f16|Float16)|float16' $O/stats.txt | head -40
for f in $O/half.2.txt $O/nohalf.2.txt; do echo "== $f"; grep -E '^\s+[0-9]+x' $f | grep -v '1\.[0-9][0-9]x' ; done
