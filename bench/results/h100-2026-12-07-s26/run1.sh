#!/usr/bin/env bash
# session 26 run 1: where the tensor-core GEMMs' time goes, and the Winograd products' staged tiles.
# (a) Four ops.test builds: this tree (its defaults are HEAD's dispatches) and three diagnostic builds of HEAD's
#     glsl/gemm_coopmat.glsl (not kept, see README): nostore (the epilogue's global stores skipped behind a condition
#     never true), nomma (no coopMatMulAddNV), nofetch (each tile's operands fetched from memory for its first slice
#     only). Float16 dispatch profiles of the forward, data and weight gradient passes.
# (b) The 3x3 forwards' and weight gradients' Winograd products on cooperative-matrix tiles, forced (coopmat=1,cooptile=N;
#     11 and 12 are new: 16 and 8 subgroups of 2 x 4 matrices), the 1x1 forwards' GEMMs on 128-row tiles, and the
#     pipelines' register counts (TestConvPipelineStatistics).
# (c) coopstage=1 (the Winograd products' tiles staged whole, 16-byte stores) against the default, alternating twice:
#     dispatch profiles of the 3x3 layers, then the ResNet-18 float16 training step.
# (d) TestConvolutionWinogradCoopStage and TestConvolutionWinogradCoopDirect on the real builds.
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
mkdir -p /tmp/b $OUT/r && for b in ops.test ops_nostore.test ops_nomma.test ops_nofetch.test vkmps; do gunzip -c .devbuild/$b.gz > /tmp/b/$b; chmod +x /tmp/b/$b; done
O=$OUT/r
snap(){ (cd $OUT && tar czf run1.tgz r); }
trap 'snap; rm -rf $OUT/r' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv > $O/gpu.txt 2>&1
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 ))s] $*" | tee -a $O/log.txt; }
el "stats"
(cd ops && VKMPS_CONV_STATS=1 timeout 40 /tmp/b/ops.test -test.run 'TestConvPipelineStatistics' -test.v > $O/stats.txt 2>&1); snap
for rep in 1 2; do for G in "" coopstage=1; do
  el "stage $rep $G"; echo "== $rep $G" >> $O/stage.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet3x3-128|resnet3x3-256|resnet3x3-512|vgg3x3-128)$' timeout 45 /tmp/b/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/(fwd|dx)$' -test.benchtime 1x >> $O/stage.txt 2>&1)
done; done; snap
for G in coopmat=1,cooptile=0 coopmat=1,cooptile=6 coopmat=1,cooptile=9 coopmat=1,cooptile=2 coopmat=1,cooptile=7 coopmat=1,cooptile=11 coopmat=1,cooptile=12; do
  el "tiles $G"; echo "== $G" >> $O/tiles.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet3x3-128)$' timeout 35 /tmp/b/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/(fwd|dW)$' -test.benchtime 1x >> $O/tiles.txt 2>&1)
done; snap
for b in ops ops_nostore ops_nomma ops_nofetch; do
  el "diag $b"; echo "== $b" >> $O/diag.txt
  (cd ops && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet3x3-64|resnet1x1-512-2048)$' timeout 40 /tmp/b/$b.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x >> $O/diag.txt 2>&1)
done; snap
for G in coopmat=1,cooptile=3 coopmat=1,cooptile=11 coopmat=1,cooptile=2 coopmat=1,cooptile=12; do
  el "gemm $G"; echo "== $G" >> $O/gemm.txt
  (cd ops && VKMPS_GEMM=$G VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_SHAPES='^(resnet1x1-512-2048|gemm1x1-1024)$' timeout 25 /tmp/b/ops.test -test.v -test.run XXX -test.bench 'BenchmarkConvolutionGPU/.*/.*/fwd$' -test.benchtime 1x >> $O/gemm.txt 2>&1)
done; snap
for rep in 1 2; do for G in def coopstage=1; do
  el "resnet $rep $G"; a=(); [ $G != def ] && a=(--conv-tuning $G)
  timeout 30 /tmp/b/vkmps train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 40 --dtype float16 "${a[@]}" > $O/resnet_${rep}_$G.txt 2>&1
done; done; snap
el "tests"
(cd ops && timeout 60 /tmp/b/ops.test -test.run 'TestConvolutionWinogradCoopStage|TestConvolutionWinogradCoopDirect' -test.v > $O/tests.txt 2>&1; echo rc $? >> $O/tests.txt)
el done
