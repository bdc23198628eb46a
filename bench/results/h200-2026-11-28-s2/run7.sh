#!/usr/bin/env bash
# Run 7: strided data gradients' phase GEMMs chosen for the phases that
# have taps (1 of 4 for a 1x1 stride-2 gradient): the three 1x1 stride-2
# layers of ResNet-18, data gradients under every tile (VKMPS_BENCH_SWEEP=1),
# float32 and float16; ResNet-18 steps of this build and of 9b95713
# (vkmps_old), same call.
set -u
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; o=$OUT/r; mkdir -p $o; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $o/log.txt; }
s sweep
for d in float32 float16; do echo "== $d"; (cd ops && VKMPS_BENCH_SWEEP=1 VKMPS_BENCH_DTYPE=$d VKMPS_BENCH_LARGE=1 timeout 100 $B/ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet1x1s2[^/]*/.*/dx' -test.benchtime 1x -test.count 1 -test.v 2>&1 | grep -E 'ns/op'); done > $o/sweep.txt
s resnet
m=cmd/vkmps/models/resnet18.json
a="--batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40"
for d in float32 float16; do
  for v in vkmps vkmps_old vkmps; do
    echo "== $v" >> $o/resnet18.txt
    timeout 60 $B/$v train synthetic $m $a --dtype $d --json $o/resnet18_$v.jsonl >> $o/resnet18.txt 2>&1
  done
done
s done
grep -E '^==|per training step' $o/resnet18.txt; cat $o/log.txt
