#!/usr/bin/env python3
"""Generate loss_cases.json: PyTorch reference losses and autograd gradients
for the vkmps loss family (ops.Loss, MPSCNNLoss); package ops/ref checks its
CPU reference against it and the GPU kernels are checked against both.

Run from the repository root with a python3 that has torch (Debian's
/usr/bin/python3 with python3-torch 1.13, CPU):

    /usr/bin/python3 ops/testdata/torch/gen_loss_cases.py          # writes loss_cases.json beside this script
    /usr/bin/python3 ops/testdata/torch/gen_loss_cases.py --plan   # lists the cases; needs no torch

Deterministic: the case plan comes from random.Random(SEED), the data from a
CPU torch.Generator seeded with SEED, and nothing else (no dates) goes into
the file, so it depends only on the PyTorch version. Inputs are drawn as
float32 (what the GPU reads); losses and gradients are computed in float64
from them and stored rounded to float32.

One case per loss type and reduction ("none", "sum", "mean",
"sum-by-nonzero-weights"), and for none, sum and mean also one with per-item
weights; the scalar weight, label smoothing, Huber's delta and the log
loss's epsilon vary. For a prediction y and labels t (NCHW):

  mae                        nn.L1Loss
  mse                        nn.MSELoss
  softmax-cross-entropy      nn.CrossEntropyLoss(label_smoothing=ls) with probability labels
                             over the channels (soft, or one-hot on half the pixels)
  sigmoid-cross-entropy      nn.BCEWithLogitsLoss on the smoothed labels t(1-ls) + ls/2
                             (PyTorch has no label smoothing there)
  categorical-cross-entropy  written out: -sum_c xlogy(t_c, y_c), y a softmax over channels
  hinge                      written out: clamp(1 - (2t - 1) y, min=0), labels 0 or 1
  huber                      nn.HuberLoss(delta=delta)
  cosine-distance            written out: 1 - sum_c y_c t_c with unit vectors over channels
                             (checked equal to 1 - F.cosine_similarity there; the gradient is
                             the written-out form's, -t)
  log                        written out: -t log(y + eps) - (1 - t) log(1 - y + eps)
                             (checked against nn.BCELoss for eps = 0 on the same data)
  kl-divergence              nn.KLDivLoss(log_target=False): y log-probabilities, t probabilities
                             with zeros

Reductions are PyTorch's (the per-pixel losses' "none" is N x H x W and their
"mean" divides by N*H*W); the scalar weight multiplies the result. Weighted
cases and "sum-by-nonzero-weights" take the unreduced loss and reduce
sum(w * l) by hand: / 1, / items or / (number of nonzero w). The gradient is
autograd's of the reduced loss (of the sum of the items for "none").

JSON layout (format 1): {"meta": {...}, "cases": [{"name", "loss",
"reduction", "weight", "label_smoothing", "delta", "epsilon", "shape":
[n,c,h,w], "torch", "pred", "labels", "weights" (one per item, or []),
"result", "grad"}]}; data are flat NCHW lists; "result" has one value per
item for "none", else one. Each float is the shortest decimal that rounds
(via float64) back to the same float32.
"""

import argparse
import json
import math
import os
import platform
import random
import struct
import sys

SEED = 20241114
FORMAT = 1

TYPES = ["mse", "softmax-cross-entropy", "mae", "sigmoid-cross-entropy", "categorical-cross-entropy",
         "hinge", "huber", "cosine-distance", "log", "kl-divergence"]
PER_PIXEL = {"softmax-cross-entropy", "categorical-cross-entropy", "cosine-distance"}
REDUCTIONS = ["none", "sum", "mean", "sum-by-nonzero-weights"]
SHAPES = [[2, 3, 3, 4], [1, 5, 3, 3], [3, 4, 2, 3], [2, 7, 2, 2], [1, 1, 4, 5], [2, 2, 3, 3]]


def plan():
    rng = random.Random(SEED)
    specs = []
    for typ in TYPES:
        for red in REDUCTIONS:
            for weighted in ([False, True] if red != "sum-by-nonzero-weights" else [True]):
                spec = {
                    "name": "%s_%s%s" % (typ, red, "_weighted" if weighted else ""),
                    "loss": typ, "reduction": red, "weighted": weighted,
                    "weight": rng.choice([1.0, 1.0, 0.5, 2.0]),
                    "label_smoothing": 0.0, "delta": 1.0, "epsilon": 1e-7,
                    "shape": list(rng.choice(SHAPES)),
                }
                if typ in ("softmax-cross-entropy", "sigmoid-cross-entropy"):
                    spec["label_smoothing"] = rng.choice([0.0, 0.1, 0.25])
                if typ == "huber":
                    spec["delta"] = rng.choice([1.0, 0.5, 2.0])
                if typ == "log":
                    spec["epsilon"] = rng.choice([1e-7, 1e-3])
                if typ in PER_PIXEL and spec["shape"][1] == 1:
                    spec["shape"][1] = 3
                specs.append(spec)
    return specs


