#!/usr/bin/env python3
"""Generate upsampling_cases.json: PyTorch reference values for the vkmps
upsampling kernels (F.interpolate nearest and bilinear, both align_corners,
with autograd gradients) and for dropout's formula with a given mask.

Run from the repository root with PyTorch (torch 1.13 CPU is enough):

    /usr/bin/python3 ops/testdata/torch/gen_upsampling_cases.py          # writes upsampling_cases.json beside it
    /usr/bin/python3 ops/testdata/torch/gen_upsampling_cases.py --plan   # lists the cases; needs no torch

Deterministic: shapes and scales come from random.Random(SEED), data from a
CPU torch.Generator seeded with SEED; the file depends only on the PyTorch
version. Everything runs on the CPU in float32.

Upsampling cases, NCHW float32: F.interpolate(x, scale_factor=(sy, sx),
mode="nearest" | "bilinear", align_corners=False | True (bilinear only)),
integer scales 1..4 per axis, odd sizes including sides of 1, the output and
the gradient w.r.t. x of sum(output * grad_output) (autograd). The script
checks nearest against the integer rule src = floor(dst / s) exactly.

Dropout cases: PyTorch's random stream cannot match vkmps's Philox mask, so
the case gives the mask (drawn here, in MPS's mask shape: N x (C or 1) x
(H or 1) x (W or 1) for mask strides (x, y, channel) of 1 or 0) and the
values F.dropout computes with it on the CPU: noise = mask / keep in
float32, output = x * noise, grad_input = grad_output * noise (autograd).
Keep probabilities are ones where float32(1/keep) is what PyTorch's
division gives (checked), so vkmps's x * float32(1/keep) matches exactly.

JSON layout (format 1): {"meta": {...}, "upsampling": [{"name", "mode",
"align_corners", "scale": [sy, sx], "input_shape", "input", "output_shape",
"output", "grad_output", "grad_input"}], "dropout": [{"name", "keep",
"scale", "mask_stride": [x, y, c], "input_shape", "mask_shape", "mask",
"input", "output", "grad_output", "grad_input"}]}; data are flat NCHW lists,
masks 0/1. Each float is the shortest decimal that rounds (via float64)
back to the same float32.
"""

import argparse
import json
import math
import os
import platform
import random
import struct

SEED = 20261123
FORMAT = 1

# Fixed upsampling cases: mode, align_corners, [sy, sx], [n, c, h, w].
FIXED_UP = [
    ("nearest", False, [2, 2], [1, 1, 2, 2]),  # MPS's documented example
    ("nearest", False, [1, 1], [1, 2, 3, 5]),  # a copy
    ("nearest", False, [3, 2], [2, 3, 5, 7]),
    ("bilinear", False, [2, 2], [1, 1, 2, 2]),
    ("bilinear", True, [2, 2], [1, 1, 2, 2]),
    ("bilinear", False, [1, 1], [1, 2, 3, 5]),
    ("bilinear", True, [1, 1], [1, 2, 3, 5]),
    ("bilinear", False, [4, 3], [1, 2, 1, 5]),  # a single row
    ("bilinear", True, [4, 3], [1, 2, 1, 5]),  # align_corners with in = 1
    ("bilinear", True, [3, 4], [2, 1, 6, 1]),
    ("bilinear", False, [3, 3], [1, 1, 7, 7]),
    ("bilinear", True, [3, 3], [1, 1, 7, 7]),
]
RANDOM_UP = 48

# Fixed dropout cases: keep, mask stride [x, y, c], [n, c, h, w].
FIXED_DROP = [
    (0.5, [1, 1, 1], [2, 3, 5, 7]),
    (0.8, [1, 1, 0], [2, 3, 5, 7]),  # one mask for every channel
    (0.25, [0, 0, 1], [2, 5, 3, 4]),  # one value per channel (spatial dropout)
    (0.75, [1, 0, 1], [1, 2, 4, 9]),
    (0.9, [0, 1, 0], [1, 3, 6, 2]),
]
RANDOM_DROP = 11
KEEPS = [0.5, 0.8, 0.25, 0.75, 0.9, 0.3, 0.6]


