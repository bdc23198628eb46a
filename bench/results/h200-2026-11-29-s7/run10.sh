#!/bin/bash
# Issue 21: every direct forward pass over several destination rows an invocation (main's row loop; the
# max forwards' passes already take them): oy=2 and oy=4 against the default, every kind, float32 and
# float16, on the two large shapes, alternating twice.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run10; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/run10.tgz -C $OUT run10; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
timeout 60 $B/vkmps bench --ops max --dtype float16 --shapes "$S" --iters 3 > /dev/null 2>&1
for rep in 1 2; do
  for tu in def oy2 oy4; do
    s $tu $rep
    case $tu in def) T="";; oy2) T=oy=2;; oy4) T=oy=4;; esac
    VKMPS_TUNE=$T timeout 150 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 --json $O/$tu.$rep.jsonl > $O/$tu.$rep.txt 2>&1
  done
done
s done
cat $O/log.txt
python3 - $O <<'PY'
import json, sys, collections
O = sys.argv[1]
t = collections.defaultdict(dict)
for tu in ("def", "oy2", "oy4"):
    for l in open(f"{O}/{tu}.2.jsonl"):
        d = json.loads(l)
        if "op" not in d or "fwd_us" not in d: continue
        k = (d["op"] + ("+am" if d.get("argmax") else ""), "x".join(map(str, d["shape"])) if isinstance(d.get("shape"), list) else str(d.get("shape")), d.get("dtype"))
        t[k][tu] = (d["fwd_us"], d.get("bwd_us"))
for k, v in sorted(t.items()):
    print("%-16s %-16s %-8s" % k, "  ".join("%s %7.2f/%7.2f" % (tu, *v[tu]) for tu in ("def", "oy2", "oy4") if tu in v and v[tu][1] is not None))
PY
