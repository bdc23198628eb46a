#!/bin/bash
# Issue 21: the argmax passes' two-phase fast pass on halves (the working tree after 4f8e776) against 4f8e776
# (vkmps_old), max and dilated max with their argmax rows, float32 and float16, on the three bench shapes,
# after a warm-up pass, alternating twice; then ResNet-18's float16 step with each build.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run12; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/run12.tgz -C $OUT run12; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
for b in vkmps_old vkmps; do timeout 100 $B/$b bench --ops max,dilated-max --dtype float32,float16 --iters 3 > /dev/null 2>&1; done
for rep in 1 2; do
  for b in vkmps_old vkmps; do
    s $b $rep
    timeout 150 $B/$b bench --ops max,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --json $O/$b.$rep.jsonl > $O/$b.$rep.txt 2>&1
  done
done
R="cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype float16"
for rep in 1 2; do
  for b in vkmps_old vkmps; do
    s resnet $b $rep
    timeout 100 $B/$b train synthetic $R --json $O/resnet_$b.jsonl >> $O/resnet_$b.txt 2>&1
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
for b in ("vkmps_old", "vkmps"):
    for l in open(f"{O}/resnet_{b}.jsonl"):
        d = json.loads(l)
        print(b, d["dtype"], "ms %.3f gpu %.3f max %.3f max-gradient %.3f" % (d["ms_per_step"], d["gpu_ms_per_step"], d["profile_ms"].get("max", 0), d["profile_ms"].get("max-gradient", 0)))
PY
sed -n '/speed-up/,$p' $O/vkmps.2.txt
