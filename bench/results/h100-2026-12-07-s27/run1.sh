#!/usr/bin/env bash
# session 27 run 1 (written for the next GPU session; no device was lent in session 27):
# (a) the KHR builds on the H100: TestCooperativeMatrixLimits (both lists), TestConvolutionCoopKHR (the real builds by
#     default through VK_NV_cooperative_matrix and under coopkhr=1 through VK_KHR_cooperative_matrix, against the
#     reference), TestConvolutionCoopMatAgreesWithTiles/coopmat (NV builds, every tile);
# (b) the ResNet-18 float16 training step, default (NV) against coopkhr=1 (KHR), alternating twice;
# (c) float16 dispatch profiles of the 3x3 and 1x1 layers, default against coopkhr=1;
# (d) session 26's run 2 (never run): the Winograd products on tiles 11 and 12 (winograd=1,cooptile=N).
# Needs in .devbuild: ops.test.gz, vk.test.gz, vkmps.gz of the same tree (go build -ldflags='-s -w', go test -c).
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b $OUT/r && for b in ops.test vk.test vkmps; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
O=$OUT/r
snap(){ (cd $OUT && tar czf run1.tgz r); }
trap 'snap; rm -rf $OUT/r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $O/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $O/log.txt; }
el tests
(cd vk && timeout 30 /tmp/b/vk.test -test.run 'TestCooperativeMatrixLimits' -test.v > $O/tests.txt 2>&1)
(cd ops && timeout 120 /tmp/b/ops.test -test.run 'TestConvolutionCoopKHR|TestConvolutionCoopMatAgreesWithTiles/^coopmat$' -test.v >> $O/tests.txt 2>&1)
snap
for rep in 1 2; do for G in def coopkhr=1; do
  el "resnet $rep $G"; a=(); [ $G != def ] && a=(--conv-tuning $G)
  echo "== $rep $G" >> $O/resnet.txt
  timeout 60 /tmp/b/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype float16 "${a[@]}" >> $O/resnet.txt 2>&1
done; done; snap
for rep in 1 2; do for G in "" coopkhr=1; do
  el "layers $rep $G"; echo "== $rep $G" >> $O/layers.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet3x3-256|resnet1x1-512-2048|gemm1x1-1024)$' timeout 60 /tmp/b/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/layers.txt 2>&1)
done; done; snap
for G in "" winograd=1,cooptile=12 winograd=1,cooptile=11; do
  el "wino $G"; echo "== $G" >> $O/wino.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet3x3-128|resnet3x3-256)$' timeout 45 /tmp/b/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/(fwd|dx)$' -test.benchtime 1x >> $O/wino.txt 2>&1)
done
el done
