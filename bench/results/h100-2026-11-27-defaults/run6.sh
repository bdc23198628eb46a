#!/usr/bin/env bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $O/gpu.txt 2>&1
(cd ops && VKMPS_POOL_STATS=1 timeout 60 $B/ops.test -test.run 'TestPool(Pipeline|Gather)Statistics' -test.v > $O/stats.txt 2>&1)
VKMPS=$B/vkmps timeout 420 bash bench/pool_f16_sweep.sh $O/sweep > $O/sweep.log 2>&1
echo rc=$? >> $O/sweep.log
