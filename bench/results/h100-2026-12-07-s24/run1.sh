#!/usr/bin/env bash
# session 24 run 1: issue 21 float16 gradient sweep, dilated fwd tunings, gpu tests, codes-once variant, large max.
# Steps in priority order; later ones skipped past LIMIT seconds.
set -u
LIMIT=${LIMIT:-330}
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b && for b in vkmps vkmps_codes ops.test; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $OUT/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $OUT/log.txt; }
late(){ [ $(( $(date +%s)-T0 )) -gt $LIMIT ] && { el "skip $1"; return 0; }; return 1; }
el sweep
VKMPS=/tmp/b/vkmps SETTINGS="def gathercx=4 gathercx=4,gvw=8 gathercx=4,gvw=8,gatherpz=8" WARMUP=200ms timeout 300 bash bench/pool_f16_sweep.sh $OUT/sweep > $OUT/sweep.log 2>&1
el dilfwd
for s in "" "oy=2" "ox=8,vw=8" "oy=2,ox=8,vw=8"; do
  VKMPS_TUNE=$s timeout 30 /tmp/b/vkmps bench --ops dilated-max --dtype float16,float32 --shapes 64,256,56,56,2,2,0 --iters 10 --repeat 3 > "$OUT/dilfwd_${s:-def}.txt" 2>&1
done
late tests || { el tests; (cd ops && timeout 90 /tmp/b/ops.test -test.run 'TestTuningKeepsResultsVectors|TestFloat16GradientMatchesReference|TestMaxGradientTiesAndNaN' -test.v > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt); }
late codes || { el codes; for bin in vkmps vkmps_codes; do for s in "" "gathercx=4,gvw=8"; do
  VKMPS_TUNE=$s timeout 30 /tmp/b/$bin bench --ops max,dilated-max --dtype float32,float16 --shapes "32,64,112,112,3,2,1;64,256,56,56,2,2,0" --iters 10 --repeat 2 > "$OUT/codes_${bin}_${s:-def}.txt" 2>&1
done; done; }
late large || { el large; VKMPS=/tmp/b/vkmps timeout 120 bash bench/pool_large_max.sh $OUT/large > $OUT/large.log 2>&1; }
el done
