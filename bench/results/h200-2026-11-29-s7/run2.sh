#!/bin/bash
# Issue 21: where the max forward's time goes. Three diagnostic builds of 2e30c83 whose pooling_max shaders
# (float32 and float16) skip their loads (values made up from the load index: NOLOAD), their stores (NOSTORE)
# or both loads and window work (EMPTY: each invocation stores its index), against the default build.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run2; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
for rep in 1 2; do
for b in vkmps vkmps_NOLOAD vkmps_NOSTORE vkmps_EMPTY; do
  s $b $rep
  timeout 100 $B/$b bench --ops max --argmax=false --dtype float32,float16 --shapes "32,64,112,112,3,2,1;64,256,56,56,2,2,0;32,256,56,56,1,1,0" --warmup 30ms --iters 10 --json $O/$b.$rep.jsonl > $O/$b.$rep.txt 2>&1
done
done
s done
