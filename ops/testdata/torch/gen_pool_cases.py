#!/usr/bin/env python3
"""Generate pool_cases.json: PyTorch reference outputs and gradients for the
vkmps pooling kernels (package ops/ref checks its CPU reference against it;
the GPU kernels are checked against both).

Run from the repository root on a machine with PyTorch (CUDA if available):

    python3 ops/testdata/torch/gen_pool_cases.py            # writes pool_cases.json beside this script
    python3 ops/testdata/torch/gen_pool_cases.py --plan     # lists the cases; needs no torch

Deterministic: geometry comes from random.Random(SEED), data from a CPU
torch.Generator seeded with SEED, so the file depends only on the PyTorch
version (and, for the sums, on the device's float32 rounding). Every case is
computed on the chosen device (CUDA when available) and recomputed on the CPU;
the two must agree (max forward exactly, everything else to 1e-5 relative).
The stored values are the device's.

Cases, all NCHW float32 with explicit symmetric padding:
  max  F.max_pool2d(kernel 1..5 and rectangular, stride 1..3, padding 0..k//2,
       dilation 1..3, ceil_mode both); a few with tied inputs (values in
       {-1, -0.5, 0, 0.5, 1}) when PyTorch picks the first maximum on the
       device (checked at start-up; PyTorch uses `val > maxval`, the vkmps
       tie rule). No NaN: PyTorch lets the LAST NaN win, vkmps the first.
  avg  F.avg_pool2d(count_include_pad both ways, ceil_mode both).
  l2   F.lp_pool2d(norm_type=2), no padding (it has none), ceil_mode=False:
       lp_pool2d computes avg_pool2d(x^2) * (kh*kw) and with ceil_mode a
       partial window is divided by its clipped count and then multiplied by
       the full kh*kw, which is not a true L2 norm of the window; vkmps
       (and MPS) compute sqrt(sum of squares), so ceil_mode is left out.
Padding is kept <= kernel//2 (PyTorch requires pad <= effective_kernel/2;
older versions checked kernel/2), and geometries where a window would have
no in-image tap (possible with dilation) are redrawn: PyTorch returns -inf
and a bogus index there.

vkmps maps a case to its kernels as SPEC.md's explicit-pads policy does:
offset = floor(((k-1)*d+1)/2) - pad per axis, edge mode Clamp, zero pads =
pads for avg with count_include_pad (else 0), destination = output_shape.

JSON layout (format 1): {"meta": {...}, "cases": [{"name", "op", "kernel":
[kh,kw], "stride", "padding", "dilation", "ceil_mode", "count_include_pad",
"input_shape": [n,c,h,w], "input", "output_shape", "output", "grad_output",
"grad_input"}]}; data are flat NCHW lists. Each float is the shortest decimal
that rounds (via float64) back to the same float32.
"""

import argparse
import datetime
import json
import math
import os
import platform
import random
import struct
import sys

SEED = 20240611
FORMAT = 1
MAX_SIDE = 13

# (op, tied inputs, count) of the random cases, after the fixed ones.
RANDOM_PLAN = [("max", False, 64), ("max", True, 10), ("avg", False, 64), ("l2", False, 28)]

# Fixed cases: the geometry vkmps documents by hand, then global and
# rectangular windows. Fields: op, kernel, stride, padding, dilation,
# ceil_mode, count_include_pad, input_shape, ties.
FIXED = [
    ("max", [1, 2], [1, 1], [0, 0], [1, 3], False, False, [1, 1, 1, 8], False),  # k=2 d=3 taps -2,+1
    ("max", [2, 2], [2, 2], [0, 0], [1, 1], False, False, [1, 2, 4, 6], False),
    ("max", [3, 3], [2, 2], [1, 1], [1, 1], True, False, [2, 3, 7, 7], False),
    ("max", [5, 5], [1, 1], [0, 0], [1, 1], False, False, [1, 2, 5, 5], False),  # global
    ("max", [2, 5], [1, 3], [1, 2], [2, 1], True, False, [1, 2, 9, 11], False),
    ("max", [3, 3], [1, 1], [1, 1], [1, 1], False, False, [1, 2, 5, 6], True),  # ties
    ("avg", [2, 2], [2, 2], [0, 0], [1, 1], False, True, [1, 2, 4, 6], False),
    ("avg", [3, 3], [2, 2], [1, 1], [1, 1], True, True, [1, 2, 6, 7], False),
    ("avg", [3, 3], [2, 2], [1, 1], [1, 1], True, False, [1, 2, 6, 7], False),
    ("avg", [4, 2], [3, 1], [2, 1], [1, 1], False, True, [2, 1, 8, 5], False),
    ("avg", [4, 2], [3, 1], [2, 1], [1, 1], False, False, [2, 1, 8, 5], False),
    ("avg", [5, 5], [1, 1], [0, 0], [1, 1], False, True, [1, 3, 5, 5], False),  # global
    ("l2", [2, 2], [2, 2], [0, 0], [1, 1], False, False, [1, 2, 4, 6], False),
    ("l2", [3, 1], [1, 2], [0, 0], [1, 1], False, False, [2, 3, 7, 9], False),
]


