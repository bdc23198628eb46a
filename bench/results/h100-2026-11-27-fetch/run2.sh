#!/bin/bash
# run 2 (a second H100 session): VGG alone, float16, each build several
# times; then every layer, float16, under winograd=0,coopmat=0 (the tiled
# path) and winograd=0, with ops_v2.test (diagnostic, see README).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; cd .devbuild-fetch
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device2.txt
export VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16
V='BenchmarkConvolutionGPU/vgg[^/]*/.*/(fwd|dx)$'
A='BenchmarkConvolutionGPU/(resnet|stem|vgg)[^/]*/.*/(fwd|dx)$'
o=$OUT/fetch2.txt
one() {
	echo "## $1 VKMPS_BENCH_DTYPE=float16 VKMPS_GEMM=$2" >> $o
	VKMPS_GEMM=$2 timeout 30 ./$1 -test.run '^$' -test.bench "$3" -test.benchtime 1x 2>&1 | grep -E 'gpu-us|FAIL|panic|rror' >> $o
}
date >> $o
for g in "" "winograd=0"; do for b in ops.test ops_base.test ops_v2.test ops.test ops_base.test; do one $b "$g" "$V"; done; done
for b in ops_base.test ops.test; do one $b "winograd=0,coopmat=0" "$A"; done
for b in ops_base.test ops.test ops_v2.test; do one $b "winograd=0" "$A"; done
date >> $o