def numel(shape):
    n = 1
    for v in shape:
        n *= v
    return n


def up_spec(mode, align, scale, shape):
    n, c, h, w = shape
    return {"mode": mode, "align_corners": bool(align), "scale": list(scale), "input_shape": list(shape),
            "output_shape": [n, c, h * scale[0], w * scale[1]]}


def drop_spec(keep, stride, shape):
    n, c, h, w = shape
    sx, sy, sc = stride
    return {"keep": keep, "mask_stride": list(stride), "input_shape": list(shape),
            "mask_shape": [n, c if sc else 1, h if sy else 1, w if sx else 1]}


def plan():
    """The case lists, pure Python (no torch), deterministic."""
    rng = random.Random(SEED)
    ups = [up_spec(*f) for f in FIXED_UP]
    for _ in range(RANDOM_UP):
        mode = rng.choice(["nearest", "bilinear", "bilinear"])
        align = mode == "bilinear" and rng.random() < 0.5
        scale = [rng.randint(1, 4), rng.randint(1, 4)]
        h, w = rng.randint(1, 7), rng.randint(1, 7)
        ups.append(up_spec(mode, align, scale, [rng.randint(1, 2), rng.randint(1, 3), h, w]))
    for i, s in enumerate(ups):
        s["name"] = "%s%s_%03d_s%dx%d_%dx%dx%dx%d" % (
            s["mode"], "_align" if s["align_corners"] else "", i, *s["scale"], *s["input_shape"])
    drops = [drop_spec(*f) for f in FIXED_DROP]
    for _ in range(RANDOM_DROP):
        stride = [rng.randint(0, 1) for _ in range(3)]
        shape = [rng.randint(1, 2), rng.randint(1, 5), rng.randint(1, 7), rng.randint(1, 9)]
        drops.append(drop_spec(rng.choice(KEEPS), stride, shape))
    for i, s in enumerate(drops):
        s["name"] = "dropout_%03d_keep%g_stride%d%d%d_%dx%dx%dx%d" % (i, s["keep"], *s["mask_stride"], *s["input_shape"])
    return ups, drops


def fmt32(v):
    """Shortest decimal that reads back (as float64, then float32) as v."""
    if not math.isfinite(v):
        raise ValueError("non-finite value %r" % v)
    for digits in range(1, 10):
        s = "%.*g" % (digits, v)
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == v:
            return s
    raise AssertionError("no 9-digit round trip for %r" % v)


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


UP_KEYS = ["name", "mode", "align_corners", "scale", "input_shape", "input", "output_shape", "output",
           "grad_output", "grad_input"]
DROP_KEYS = ["name", "keep", "scale", "mask_stride", "input_shape", "mask_shape", "mask", "input", "output",
             "grad_output", "grad_input"]
FLOAT_KEYS = {"input", "output", "grad_output", "grad_input", "keep", "scale"}


