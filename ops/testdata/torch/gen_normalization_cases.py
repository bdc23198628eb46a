#!/usr/bin/env python3
"""Generate normalization_cases.json: PyTorch reference outputs, gradients
and running statistics for the vkmps normalization kernels (package ops/ref
checks its CPU reference against it; the GPU kernels are checked against
both).

Run from the repository root with a Python that has torch (1.13 CPU is
enough):

    /usr/bin/python3 ops/testdata/torch/gen_normalization_cases.py          # writes normalization_cases.json
    /usr/bin/python3 ops/testdata/torch/gen_normalization_cases.py --plan   # lists the cases; needs no torch

Deterministic: shapes and parameters come from random.Random(SEED), data
from a CPU torch.Generator seeded with SEED. Everything is float32 on the
CPU.

Ops (NCHW float32):
  batch_norm           F.batch_norm(x, running_mean, running_var, weight,
                       bias, training, momentum, eps). Training cases first
                       run the prior_inputs through training-mode forwards
                       (each updates the running statistics), then the case's
                       input; running_mean_after / running_var_after are the
                       statistics after all of them. Eval cases use the
                       running statistics and leave them unchanged.
  instance_norm        F.instance_norm(x, weight=gamma, bias=beta, eps)
                       (no running statistics).
  local_response_norm  F.local_response_norm(x, size, alpha, beta, k).
Every case has grad_output (a random dy) and PyTorch autograd's grad_input
(dx), and for the affine ops grad_weight (dgamma) and grad_bias (dbeta).

JSON layout (format 1): {"meta": {...}, "cases": [{"name", "op", "training",
"input_shape": [n,c,h,w], "input", "prior_inputs": [[...]], "weight", "bias",
"running_mean", "running_var", "momentum", "eps", "size", "alpha", "beta",
"k", "output", "grad_output", "grad_input", "grad_weight", "grad_bias",
"running_mean_after", "running_var_after"}]}; fields an op does not use are
absent. Each float is the shortest decimal that reads back (via float64) as
the same float32.
"""

import argparse
import json
import math
import os
import random
import struct
import sys

SEED = 20241123
FORMAT = 1
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "normalization_cases.json")


def plan():
    """The case list, pure Python (no torch), deterministic."""
    rng = random.Random(SEED)
    specs = []
    # Fixed cases: the smallest training batch, 1x1 planes, a large mean,
    # PyTorch's defaults.
    specs.append(dict(op="batch_norm", training=True, shape=[1, 1, 1, 2], momentum=0.1, eps=1e-5, priors=0, shift=0.0))
    specs.append(dict(op="batch_norm", training=True, shape=[4, 3, 1, 1], momentum=0.1, eps=1e-5, priors=2, shift=0.0))
    specs.append(dict(op="batch_norm", training=True, shape=[2, 3, 5, 5], momentum=0.1, eps=1e-5, priors=1, shift=100.0))
    specs.append(dict(op="batch_norm", training=False, shape=[2, 5, 3, 4], momentum=0.1, eps=1e-5, priors=0, shift=0.0))
    specs.append(dict(op="instance_norm", shape=[2, 3, 4, 5], eps=1e-5, shift=0.0))
    specs.append(dict(op="local_response_norm", shape=[2, 7, 3, 3], size=5, alpha=1e-4, beta=0.75, k=1.0, shift=0.0))
    for _ in range(14):
        training = rng.random() < 0.65
        specs.append(dict(op="batch_norm", training=training,
                          shape=[rng.randint(1, 5), rng.randint(1, 9), rng.randint(1, 7), rng.randint(1, 7)],
                          momentum=rng.choice([0.1, 0.1, 0.01, 0.5, 1.0, 0.0]),
                          eps=rng.choice([1e-5, 1e-5, 1e-3, 0.1]),
                          priors=rng.randint(0, 2) if training else 0, shift=rng.choice([0.0, 0.0, 2.0, -3.0])))
    for _ in range(8):
        specs.append(dict(op="instance_norm",
                          shape=[rng.randint(1, 4), rng.randint(1, 7), rng.randint(1, 7), rng.randint(2, 7)],
                          eps=rng.choice([1e-5, 1e-3]), shift=rng.choice([0.0, 1.5])))
    for _ in range(10):
        specs.append(dict(op="local_response_norm",
                          shape=[rng.randint(1, 3), rng.randint(1, 12), rng.randint(1, 5), rng.randint(1, 5)],
                          size=rng.randint(1, 7), alpha=rng.choice([1e-4, 0.01, 0.5, 2.0]),
                          beta=rng.choice([0.75, 0.5, 1.0, 1.5]), k=rng.choice([1.0, 2.0, 0.5]), shift=0.0))
    for s in specs:
        s.setdefault("priors", 0)
    # Keep every batch_norm training case's N*H*W >= 2 (PyTorch refuses 1).
    for s in specs:
        n, c, h, w = s["shape"]
        if s["op"] == "batch_norm" and s["training"] and n * h * w < 2:
            s["shape"][0] = 2
        if s["op"] == "instance_norm" and h * w < 2:
            s["shape"][3] = 2
    for i, s in enumerate(specs):
        extra = ""
        if s["op"] == "batch_norm":
            extra = "_train" if s["training"] else "_eval"
        s["name"] = "%s_%02d_%dx%dx%dx%d%s" % (s["op"], i, *s["shape"], extra)
    return specs


