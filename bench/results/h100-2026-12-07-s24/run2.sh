#!/usr/bin/env bash
# Run 2 (the same warm machine, right after run 1, whose dilfwd files had
# names the device tool does not bring back): the dilated max tunings again
# under plain names, then the tunings' bit-for-bit tests on the H100.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; B=/tmp/b; [ -x $B/vkmps ] || { mkdir -p $B; for b in vkmps ops.test; do gunzip -c .devbuild/$b.gz > $B/$b; chmod +x $B/$b; done; }; i=0; for s in "" "oy=2" "ox=8,vw=8" "oy=2,ox=8,vw=8"; do i=$((i+1)); echo "VKMPS_TUNE=$s" > $OUT/dilfwd_$i.txt; VKMPS_TUNE=$s timeout 30 $B/vkmps bench --ops dilated-max --dtype float16,float32 --shapes 64,256,56,56,2,2,0 --iters 10 --repeat 3 >> $OUT/dilfwd_$i.txt 2>&1; done; (cd ops && timeout 100 $B/ops.test -test.run 'TestTuningKeepsResultsVectors|TestMaxGradientTiesAndNaN' -test.v > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt)
