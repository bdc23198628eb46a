#!/bin/bash
# What ResNet-18's parameter updates cost in a step: d383657 against a diagnostic build of it whose update
# nodes encode nothing (VKMPS_EXP_NOUPDATE=1), float32 and float16, alternating twice. And the packedf16 max
# forward on strips of 8 (ox=8,vw=8) against the default strips of 4.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run7; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/run7.tgz -C $OUT run7; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
R="cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for rep in 1 2; do
  for dt in float32 float16; do
    s upd $dt $rep
    timeout 100 $B/vkmps train synthetic $R --dtype $dt --json $O/upd.jsonl >> $O/upd.txt 2>&1
    s noupd $dt $rep
    VKMPS_EXP_NOUPDATE=1 timeout 100 $B/vkmps_noupd train synthetic $R --dtype $dt --json $O/noupd.jsonl >> $O/noupd.txt 2>&1
  done
done
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
s pool
timeout 100 $B/vkmps bench --ops max --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 > $O/pool_def.txt 2>&1
VKMPS_TUNE=ox=8,vw=8 timeout 100 $B/vkmps bench --ops max --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 > $O/pool_ox8.txt 2>&1
s done
cat $O/log.txt
python3 - $O <<'PY'
import json, sys
for f in ("upd", "noupd"):
    for l in open(sys.argv[1] + "/" + f + ".jsonl"):
        d = json.loads(l)
        print(f, d["dtype"], "ms %.3f gpu %.3f update %.3f" % (d["ms_per_step"], d["gpu_ms_per_step"], d["profile_ms"].get("update", 0)))
PY
for f in $O/pool_def.txt $O/pool_ox8.txt; do echo "== $f"; grep -E '^\s+[0-9]+x' $f | grep -v '1\.[0-9][0-9]x' ; done
