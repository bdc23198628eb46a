#!/bin/bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
cd .devbuild
export VKMPS_BENCH_LARGE=1
for dt in float32 float16; do for g in "" "winograd=1,tile=0" "winograd=1,tile=1"; do
  echo "### dtype=$dt VKMPS_GEMM=$g"
  VKMPS_BENCH_DTYPE=$dt VKMPS_GEMM=$g ./ops.test -test.run '^$' -test.bench 'BenchmarkConvolutionGPU/(resnet3x3|vgg)[^/]*/.*/(fwd|dx|dW)$' -test.benchtime 1x 2>&1 | grep -E "gpu-us|FAIL|panic|Error"
done; done > $OUT/t0.txt
(cd ../ops && ../.devbuild/ops.test -test.run 'TestConvolutionWinograd' 2>&1 | tail -1) > $OUT/tests.txt
for v in vkmps_base vkmps; do for dt in float32 float16; do
  ./$v train synthetic models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps 30 --dtype $dt --json $OUT/resnet18_$v.jsonl >> $OUT/resnet18.txt 2>&1
done; done
python3 torch_resnet18.py --steps 30 > $OUT/torch_resnet18.jsonl 2>&1
python3 -c "
import json,statistics
for v in ('vkmps_base','vkmps'):
    for l in open('$OUT/resnet18_'+v+'.jsonl'):
        d=json.loads(l); s=d['gpu_ms_steps']; print(v, d['dtype'], 'wall', round(d['ms_per_step'],2), 'gpu mean', round(d['gpu_ms_per_step'],2), 'median', round(statistics.median(s),2), 'max', round(max(s),1))
for l in open('$OUT/torch_resnet18.jsonl'):
    if l.startswith('{'):
        d=json.loads(l); print('torch', d['dtype'], 'tf32', d['tf32'], 'wall', round(d['ms_per_step'],2), 'gpu', round(d['gpu_ms_per_step'],2))
"
cat $OUT/tests.txt
