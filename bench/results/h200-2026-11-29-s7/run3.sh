#!/bin/bash
# Issue 21: the max forwards' fast pass on halves (the packedf16 build) against half=0 (taps converted to
# float32, the previous pass), float16, with float32 beside, alternating twice in one call.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run3; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/run3.tgz -C $OUT run3; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
for rep in 1 2; do
  s half $rep
  timeout 100 $B/vkmps bench --ops max,dilated-max --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 --json $O/half.$rep.jsonl > $O/half.$rep.txt 2>&1
  s nohalf $rep
  VKMPS_TUNE=half=0 timeout 100 $B/vkmps bench --ops max,dilated-max --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 --json $O/nohalf.$rep.jsonl > $O/nohalf.$rep.txt 2>&1
done
s done
cat $O/log.txt
for f in $O/half.2.txt $O/nohalf.2.txt; do echo "== $f"; grep -E '^\s+[0-9]+x' $f | grep -v '1\.[0-9][0-9]x' ; done
