#!/bin/bash
# run 1 (one H100 session, both binaries): the device recipe's command, as
# sent; from the repository root, binaries in .devbuild-fetch ($OUT: the
# run's output folder).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig; cd .devbuild-fetch
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt
export VKMPS_BENCH_LARGE=1
B='BenchmarkConvolutionGPU/(resnet|stem|vgg)[^/]*/.*/(fwd|dx)$'
for d in float32 float16; do for g in "" "winograd=0"; do for b in ops_base.test ops.test; do
	echo "## $b VKMPS_BENCH_DTYPE=$d VKMPS_GEMM=$g" >> $OUT/fetch.txt
	VKMPS_BENCH_DTYPE=$d VKMPS_GEMM=$g timeout 25 ./$b -test.run '^$' -test.bench "$B" -test.benchtime 1x 2>&1 | grep -E 'gpu-us|FAIL|panic|rror' >> $OUT/fetch.txt
done; done; done
date >> $OUT/fetch.txt
cd ../ops && timeout 100 ../.devbuild-fetch/ops.test -test.run 'Conv|FullyConnected' 2>&1 | tail -5 > $OUT/tests.txt; echo rc=$? >> $OUT/tests.txt
