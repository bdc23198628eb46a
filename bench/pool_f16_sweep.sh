#!/usr/bin/env bash
# Issue 21's float16 pooling sweep, in one go on the GPU machine (about 3
# minutes on an H100): vkmps bench of max, avg, l2 and dilated max (with
# the "+argmax" rows) in float32 and float16 on the two large shapes, under
# each candidate $VKMPS_TUNE setting; the PyTorch baseline once per type;
# per setting the joined table with its float16 speed-ups
# (bench/compare.py), then one table across settings (summary.txt).
#
#   bench/pool_f16_sweep.sh [OUTDIR]   (VKMPS=path/to/vkmps if not on PATH;
#                                       SETTINGS="def ..." to choose,
#                                       SHAPES=... for vkmps bench --shapes,
#                                       TORCH=0 to skip PyTorch,
#                                       WARMUP=200ms for the bench's default
#                                       warm-up instead of 30ms)
#
# The settings (the first is the baseline of the speed-ups; "def" is the
# kernels' defaults: the fast two-phase argmax pass, the fast max forward,
# the gathers' vector stores with two cells at stride 2, all measured on
# an H100 on 2026-11-27 with this script and made defaults):
#   def                              the defaults
#   fastmax=0                        max forward testing each tap for NaN
#   gvec=0                           gathers storing value by value
#   gvec=0,fastmax=0,argmax=2        the defaults before 2026-11-27
#   ox=8,vw=8                        8 pixels per invocation, 16-byte
#                                    loads (float16 only), two quad stores
# and, not in the default list, gathercx=4,gvw=8: gathers of 8 pixels that
# store them as one 16-byte vector in float16 (timed on an H100 on
# 2026-12-07, bench/results/h100-2026-12-07-s24: the default since then
# where float16 gathers at stride 2 take 4 cells; gvw=4 is the form before).
# Each changes speed only (TestTuningKeepsResults*). Read summary.txt: per
# kernel, shape and pass, the float32 and float16 times under every setting,
# the float16 speed-up of each setting over the baseline's float32 and over
# its own float32, and the best float16 over the best float32 (for defaults
# chosen per type).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-pool-f16-out}
vkmps=${VKMPS:-vkmps}
settings=${SETTINGS:-def fastmax=0 gvec=0 gvec=0,fastmax=0,argmax=2 ox=8,vw=8}
shapes=${SHAPES:-32,64,112,112,3,2,1;64,256,56,56,2,2,0}
mkdir -p "$out"
for s in $settings; do
	tune=$s
	[ "$s" = def ] && tune=
	echo "== vkmps bench VKMPS_TUNE=$tune" >&2
	VKMPS_TUNE=$tune "$vkmps" bench --ops max,avg,l2,dilated-max --dtype float32,float16 --shapes "$shapes" \
		--warmup "${WARMUP:-30ms}" --iters 10 --repeat 2 --json "$out/vkmps_$s.jsonl" ${VKMPS_BENCH_FLAGS:-} > /dev/null
done
if [ "${TORCH:-1}" != 0 ] && python3 -c 'import torch' 2>/dev/null; then
	PYTHONUNBUFFERED=1 python3 "$here/torch_pool_baseline.py" --iters "${TORCH_ITERS:-50}" > "$out/torch.jsonl"
	PYTHONUNBUFFERED=1 python3 "$here/torch_pool_baseline.py" --iters "${TORCH_ITERS:-50}" --dtype float16 > "$out/torch16.jsonl"
else
	echo "no PyTorch: tables without it" >&2
	: > "$out/torch.jsonl"
	: > "$out/torch16.jsonl"
fi
for s in $settings; do
	echo "== $s"
	python3 "$here/compare.py" "$out/vkmps_$s.jsonl" "$out/torch.jsonl" "$out/torch16.jsonl"
done > "$out/compare.txt"
python3 - "$out" $settings > "$out/summary.txt" <<'EOF'
import json, sys
out, settings = sys.argv[1], sys.argv[2:]
times = {}  # (op, shape, pass) -> {(setting, dtype): us}
order = []
for s in settings:
    with open(f"{out}/vkmps_{s}.jsonl") as f:
        for line in f:
            r = json.loads(line)
            if "fwd_us" not in r or "shape" not in r:
                continue
            name = r["op"] + (" +argmax" if r.get("argmax") else "")
            shape = "x".join(map(str, r["shape"])) + f" k{r['kernel']} s{r['stride']} p{r['pad']}"
            for p in ("fwd", "bwd"):
                k = (name, shape, p)
                if k not in times:
                    times[k] = {}
                    order.append(k)
                times[k][(s, r["dtype"])] = r[f"{p}_us"]
base = settings[0]
print(f"us per kernel, float32/float16, per setting; 'x' = float16 speed-up over {base}'s float32 (target 1.5),")
print("'=' = over the same setting's float32; best: the setting of the highest 'x'")
for i, s in enumerate(settings):
    print(f"  [{i}] {s}")
print(f"{'kernel':20} {'shape':24} {'pass':4} " + " ".join(f"{'[%d] f32/f16 x =' % i:>27}" for i in range(len(settings))) + "   best x; best f32 [i], f16 [j]: f32/f16")
for k in order:
    t = times[k]
    b32 = t.get((base, "float32"))
    cells, best = [], None
    for s in settings:
        a, h = t.get((s, "float32")), t.get((s, "float16"))
        x = b32 / h if b32 and h else None
        if x and (best is None or x > best[0]):
            best = (x, s)
        cells.append(f"{a or 0:6.1f}/{h or 0:6.1f} {x or 0:4.2f}x {(a / h if a and h else 0):4.2f}=")
    f32s = [(t[(s, "float32")], i) for i, s in enumerate(settings) if (s, "float32") in t]
    f16s = [(t[(s, "float16")], i) for i, s in enumerate(settings) if (s, "float16") in t]
    bb = ""
    if f32s and f16s:
        (a, i), (h, j) = min(f32s), min(f16s)
        bb = f"; [{i}] [{j}]: {a / h:.2f}"
    print(f"{k[0]:20} {k[1]:24} {k[2]:4} " + " ".join(f"{c:>27}" for c in cells) + (f"   {best[0]:.2f} [{settings.index(best[1])}]{bb}" if best else ""))
EOF
cat "$out/summary.txt"
