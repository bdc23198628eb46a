#!/usr/bin/env bash
# Max 2x2 stride 2 over 64x256 images of 58-84 pixels (and 16x256x82x82),
# forward only, float32 and float16: the rows that ran 5-13x slower than
# the copy time in bench/results/h200-2026-11-29-s11 run 5 (82x82: 735 us
# float32, 814 float16; 58x58 at speed), all measured with --warmup 30ms.
# This runs them at the bench's default warm-up (200 ms), at 30 ms and at
# 1 s, samples the GPU's clocks and throttle reasons every 200 ms
# (nvidia-smi), and times PyTorch's max_pool2d on the same shapes. If the
# default warm-up runs at speed, the slow rows were the clocks (the GPU
# idles while the host fills the inputs). Written 2026-12-07, not yet run.
#
#   bench/pool_large_max.sh [OUTDIR]   (VKMPS=path/to/vkmps if not on PATH,
#                                       PYTHON=python3, TORCH=0 to skip PyTorch)
set -uo pipefail
out=${1:-pool-large-max}
vkmps=${VKMPS:-vkmps}
mkdir -p "$out"
shapes="64,256,58,58,2,2,0;64,256,80,80,2,2,0;64,256,82,82,2,2,0;64,256,84,84,2,2,0;16,256,82,82,2,2,0"
smi=""
if command -v nvidia-smi >/dev/null 2>&1; then
	nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
		--format=csv -lms 200 >"$out/clocks.csv" 2>&1 &
	smi=$!
fi
for w in 200ms 30ms 1s; do
	echo "[$(date +%T)] vkmps, warm-up $w" | tee -a "$out/log.txt"
	"$vkmps" bench --shapes "$shapes" --ops max --dtype float32,float16 --argmax=false --warmup "$w" --iters 5 >"$out/warmup-$w.txt" 2>&1
done
if [ "${TORCH:-1}" != 0 ]; then
	echo "[$(date +%T)] PyTorch" | tee -a "$out/log.txt"
	"${PYTHON:-python3}" - >"$out/torch.txt" 2>&1 <<'PY'
import json, torch
import torch.nn.functional as F

def us(fn, iters=20):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(5):
        a.record()
        for _ in range(iters):
            fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / iters)
    return sorted(ts)[len(ts) // 2]

for dt in (torch.float32, torch.float16):
    for n, c, h in [(64, 256, 58), (64, 256, 80), (64, 256, 82), (64, 256, 84), (16, 256, 82)]:
        x = torch.randn(n, c, h, h, device="cuda", dtype=dt)
        t = us(lambda: F.max_pool2d(x, 2, 2))
        print(json.dumps({"dtype": str(dt), "shape": [n, c, h, h], "fwd_us": round(t, 1),
                          "GBps": round(x.numel() * x.element_size() * 1.25 / t / 1e3)}))
PY
fi
[ -z "$smi" ] || kill "$smi"
echo "[$(date +%T)] done" | tee -a "$out/log.txt"
grep -h ' max' "$out"/warmup-*.txt
