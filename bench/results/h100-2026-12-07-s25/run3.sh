#!/usr/bin/env bash
# session 25 run 3: the max gathers' code words loaded once per strip row (8a97da0, vkmps_codes) against the
# default (HEAD), float16 and float32, 32x64x112x112 k3 s2 p1 and 64x256x56x56 k2 s2, alternating twice.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b $OUT/r && for b in vkmps vkmps_codes; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
trap 'cd $OUT && tar czf run3.tgz r && rm -rf r' EXIT
O=$OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $O/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $O/log.txt; }
for rep in 1 2; do for bin in vkmps vkmps_codes; do
  el "codes $rep $bin"
  VKMPS_TUNE=gvw=8 timeout 100 /tmp/b/$bin bench --ops max,dilated-max --dtype float32,float16 --shapes "32,64,112,112,3,2,1;64,256,56,56,2,2,0" --iters 10 > $O/codes_${rep}_${bin}.txt 2>&1
  el "rc $?"
done; done
el done
