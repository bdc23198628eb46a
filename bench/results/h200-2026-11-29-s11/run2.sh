#!/bin/bash
# The gathers' loads of several planes first (gatherahead): the new build (vkmps) by default, plane by plane
# (gatherahead=1) and 2 or 4 planes ahead, against 0a6d454 (vkmps.old), every kind, alternating twice; the tuning and
# float16 gradient tests on the GPU; then the new build's table against PyTorch's baseline.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run2; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps* $B/ops.test
trap 'cd $OUT && tar czf run2.tgz run2' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
timeout 60 $B/vkmps bench --ops max --dtype float16 --iters 3 > /dev/null 2>&1
timeout 60 $B/vkmps.old bench --ops max --dtype float32 --iters 3 > /dev/null 2>&1
b() { s "$1"; local n=$1; shift; timeout 120 "$@" bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 > $O/$n.txt 2>&1; }
for rep in 1 2; do
  b old.$rep $B/vkmps.old
  b new.$rep $B/vkmps
  VKMPS_TUNE=gatherahead=1 b ga1.$rep $B/vkmps
done
VKMPS_TUNE=gatherahead=2 b ga2.1 $B/vkmps
VKMPS_TUNE=gatherahead=4 b ga4.1 $B/vkmps
VKMPS_TUNE=gatherahead=8,gatherpz=8 b ga8pz8.1 $B/vkmps
s tests
(cd ops && timeout 150 $B/ops.test -test.run 'TestTuningKeepsResults|TestFloat16GradientMatchesReference|TestMaxGradientTiesAndNaN' -test.v > $O/tests.txt 2>&1; echo "rc $?" >> $O/tests.txt)
s def
timeout 200 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s torch
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 > $O/torch.jsonl 2> $O/torch.err
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_pool_baseline.py --iters 50 --dtype float16 > $O/torch16.jsonl 2>> $O/torch.err
python3 bench/compare.py $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.txt 2>&1
python3 bench/compare.py --md $O/def.jsonl $O/torch.jsonl $O/torch16.jsonl > $O/compare.md 2>&1
s done
