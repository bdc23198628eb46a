#!/bin/bash
# Issue 21: the max forward on halves over 4 destination rows an invocation by default (the working tree
# after d383657) against d383657 (1 row), max on the two large shapes alternating twice; then every kind on
# the three bench shapes, float32 and float16, with PyTorch's baseline and bench/compare.py.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run9; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/run9.tgz -C $OUT run9; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
S="32,64,112,112,3,2,1;64,256,56,56,2,2,0"
timeout 60 $B/vkmps bench --ops max --argmax=false --dtype float16 --shapes "$S" --iters 3 > /dev/null 2>&1
for rep in 1 2; do
  for b in vkmps_old vkmps; do
    s $b $rep
    timeout 100 $B/$b bench --ops max --argmax=false --dtype float32,float16 --shapes "$S" --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1
  done
done
s def
timeout 200 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
python3 bench/compare.py --md $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.md 2>&1
s done
cat $O/log.txt
for f in $O/vkmps_old.2.txt $O/vkmps.2.txt; do echo "== $f"; grep -E '^\s+[0-9]+x.* max' $f ; done
sed -n '/speed-up/,$p' $O/def.txt
