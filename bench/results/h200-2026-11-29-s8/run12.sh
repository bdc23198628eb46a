#!/bin/bash
# Correctness on the real tensor cores (not the emulated build): the convolution family's cooperative-matrix tests,
# every tile including the new 64-row ones, the Winograd products on tiles 2, 3, 10, the default paths of float16
# images, and the bias gradient's quads, on the H200 (no validation layer there).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run12; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
cd ops && VKMPS_REQUIRE_DEVICE=1 timeout 400 $B/ops.test -test.v -test.count 1 -test.run "${RUN:-TestConvolutionCoopMatAgreesWithTiles|TestConvolutionWinogradCoopMat|TestConvolutionWinogradCoopParts|TestConvolutionCoopPacked|TestConvolutionBiasGradientQuads|TestConvolutionMatchesReference|TestConvolutionEveryPath}" > $O/tests.txt 2>&1
echo rc=$? >> $O/tests.txt
grep -E '^(--- |ok|FAIL|PASS|rc=)|    --- (FAIL|SKIP)' $O/tests.txt > $O/summary.txt