def case_json(case, keys):
    parts = []
    for key in keys:
        v = case[key]
        if key in FLOAT_KEYS and isinstance(v, list):
            parts.append('"%s": [%s]' % (key, ",".join(fmt32(x) for x in v)))
        elif key in FLOAT_KEYS:
            parts.append('"%s": %s' % (key, fmt32(v)))
        else:
            parts.append('"%s": %s' % (key, json.dumps(v, separators=(",", ":"))))
    return "{" + ", ".join(parts) + "}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "upsampling_cases.json"))
    ap.add_argument("--plan", action="store_true", help="list the cases and the estimated file size, without torch")
    args = ap.parse_args()

    ups, drops = plan()
    if args.plan:
        values = 0
        for s in ups:
            values += 2 * numel(s["input_shape"]) + 2 * numel(s["output_shape"])
            print(s["name"], s["input_shape"], "->", s["output_shape"])
        for s in drops:
            values += 4 * numel(s["input_shape"])
            print(s["name"], s["input_shape"], "mask", s["mask_shape"])
        print("%d + %d cases, %d values, about %.2f MB" % (len(ups), len(drops), values, values * 11 / 1e6))
        return

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(SEED)
    up_cases = []
    for spec in ups:
        x = torch.rand(spec["input_shape"], generator=gen, dtype=torch.float32) * 2 - 1
        dy = torch.rand(spec["output_shape"], generator=gen, dtype=torch.float32) * 2 - 1
        xg = x.clone().requires_grad_(True)
        sy, sx = spec["scale"]
        if spec["mode"] == "nearest":
            out = F.interpolate(xg, scale_factor=(sy, sx), mode="nearest")
        else:
            out = F.interpolate(xg, scale_factor=(sy, sx), mode="bilinear", align_corners=spec["align_corners"])
        out.backward(dy)
        assert list(out.shape) == spec["output_shape"], (spec["name"], list(out.shape))
        if spec["mode"] == "nearest":
            iy = torch.arange(spec["output_shape"][2]) // sy
            ix = torch.arange(spec["output_shape"][3]) // sx
            assert torch.equal(out.detach(), x[:, :, iy][:, :, :, ix]), spec["name"] + ": nearest is not floor(dst/s)"
        case = dict(spec)
        case["input"] = x.flatten().tolist()
        case["output"] = out.detach().flatten().tolist()
        case["grad_output"] = dy.flatten().tolist()
        case["grad_input"] = xg.grad.flatten().tolist()
        up_cases.append(case)

    drop_cases = []
    for spec in drops:
        keep = f32(spec["keep"])
        x = torch.rand(spec["input_shape"], generator=gen, dtype=torch.float32) * 2 - 1
        dy = torch.rand(spec["input_shape"], generator=gen, dtype=torch.float32) * 2 - 1
        mask = (torch.rand(spec["mask_shape"], generator=gen) < keep).to(torch.float32)
        # F.dropout's CPU path: noise = bernoulli(keep) / keep; out = x * noise.
        noise = mask.expand(spec["input_shape"]).contiguous().div_(spec["keep"])
        scale = f32(1.0 / keep)
        assert set(noise.unique().tolist()) <= {0.0, scale}, (spec["name"], noise.unique().tolist(), scale)
        xg = x.clone().requires_grad_(True)
        out = xg * noise
        out.backward(dy)
        case = dict(spec)
        case["keep"] = keep
        case["scale"] = scale
        case["mask"] = [int(v) for v in mask.flatten().tolist()]
        case["input"] = x.flatten().tolist()
        case["output"] = out.detach().flatten().tolist()
        case["grad_output"] = dy.flatten().tolist()
        case["grad_input"] = xg.grad.flatten().tolist()
        drop_cases.append(case)

    meta = {
        "format": FORMAT,
        "generator": "ops/testdata/torch/gen_upsampling_cases.py",
        "seed": SEED,
        "torch": torch.__version__,
        "device": "cpu",
        "python": platform.python_version(),
        "layout": "NCHW float32; scale is [sy, sx]; shapes [n, c, h, w]; mask_stride [x, y, channel]",
    }
    text = ('{"meta": ' + json.dumps(meta, sort_keys=True) + ',\n"upsampling": [\n'
            + ",\n".join(case_json(c, UP_KEYS) for c in up_cases) + '\n],\n"dropout": [\n'
            + ",\n".join(case_json(c, DROP_KEYS) for c in drop_cases) + "\n]}\n")

    back = json.loads(text)
    for c, b in zip(up_cases + drop_cases, back["upsampling"] + back["dropout"]):
        for key in ("input", "output", "grad_output", "grad_input"):
            assert [f32(v) for v in b[key]] == c[key], (c["name"], key)
    with open(args.out, "w") as f:
        f.write(text)
    print("wrote %s: %d upsampling and %d dropout cases, %.2f MB, torch %s" % (
        args.out, len(up_cases), len(drop_cases), len(text.encode()) / 1e6, torch.__version__))


if __name__ == "__main__":
    main()
