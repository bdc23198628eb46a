#!/bin/bash
# Diagnosis: why ResNet-18's 64-row stride-2 data gradients did not gain in the graph (run 2) as they did in
# BenchmarkConvolutionGPU: the dispatches of one profiled float16 training step (a build whose executor logs a
# dispatch profile, VKMPS_DIAG_DISPATCH=1, not committed) and the benchmark's dispatch profiles of those layers.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run3; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
VKMPS_DIAG_DISPATCH=1 timeout 100 $B/vkmps.diag train synthetic cmd/vkmps/models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 5 --dtype float16 > $O/train.txt 2> $O/diag.txt
VKMPS_BENCH_LARGE=1 VKMPS_BENCH_DTYPE=float16 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_SHAPES='^(resnet3x3s2-128|resnet1x1s2-128|stem7x7s2)$' timeout 100 $B/ops.test -test.v -test.run XXX -test.bench BenchmarkConvolutionGPU -test.benchtime 1x > $O/bench.txt 2>&1
cd $OUT && tar czf run3.tgz run3
