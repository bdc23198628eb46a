#!/bin/bash
# Issue 21: float16 fast passes on halves (packedf16) and planes per invocation as defaults, against half=0 and
# other settings; the packed and planes tests on the H100.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps* $B/*.test
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
SH="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
b() { # name tune ops
  s "$1"; VKMPS_TUNE=$2 timeout 100 $B/vkmps bench --ops $3 --dtype float32,float16 --shapes "$SH" --warmup 30ms --iters 10 --repeat 2 --json $O/$1.jsonl > $O/$1.txt 2>&1
}
ALL=max,dilated-max,avg,l2
M=max,dilated-max
b def "" $ALL
b half0 half=0 $M
b ox8 ox=8,vw=8 $M
b ox8pz2 ox=8,vw=8,pz=2 $M
b pz1 pz=1 $M
b cx4 gathercx=4 $M
b gpz2 gatherpz=2 $ALL
s tests
(cd ops && timeout 120 $B/ops.test -test.run 'TestArgmaxPassesMatchReference|TestTuningKeepsResults' 2>&1 | tail -30 > $O/tests.txt)
s done
