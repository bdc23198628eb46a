#!/bin/bash
# The pooling tests of efe99e4 on the H100 (planes per invocation by default and forced by the tunings).
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/*.test
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
cd ops && timeout 400 $B/ops.test -test.run 'Pool|Tuning|Argmax|Band' -test.v 2>&1 | grep -E -- '^(--- |FAIL|ok|PASS|panic)|Error' > $O/tests.txt; echo "rc=${PIPESTATUS[0]}" >> $O/tests.txt
