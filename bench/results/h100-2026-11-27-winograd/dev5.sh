#!/bin/bash
for f in .gl/*.deb; do dpkg -x $f / 2>/dev/null; done; ldconfig
cd .devbuild
for dt in float32 float16; do for steps in 40; do
  ./vkmps train synthetic models/resnet18.json --batch 32 --input x=3,224,224 --input labels=1000,1,1 --steps $steps --dtype $dt --json $OUT/steps.jsonl > /dev/null 2>&1
done; done
python3 -c "
import json
for l in open('$OUT/steps.jsonl'):
    d=json.loads(l); print(d['dtype'], d['steps'], round(d['ms_per_step'],2), [round(x,1) for x in d['gpu_ms_steps']])
"