def numel(shape):
    n = 1
    for s in shape:
        n *= s
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


def to32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


KEYS = ["name", "loss", "reduction", "weight", "label_smoothing", "delta", "epsilon", "shape", "torch",
        "pred", "labels", "weights", "result", "grad"]
FLOAT_KEYS = {"pred", "labels", "weights", "result", "grad"}


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
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "loss_cases.json"))
    ap.add_argument("--plan", action="store_true", help="list the cases, without torch")
    args = ap.parse_args()
    specs = plan()
    if args.plan:
        for s in specs:
            print(s["name"], s["shape"], "weight", s["weight"], "ls", s["label_smoothing"], "delta", s["delta"],
                  "eps", s["epsilon"])
        print("%d cases" % len(specs))
        return

    import warnings

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    # KLDivLoss's "mean" is the one vkmps wants (per value); PyTorch warns.
    warnings.filterwarnings("ignore", message="reduction: 'mean' divides the total loss")

    gen = torch.Generator().manual_seed(SEED)

    def rand(shape):
        return torch.rand(shape, generator=gen, dtype=torch.float32)

    def randn(shape):
        return torch.randn(shape, generator=gen, dtype=torch.float32)

    def probs(shape, one_hot):
        t = rand(shape)
        if one_hot:  # one-hot on every other pixel
            n, c, h, w = shape
            idx = torch.randint(0, c, (n, 1, h, w), generator=gen)
            hot = torch.zeros(shape).scatter_(1, idx, 1.0)
            mask = (torch.arange(h * w).reshape(1, 1, h, w) % 2 == 0)
            t = torch.where(mask, hot, t)
        return (t / t.sum(1, keepdim=True)).to(torch.float32)

    def inputs(typ, shape):
        y, t = 1.5 * randn(shape), randn(shape)
        if typ == "sigmoid-cross-entropy":
            t = rand(shape)
        elif typ == "hinge":
            t = torch.randint(0, 2, shape, generator=gen).to(torch.float32)
        elif typ == "log":
            y, t = 0.05 + 0.9 * rand(shape), rand(shape)
        elif typ == "softmax-cross-entropy":
            t = probs(shape, True)
        elif typ == "categorical-cross-entropy":
            y, t = torch.softmax(1.5 * randn(shape), 1), probs(shape, True)
        elif typ == "cosine-distance":
            y, t = F.normalize(randn(shape), dim=1), F.normalize(randn(shape), dim=1)
        elif typ == "kl-divergence":
            y, t = torch.log_softmax(1.5 * randn(shape), 1), probs(shape, True)
        return y.to(torch.float32), t.to(torch.float32)

    def unreduced(spec, y, t):
        """The per-item losses (PyTorch's reduction "none") and a description."""
        typ, ls = spec["loss"], spec["label_smoothing"]
        if typ == "mae":
            return nn.L1Loss(reduction="none")(y, t), "nn.L1Loss"
        if typ == "mse":
            return nn.MSELoss(reduction="none")(y, t), "nn.MSELoss"
        if typ == "softmax-cross-entropy":
            return (nn.CrossEntropyLoss(reduction="none", label_smoothing=ls)(y, t),
                    "nn.CrossEntropyLoss(label_smoothing=%g), probability labels" % ls)
        if typ == "sigmoid-cross-entropy":
            return (nn.BCEWithLogitsLoss(reduction="none")(y, t * (1 - ls) + ls / 2),
                    "nn.BCEWithLogitsLoss on labels t*(1-ls) + ls/2, ls=%g" % ls)
        if typ == "categorical-cross-entropy":
            return -torch.xlogy(t, y).sum(1), "-sum_c xlogy(t, y), written out"
        if typ == "hinge":
            return torch.clamp(1 - (2 * t - 1) * y, min=0), "clamp(1 - (2t-1) y, min=0), written out"
        if typ == "huber":
            return nn.HuberLoss(reduction="none", delta=spec["delta"])(y, t), "nn.HuberLoss(delta=%g)" % spec["delta"]
        if typ == "cosine-distance":
            return 1 - (y * t).sum(1), "1 - sum_c y t (unit vectors), written out"
        if typ == "log":
            e = spec["epsilon"]
            return (-(t * torch.log(y + e)) - (1 - t) * torch.log(1 - y + e),
                    "-t log(y+eps) - (1-t) log(1-y+eps), eps=%g, written out" % e)
        if typ == "kl-divergence":
            return nn.KLDivLoss(reduction="none", log_target=False)(y, t), "nn.KLDivLoss(log_target=False)"
        raise ValueError(typ)

    def reduced(spec, y, t, w):
        """The reduced loss by PyTorch's own reduction where it has one."""
        typ, red = spec["loss"], spec["reduction"]
        if w is None and red in ("sum", "mean") and typ not in ("categorical-cross-entropy", "hinge",
                                                               "cosine-distance", "log"):
            ls = spec["label_smoothing"]
            mod = {
                "mae": lambda: nn.L1Loss(reduction=red),
                "mse": lambda: nn.MSELoss(reduction=red),
                "softmax-cross-entropy": lambda: nn.CrossEntropyLoss(reduction=red, label_smoothing=ls),
                "sigmoid-cross-entropy": lambda: nn.BCEWithLogitsLoss(reduction=red),
                "huber": lambda: nn.HuberLoss(reduction=red, delta=spec["delta"]),
                "kl-divergence": lambda: nn.KLDivLoss(reduction=red, log_target=False),
            }[typ]()
            if typ == "sigmoid-cross-entropy":
                t = t * (1 - ls) + ls / 2
            return mod(y, t), "reduction=%r" % red
        l, _ = unreduced(spec, y, t)
        if w is not None:
            l = w * l
        if red == "none":
            return l, ""
        if red == "sum":
            return l.sum(), "sum by hand"
        if red == "mean":
            return l.sum() / l.numel(), "sum / items by hand"
        k = (w != 0).sum()
        return (l.sum() / k if k > 0 else l.sum() * 0), "sum / nonzero weights by hand"

    cases = []
    for spec in specs:
        shape = spec["shape"]
        y32, t32 = inputs(spec["loss"], shape)
        items = [shape[0], shape[2], shape[3]] if spec["loss"] in PER_PIXEL else shape
        w32 = None
        if spec["weighted"]:
            w32 = torch.where(rand(items) < 1 / 3, torch.zeros(items), 0.25 + rand(items)).to(torch.float32)
        y = y32.to(torch.float64).requires_grad_(True)
        t = t32.to(torch.float64)
        w = None if w32 is None else w32.to(torch.float64)
        l, how = reduced(spec, y, t, w)
        _, what = unreduced(spec, y.detach(), t)
        l = spec["weight"] * l
        (l.sum() if spec["reduction"] == "none" else l).backward()
        assert torch.isfinite(l).all() and torch.isfinite(y.grad).all(), spec["name"]

        # Cross-checks of the written-out forms.
        if spec["loss"] == "cosine-distance":
            cs = 1 - F.cosine_similarity(y.detach(), t, dim=1)
            assert torch.allclose(cs, unreduced(spec, y.detach(), t)[0], atol=1e-6), spec["name"]  # float32 unit vectors
        if spec["loss"] == "log":
            eps0 = dict(spec, epsilon=0.0)
            bce = nn.BCELoss(reduction="none")(y.detach(), t)
            assert torch.allclose(bce, unreduced(eps0, y.detach(), t)[0], atol=1e-12), spec["name"]

        case = {k: spec[k] for k in ("name", "loss", "reduction", "weight", "label_smoothing", "delta", "epsilon", "shape")}
        case["torch"] = what + ("; " + how if how else "")
        case["pred"] = y32.flatten().tolist()
        case["labels"] = t32.flatten().tolist()
        case["weights"] = [] if w32 is None else w32.flatten().tolist()
        case["result"] = [to32(v) for v in l.detach().flatten().tolist()]
        case["grad"] = [to32(v) for v in y.grad.flatten().tolist()]
        cases.append(case)

    meta = {
        "format": FORMAT,
        "generator": "ops/testdata/torch/gen_loss_cases.py",
        "seed": SEED,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "precision": "inputs float32; losses and gradients computed in float64, stored rounded to float32",
        "layout": "NCHW; shapes [n, c, h, w]; per-pixel losses' items and weights are N x H x W",
    }
    text = '{"meta": ' + json.dumps(meta, sort_keys=True) + ',\n"cases": [\n' + ",\n".join(
        case_json(c) for c in cases) + "\n]}\n"
    back = json.loads(text)
    assert len(back["cases"]) == len(cases)
    for c, b in zip(cases, back["cases"]):
        for key in FLOAT_KEYS:
            assert [to32(v) for v in b[key]] == [to32(v) for v in c[key]], (c["name"], key)
    with open(args.out, "w") as f:
        f.write(text)
    size = len(text.encode())
    print("wrote %s: %d cases, %.0f kB, torch %s" % (args.out, len(cases), size / 1e3, torch.__version__))
    if size > 1_000_000:
        print("warning: the file is over 1 MB", file=sys.stderr)


if __name__ == "__main__":
    main()
