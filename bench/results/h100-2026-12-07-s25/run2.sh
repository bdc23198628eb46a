#!/usr/bin/env bash
# session 25 run 2: where the direct stores lose (dispatch profiles, X as halves and as float32, default against
# coopdirect=0), then the max gathers' code words loaded once per strip row (8a97da0, vkmps_codes) against HEAD, alternating.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b $OUT/r && for b in vkmps vkmps_codes ops.test; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
trap 'cd $OUT && tar czf run2.tgz r && rm -rf r' EXIT
O=$OUT/r
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $O/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $O/log.txt; }
for G in "" coopdirect=0 winoxhalf=0 winoxhalf=0,coopdirect=0; do
  el "prof $G"; echo "== $G" >> $O/prof.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet3x3-256|stem7x7s2|resnet3x3s2-256)$' timeout 60 /tmp/b/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/prof.txt 2>&1)
done
for rep in 1 2; do for bin in vkmps vkmps_codes; do
  el "codes $rep $bin"; echo "== $rep $bin" >> $O/codes.txt
  VKMPS_TUNE=gvw=8 timeout 40 /tmp/b/$bin bench --ops max,dilated-max --dtype float32,float16 --shapes "32,64,112,112,3,2,1;64,256,56,56,2,2,0" --iters 10 --repeat 2 >> $O/codes.txt 2>&1
done; done
el done
