#!/bin/bash
# Issue 21: planes only where a dispatch keeps 2^17 invocations (fewerPlanes): ResNet-18 steps (its global average
# pool gradient), and the pooling kernels by default on the three bench shapes.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/vkmps*
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s resnet
for dt in float32 float16; do
  timeout 60 $B/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $O/resnet18.jsonl >> $O/resnet18.txt 2>&1
done
s bench
timeout 150 $B/vkmps bench --ops max,avg,l2,dilated-max --dtype float32,float16 --warmup 30ms --iters 10 --repeat 2 --json $O/def.jsonl > $O/def.txt 2>&1
s done