def out_size(size, k, s, p, d, ceil):
    """PyTorch's pooling_output_shape for one axis."""
    ke = (k - 1) * d + 1
    o = (size + 2 * p - ke + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


def axis_ok(size, k, s, p, d, o):
    """Every window of the axis has at least one tap inside [0, size)."""
    if o < 1:
        return False
    for i in range(o):
        start = i * s - p
        if not any(0 <= start + t * d < size for t in range(k)):
            return False
    return True


def make_spec(op, kernel, stride, pad, dil, ceil, cip, shape, ties):
    kh, kw = kernel
    sh, sw = stride
    ph, pw = pad
    dh, dw = dil
    oh = out_size(shape[2], kh, sh, ph, dh, ceil)
    ow = out_size(shape[3], kw, sw, pw, dw, ceil)
    ok = (
        ph <= kh // 2
        and pw <= kw // 2
        and axis_ok(shape[2], kh, sh, ph, dh, oh)
        and axis_ok(shape[3], kw, sw, pw, dw, ow)
    )
    return ok, {
        "op": op,
        "kernel": [kh, kw],
        "stride": [sh, sw],
        "padding": [ph, pw],
        "dilation": [dh, dw],
        "ceil_mode": bool(ceil),
        "count_include_pad": bool(cip),
        "input_shape": list(shape),
        "output_shape": [shape[0], shape[1], oh, ow],
        "ties": bool(ties),
    }


def random_spec(rng, op, ties):
    while True:
        kh = rng.randint(1, 5)
        kw = kh if rng.random() < 0.5 else rng.randint(1, 5)
        sh = rng.randint(1, 3)
        sw = sh if rng.random() < 0.6 else rng.randint(1, 3)
        dh = dw = 1
        if op == "max" and rng.random() < 0.5:
            dh = rng.randint(1, 3)
            dw = dh if rng.random() < 0.5 else rng.randint(1, 3)
        if op == "l2":
            ph = pw = 0
            ceil = False
        else:
            ph = rng.randint(0, kh // 2)
            pw = rng.randint(0, kw // 2)
            ceil = rng.random() < 0.5
        cip = op == "avg" and rng.random() < 0.5
        keh, kew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
        h = rng.randint(max(1, keh - 2 * ph), MAX_SIDE)
        w = rng.randint(max(1, kew - 2 * pw), MAX_SIDE)
        n = rng.randint(1, 2)
        c = rng.randint(1, 5) if h * w <= 64 else rng.randint(1, 3)
        ok, spec = make_spec(op, [kh, kw], [sh, sw], [ph, pw], [dh, dw], ceil, cip, [n, c, h, w], ties)
        if ok:
            return spec


def plan():
    """The case list, pure Python (no torch), deterministic."""
    rng = random.Random(SEED)
    specs = []
    for f in FIXED:
        ok, spec = make_spec(*f)
        assert ok, f
        specs.append(spec)
    for op, ties, count in RANDOM_PLAN:
        for _ in range(count):
            specs.append(random_spec(rng, op, ties))
    for i, s in enumerate(specs):
        s["name"] = "%s_%03d_k%dx%d_s%dx%d_p%dx%d_d%dx%d%s%s%s" % (
            s["op"], i, *s["kernel"], *s["stride"], *s["padding"], *s["dilation"],
            "_ceil" if s["ceil_mode"] else "",
            "_incl" if s["op"] == "avg" and s["count_include_pad"] else "",
            "_ties" if s["ties"] else "",
        )
    return specs


def numel(shape):
    n = 1
    for v in shape:
        n *= v
    return n


def fmt32(v):
    """Shortest decimal that reads back (as float64, then float32) as v."""
    if not math.isfinite(v):
        raise ValueError("non-finite value %r" % v)
    for digits in range(1, 10):
        s = "%.*g" % (digits, v)
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == v:
            return s
    raise AssertionError("no 9-digit round trip for %r" % v)


KEYS = ["name", "op", "kernel", "stride", "padding", "dilation", "ceil_mode", "count_include_pad",
        "input_shape", "input", "output_shape", "output", "grad_output", "grad_input"]
FLOAT_KEYS = {"input", "output", "grad_output", "grad_input"}


def case_json(case):
    parts = []
    for key in KEYS:
        v = case[key]
        if key in FLOAT_KEYS:
            parts.append('"%s": [%s]' % (key, ",".join(fmt32(x) for x in v)))
        else:
            parts.append('"%s": %s' % (key, json.dumps(v)))
    return "{" + ", ".join(parts) + "}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool_cases.json"))
    ap.add_argument("--device", default="auto", help="auto (cuda if available), cuda or cpu")
    ap.add_argument("--plan", action="store_true", help="list the cases and the estimated file size, without torch")
    args = ap.parse_args()

    specs = plan()
    if args.plan:
        values = 0
        for s in specs:
            values += 2 * numel(s["input_shape"]) + 2 * numel(s["output_shape"])
            print(s["name"], s["input_shape"], "->", s["output_shape"])
        print("%d cases, %d values, about %.2f MB" % (len(specs), values, (values * 11 + len(specs) * 300) / 1e6))
        return

    import torch
    import torch.nn.functional as F

    def forward(spec, x):
        k, s, p, d = (tuple(spec[f]) for f in ("kernel", "stride", "padding", "dilation"))
        if spec["op"] == "max":
            return F.max_pool2d(x, k, s, p, d, ceil_mode=spec["ceil_mode"])
        if spec["op"] == "avg":
            return F.avg_pool2d(x, k, s, p, ceil_mode=spec["ceil_mode"],
                                count_include_pad=spec["count_include_pad"])
        return F.lp_pool2d(x, 2.0, k, s, ceil_mode=False)

    def run(spec, x, dy, device):
        xd = x.detach().clone().to(device).requires_grad_(True)
        out = forward(spec, xd)
        out.backward(dy.to(device))
        return out.detach().cpu(), xd.grad.detach().cpu()

    def first_max_rule(device):
        """PyTorch keeps the first maximum (strict >) on this device."""
        x = torch.tensor([[[[1.0, 3.0, 3.0, 2.0], [3.0, 0.0, 3.0, 3.0]]]], device=device)
        _, idx = F.max_pool2d(x, (2, 4), return_indices=True)
        # All equal, kernel 2 dilation 2: window (i, j) keeps its first tap (i, j).
        _, idx2 = F.max_pool2d(torch.ones(1, 1, 5, 5, device=device), 2, 1, 0, 2, return_indices=True)
        return idx.flatten().tolist() == [1] and idx2.flatten().tolist() == [0, 1, 2, 5, 6, 7, 10, 11, 12]

    if args.device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        device = args.device
    device_name = torch.cuda.get_device_name(device) if device.startswith("cuda") else platform.processor() or "cpu"
    torch.manual_seed(SEED)
    ties_ok = first_max_rule(device) and first_max_rule("cpu")
    if not ties_ok:
        print("warning: PyTorch does not keep the first maximum here; tie cases left out", file=sys.stderr)

    gen = torch.Generator().manual_seed(SEED)
    cases = []
    worst = {"max": 0.0, "avg": 0.0, "l2": 0.0}
    for spec in specs:
        shape = spec["input_shape"]
        # Draw data even for cases left out so the others do not change.
        if spec["ties"]:
            x = torch.randint(-2, 3, shape, generator=gen).to(torch.float32) / 2
        else:
            x = torch.rand(shape, generator=gen, dtype=torch.float32) * 2 - 1
        dy = torch.rand(spec["output_shape"], generator=gen, dtype=torch.float32) * 2 - 1
        if spec["ties"] and not ties_ok:
            continue
        out, dx = run(spec, x, dy, device)
        out_cpu, dx_cpu = run(spec, x, dy, "cpu")
        name = spec["name"]
        assert list(out.shape) == spec["output_shape"], (name, list(out.shape), spec["output_shape"])
        assert torch.isfinite(out).all() and torch.isfinite(dx).all(), name
        if spec["op"] == "max":
            assert torch.equal(out, out_cpu), name + ": max output differs between %s and cpu" % device
        assert torch.allclose(out, out_cpu, rtol=1e-5, atol=1e-6), name
        assert torch.allclose(dx, dx_cpu, rtol=1e-5, atol=1e-6), name
        worst[spec["op"]] = max(worst[spec["op"]], (out - out_cpu).abs().max().item(),
                                (dx - dx_cpu).abs().max().item())
        case = {k: v for k, v in spec.items() if k != "ties"}
        case["input"] = x.flatten().tolist()
        case["output"] = out.flatten().tolist()
        case["grad_output"] = dy.flatten().tolist()
        case["grad_input"] = dx.flatten().tolist()
        cases.append(case)

    counts = {}
    for c in cases:
        counts[c["op"]] = counts.get(c["op"], 0) + 1
    meta = {
        "format": FORMAT,
        "generator": "ops/testdata/torch/gen_pool_cases.py",
        "seed": SEED,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": device,
        "device_name": device_name,
        "cpu_check": "passed; largest |device - cpu| per op: " + json.dumps(worst),
        "first_max_ties": ties_ok,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "counts": counts,
        "layout": "NCHW float32; pairs are [h, w]; shapes [n, c, h, w]",
    }
    text = '{"meta": ' + json.dumps(meta, sort_keys=True) + ',\n"cases": [\n' + ",\n".join(
        case_json(c) for c in cases) + "\n]}\n"

    # Read it back: valid JSON, every value the same float32.
    back = json.loads(text)
    assert len(back["cases"]) == len(cases)
    for c, b in zip(cases, back["cases"]):
        for key in FLOAT_KEYS:
            assert [struct.unpack("<f", struct.pack("<f", v))[0] for v in b[key]] == c[key], (c["name"], key)
    with open(args.out, "w") as f:
        f.write(text)
    size = len(text.encode())
    print("wrote %s: %d cases %s, %.2f MB, device %s (%s), torch %s" % (
        args.out, len(cases), counts, size / 1e6, device, device_name, torch.__version__))
    if size > 2_000_000:
        print("warning: the file is over 2 MB", file=sys.stderr)


if __name__ == "__main__":
    main()
