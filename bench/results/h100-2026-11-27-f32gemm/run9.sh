#!/bin/bash
# run 9 (6d29956, run 8's build; its outputs past 8 files did not come back): the weight output transform against ea37d6c;
# vkmps bench --conv and PyTorch's layers in the same run; outputs in one archive
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
B=$PWD/.devbuild; O=$OUT/r; mkdir -p $O; gunzip -f $B/*.gz 2>/dev/null; chmod +x $B/*.test $B/vkmps
trap 'tar czf $OUT/r.tgz -C $OUT r; rm -rf $O' EXIT
t0=$(date +%s); s() { echo "[$(( $(date +%s)-t0 ))s] $*" >> $O/log.txt; }
s wout
for b in ops_base ops; do for dt in float32 float16; do
  echo "== $b $dt" >> $O/wout.txt
  (cd ops && VKMPS_BENCH_LARGE=1 VKMPS_BENCH_PASSES=1 VKMPS_BENCH_DTYPE=$dt timeout 60 $B/$b.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/resnet3x3-/.*/dW' -test.benchtime 1x -test.v 2>&1 | grep -E 'ns/op|wout' >> $O/wout.txt)
done; done
s conv
timeout 120 $B/vkmps bench --conv --dtype float32,float16 --json $O/conv.jsonl > $O/conv.txt 2>&1
s torch-train
timeout 150 python3 bench/torch_training_baseline.py --iters 30 > $O/torch_training.jsonl 2>$O/torch_training.err
s done
