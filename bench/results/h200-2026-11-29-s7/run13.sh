#!/bin/bash
# Issue 21: the gradients' gathers under their existing tunings on the H200 (4aed9d7): planes (gatherpz),
# cells (gathercx) and workgroup sizes against the defaults, every kind, float32 and float16, two large shapes.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run13; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/run13.tgz -C $OUT run13; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
timeout 100 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes "$S" --iters 3 > /dev/null 2>&1
for tu in def gatherpz=8 gatherpz=2 gathercx=4 gathercx=1 wg=512 wg=128; do
  s $tu
  T=$tu; [ $tu = def ] && T=""
  VKMPS_TUNE=$T timeout 100 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 --json "$O/$tu.jsonl" > "$O/$tu.txt" 2>&1
done
s done
cat $O/log.txt
python3 - $O <<'PY'
import json, sys, collections, glob, os
O = sys.argv[1]
t = collections.defaultdict(dict)
names = ["def", "gatherpz=8", "gatherpz=2", "gathercx=4", "gathercx=1", "wg=512", "wg=128"]
for n in names:
    for l in open(f"{O}/{n}.jsonl"):
        d = json.loads(l)
        if "bwd_us" not in d: continue
        k = (d["op"] + ("+am" if d.get("argmax") else ""), "x".join(map(str, d["shape"][2:])), d["dtype"][-2:])
        t[k][n] = d["bwd_us"]
print("%-15s %-6s %-3s" % ("bwd", "shape", "dt"), " ".join("%10s" % n for n in names))
for k, v in sorted(t.items()):
    print("%-15s %-6s %-3s" % k, " ".join("%10.1f" % v.get(n, 0) for n in names))
PY
