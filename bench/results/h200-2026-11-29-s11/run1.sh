#!/bin/bash
# The gathers' vector loads (dy as quads or pairs, the max gathers' codes from the words holding a window row's):
# the new build (vkmps) by default and under gvload=0 (loads value by value) against 0a6d454 (vkmps.old), every kind,
# alternating twice; the gradient and tuning tests on the GPU; then the new build's table against PyTorch's baseline.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run1; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps* $B/ops.test
trap 'cd $OUT && tar czf run1.tgz run1' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
timeout 60 $B/vkmps.old bench --ops max --dtype float32 --iters 3 > /dev/null 2>&1
for rep in 1 2; do for b in old new gvload0; do
  s "$rep $b"
  case $b in
    old) timeout 120 $B/vkmps.old bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1 ;;
    new) timeout 120 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1 ;;
    gvload0) VKMPS_TUNE=gvload=0 timeout 120 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$b.$rep.txt 2>&1 ;;
  esac
done; done
s tests
(cd ops && timeout 240 $B/ops.test -test.run 'Gradient|TuningKeepsResults|ArgmaxState|GatherLoads' -test.v > $O/tests.txt 2>&1; echo "rc $?" >> $O/tests.txt)
s def
timeout 200 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
python3 bench/compare.py --md $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.md 2>&1
s done
