#!/bin/bash
# Winograd weight-gradient output transform with the slots outermost (ops.test) against innermost (ops_base.test), float16 and float32; float16 split counts and tile 0 on the new build.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test $B/vkmps* 2>/dev/null
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
cd ops
run() { # binary dtype gemm
  echo "== $1 $2 $3" >> $O/dw.txt
  VKMPS_GEMM=$3 VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=$2 VKMPS_BENCH_PASSES=1 timeout 60 $B/$1.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E "gpu-us|winograd_|convolution_reduce|bias_grad" >> $O/dw.txt
}
for i in 1 2; do for b in ops_base ops; do for dt in float16 float32; do s $b $dt; run $b $dt ""; done; done; done
for g in splits=16 splits=32 winograd=1,cooptile=0,splits=16 winograd=1,cooptile=0,splits=32 winograd=1,cooptile=0; do s $g; run ops float16 $g; done
s done
