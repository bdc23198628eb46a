#!/bin/bash
# Issue 21: main's row loop only where OY > 1 (run 10's loop form cost the argmax passes at one row), and
# the float16 average forward on 4 rows by default (the working tree after 4c5efcd), against 4c5efcd
# (vkmps_old): every kind, float32 and float16, on the two large shapes, after a warm-up pass, alternating.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run11; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/run11.tgz -C $OUT run11; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
for b in vkmps_old vkmps; do timeout 100 $B/$b bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes "$S" --iters 3 > /dev/null 2>&1; done
for rep in 1 2; do
  for b in vkmps_old vkmps; do
    s $b $rep
    timeout 150 $B/$b bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 --json $O/$b.$rep.jsonl > $O/$b.$rep.txt 2>&1
  done
done
s done
cat $O/log.txt
python3 - $O <<'PY'
import json, sys, collections
O = sys.argv[1]
t = collections.defaultdict(dict)
for b in ("vkmps_old", "vkmps"):
    for rep in (1, 2):
        for l in open(f"{O}/{b}.{rep}.jsonl"):
            d = json.loads(l)
            if "fwd_us" not in d: continue
            k = (d["op"] + ("+am" if d.get("argmax") else ""), "x".join(map(str, d["shape"])), d["dtype"])
            t[k][(b, rep)] = "%6.1f/%6.1f" % (d["fwd_us"], d["bwd_us"])
for k, v in sorted(t.items()):
    print("%-16s %-14s %-8s" % k, "  ".join("%s.%d %s" % (b, r, v.get((b, r), "-")) for b in ("vkmps_old", "vkmps") for r in (1, 2)))
PY
sed -n '/speed-up/,$p' $O/vkmps.2.txt