def fmt32(v):
    """Shortest decimal that reads back (as float64, then float32) as v."""
    if not math.isfinite(v):
        raise ValueError("non-finite value %r" % v)
    for digits in range(1, 10):
        s = "%.*g" % (digits, v)
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == v:
            return s
    raise AssertionError("no 9-digit round trip for %r" % v)


class Raw(str):
    pass


def flat(t):
    return Raw("[" + ", ".join(fmt32(float(v)) for v in t.detach().reshape(-1).tolist()) + "]")


def run_case(torch, F, gen, s):
    n, c, h, w = s["shape"]

    def randn(*shape, scale=1.0, shift=0.0):
        return torch.randn(*shape, generator=gen, dtype=torch.float32) * scale + shift

    out = {"name": s["name"], "op": s["op"], "input_shape": s["shape"]}
    x = randn(n, c, h, w, scale=1.5, shift=s["shift"]).requires_grad_(True)
    dy = randn(n, c, h, w)
    if s["op"] == "batch_norm":
        gamma = (randn(c, scale=0.5) + 1).requires_grad_(True)
        beta = randn(c, scale=0.5).requires_grad_(True)
        rm = randn(c, scale=0.5)
        rv = torch.rand(c, generator=gen, dtype=torch.float32) + 0.5
        out.update(training=s["training"], momentum=s["momentum"], eps=s["eps"],
                   weight=flat(gamma), bias=flat(beta), running_mean=flat(rm), running_var=flat(rv))
        priors = [randn(n, c, h, w, scale=2.0, shift=s["shift"]) for _ in range(s["priors"])]
        out["prior_inputs"] = Raw("[" + ", ".join(flat(p) for p in priors) + "]")
        rm2, rv2 = rm.clone(), rv.clone()
        with torch.no_grad():
            for p in priors:
                F.batch_norm(p, rm2, rv2, gamma, beta, True, s["momentum"], s["eps"])
        y = F.batch_norm(x, rm2, rv2, gamma, beta, s["training"], s["momentum"], s["eps"])
        y.backward(dy)
        out.update(running_mean_after=flat(rm2), running_var_after=flat(rv2),
                   grad_weight=flat(gamma.grad), grad_bias=flat(beta.grad))
    elif s["op"] == "instance_norm":
        gamma = (randn(c, scale=0.5) + 1).requires_grad_(True)
        beta = randn(c, scale=0.5).requires_grad_(True)
        out.update(eps=s["eps"], weight=flat(gamma), bias=flat(beta))
        y = F.instance_norm(x, weight=gamma, bias=beta, eps=s["eps"])
        y.backward(dy)
        out.update(grad_weight=flat(gamma.grad), grad_bias=flat(beta.grad))
    else:
        out.update(size=s["size"], alpha=s["alpha"], beta=s["beta"], k=s["k"])
        y = F.local_response_norm(x, s["size"], alpha=s["alpha"], beta=s["beta"], k=s["k"])
        y.backward(dy)
    out.update(input=flat(x), output=flat(y), grad_output=flat(dy), grad_input=flat(x.grad))
    return out


def dump(meta, cases):
    """JSON with one case per line and flat float lists kept on one line."""
    def val(v):
        if isinstance(v, Raw):
            return str(v)
        return json.dumps(v)
    lines = ["{\"meta\": %s, \"cases\": [" % json.dumps(meta)]
    for i, c in enumerate(cases):
        body = ", ".join("%s: %s" % (json.dumps(k), val(v)) for k, v in c.items())
        lines.append("{" + body + "}" + ("," if i + 1 < len(cases) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plan", action="store_true", help="list the cases and exit (no torch needed)")
    ap.add_argument("-o", "--output", default=OUT)
    args = ap.parse_args()
    specs = plan()
    if args.plan:
        for s in specs:
            print(s["name"])
        return
    import torch
    import torch.nn.functional as F
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(SEED)
    cases = [run_case(torch, F, gen, s) for s in specs]
    meta = {"format": FORMAT, "torch": torch.__version__, "seed": SEED, "python": sys.version.split()[0],
            "script": "gen_normalization_cases.py"}
    with open(args.output, "w") as f:
        f.write(dump(meta, cases))
    print("wrote %d cases to %s" % (len(cases), args.output))


if __name__ == "__main__":
    main()
