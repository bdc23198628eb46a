#!/bin/bash
# 0b384d0's pooling tests on the H200 (real shaderFloat16 arithmetic; no validation layer there): the argmax
# passes against the reference, the tunings' bit-for-bit checks (halves against half=0), bands, the choices.
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/run6; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*
trap 'cd $OUT && tar czf run6.tgz run6' EXIT
cd ops
VKMPS_REQUIRE_DEVICE=1 timeout 400 $B/ops.test -test.count=1 -test.timeout 380s -test.v \
  -test.run 'TestArgmaxPassesMatchReference|TestTuningKeepsResults|TestHalfArithmeticPasses|TestArgmaxHalfWorkgroup|TestStripRowsByPass|TestPoolingBands|TestPooling' > $O/tests.txt 2>&1
echo "exit $?" >> $O/tests.txt
grep -E "^(--- |ok|FAIL|PASS|exit)" $O/tests.txt | grep -v "^--- PASS" > $O/summary.txt
