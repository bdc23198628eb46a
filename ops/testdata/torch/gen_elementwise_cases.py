#!/usr/bin/env python3
"""Generate elementwise_cases.json: PyTorch reference outputs and autograd
gradients for the vkmps neuron, softmax and arithmetic kernels (package
ops/ref checks its CPU reference against it; the GPU kernels are checked
against both).

Run from the repository root with the Debian python3 that has torch:

    /usr/bin/python3 ops/testdata/torch/gen_elementwise_cases.py

Deterministic: data come from a CPU torch.Generator seeded with SEED and
everything runs on the CPU in float32, so the file depends only on the
PyTorch version. No date is written: regenerating gives the same bytes.

Cases, all NCHW float32:
  neuron       every vkmps neuron type as PyTorch writes it: F.relu,
               F.leaky_relu, a*x+b, torch.sigmoid, F.hardsigmoid and
               clamp(a*x+b, 0, 1), a*tanh(b*x), torch.abs, F.softplus and
               a*F.softplus(b*x), F.softsign, F.elu, F.prelu (with the
               slopes' gradient), F.relu6 and min(leaky_relu(x, a), b),
               (a*x+b)**c, exp(a*x+b) and 2**x, log(a*x+b) and log10,
               F.gelu. Inputs keep 1e-2 away from every kink and clamp
               bound: MPS's ReLU has slope 1 at 0 where PyTorch's has 0,
               and PyTorch's clamp passes the gradient at its bounds where
               MPS's hard sigmoid and ReLUN do not.
  softmax,     F.softmax(x, 1) and F.log_softmax(x, 1); the gradient is
  log_softmax  autograd's with respect to x (MPS's kernels compute it from
               the forward's result).
  arithmetic   clamp((ps*x) op (ss*y) + bias, min, max) for op in + - * /
               with every broadcast pattern (torch broadcasting = MPS's
               strides of 0), autograd gradients of both sources (summed
               over broadcast axes), PyTorch's clamp rule (bounds pass).
               Divisors keep |y| >= 0.5; pre-clamp values stay 1e-3 away
               from the bounds.

JSON layout (format 1): {"meta": {...}, "cases": [{"name", "kind",
"neuron": {"type", "a", "b", "c", "prelu"} | "arithmetic": {"op",
"primary_scale", "secondary_scale", "bias", "minimum", "maximum"} (null
for no bound), "inputs": [{"shape": [n,c,h,w], "data": [...]}...],
"output": {"shape", "data"}, "grad_output": [...], "grad_inputs": [[...]
one per input], "grad_prelu": [...] (prelu only)}]}. Neuron types and
a, b, c are vkmps's (ops.NeuronType's graph JSON names). Each float is the
shortest decimal that rounds (via float64) back to the same float32.
"""

import argparse
import json
import math
import os
import struct
import sys

SEED = 20261124
FORMAT = 1


def fmt32(v):
    """Shortest decimal that reads back (as float64, then float32) as v."""
    if not math.isfinite(v):
        raise ValueError("non-finite value %r" % v)
    for digits in range(1, 10):
        s = "%.*g" % (digits, v)
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == v:
            return s
    raise AssertionError("no 9-digit round trip for %r" % v)


def floats(values):
    return "[" + ",".join(fmt32(v) for v in values) + "]"


def case_json(c):
    parts = ['"name": %s' % json.dumps(c["name"]), '"kind": %s' % json.dumps(c["kind"])]
    if "neuron" in c:
        n = dict(c["neuron"])
        prelu = n.pop("prelu", None)
        body = ", ".join('"%s": %s' % (k, json.dumps(n[k])) for k in ("type", "a", "b", "c"))
        if prelu is not None:
            body += ', "prelu": ' + floats(prelu)
        parts.append('"neuron": {%s}' % body)
    if "arithmetic" in c:
        parts.append('"arithmetic": ' + json.dumps(c["arithmetic"], sort_keys=True))
    parts.append('"inputs": [%s]' % ", ".join(
        '{"shape": %s, "data": %s}' % (json.dumps(i["shape"]), floats(i["data"])) for i in c["inputs"]))
    parts.append('"output": {"shape": %s, "data": %s}' % (json.dumps(c["output"]["shape"]), floats(c["output"]["data"])))
    parts.append('"grad_output": ' + floats(c["grad_output"]))
    parts.append('"grad_inputs": [%s]' % ", ".join(floats(g) for g in c["grad_inputs"]))
    if "grad_prelu" in c:
        parts.append('"grad_prelu": ' + floats(c["grad_prelu"]))
    return "{" + ", ".join(parts) + "}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "elementwise_cases.json"))
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(SEED)

    def uniform(shape, lo, hi):
        return torch.rand(shape, generator=gen, dtype=torch.float32) * (hi - lo) + lo

    def away(x, points, gap=1e-2):
        """Moves values within gap of a point (in the neuron's input) to gap away."""
        for p in points:
            d = x - p
            near = d.abs() < gap
            x = torch.where(near, p + torch.where(d < 0, -gap, gap) * torch.ones_like(x), x)
        return x

    cases = []

    # Neurons: (name, vkmps type, a, b, c, torch function, input range, kinks in x).
    shape = [2, 3, 4, 5]
    neurons = [
        ("relu", "relu", 0, 0, 0, F.relu, (-3, 3), [0]),
        ("leaky_relu", "relu", 0.1, 0, 0, lambda x: F.leaky_relu(x, 0.1), (-3, 3), [0]),
        ("linear", "linear", -1.5, 0.25, 0, lambda x: -1.5 * x + 0.25, (-3, 3), []),
        ("sigmoid", "sigmoid", 0, 0, 0, torch.sigmoid, (-6, 6), []),
        ("hardsigmoid", "hard_sigmoid", 1 / 6, 0.5, 0, F.hardsigmoid, (-4, 4), [-3, 3]),
        ("hard_sigmoid", "hard_sigmoid", 0.2, 0.5, 0, lambda x: torch.clamp(0.2 * x + 0.5, 0, 1), (-4, 4), [-2.5, 2.5]),
        ("tanh", "tanh", 1, 1, 0, torch.tanh, (-3, 3), []),
        ("scaled_tanh", "tanh", 1.7, 0.6, 0, lambda x: 1.7 * torch.tanh(0.6 * x), (-3, 3), []),
        ("abs", "absolute", 0, 0, 0, torch.abs, (-3, 3), [0]),
        ("softplus", "softplus", 1, 1, 0, F.softplus, (-6, 6), []),
        ("scaled_softplus", "softplus", 0.8, 1.3, 0, lambda x: 0.8 * F.softplus(1.3 * x), (-6, 6), []),
        ("softsign", "softsign", 0, 0, 0, F.softsign, (-3, 3), [0]),
        ("elu", "elu", 1, 0, 0, F.elu, (-3, 3), [0]),
        ("elu_0.7", "elu", 0.7, 0, 0, lambda x: F.elu(x, 0.7), (-3, 3), [0]),
        ("relu6", "relun", 0, 6, 0, F.relu6, (-3, 9), [0, 6]),
        ("leaky_relun", "relun", 0.05, 1.5, 0, lambda x: torch.clamp(F.leaky_relu(x, 0.05), max=1.5), (-3, 3), [0, 1.5]),
        ("power_2.5", "power", 0.5, 3, 2.5, lambda x: (0.5 * x + 3) ** 2.5, (-3, 3), []),
        ("cube", "power", 1, 0, 3, lambda x: x ** 3, (-2, 2), []),
        ("exp", "exponential", 0.5, 0.1, -1, lambda x: torch.exp(0.5 * x + 0.1), (-3, 3), []),
        ("exp2", "exponential", 1, 0, 2, lambda x: torch.pow(2.0, x), (-3, 3), []),
        ("log", "logarithm", 2, 5, -1, lambda x: torch.log(2 * x + 5), (-2, 3), []),
        ("log10", "logarithm", 1, 4, 10, lambda x: torch.log10(x + 4), (-3, 3), []),
        ("gelu", "gelu", 0, 0, 0, F.gelu, (-4, 4), []),
    ]
    for name, typ, a, b, c, fn, (lo, hi), kinks in neurons:
        x = away(uniform(shape, lo, hi), kinks)
        dy = uniform(shape, -1, 1)
        xg = x.clone().requires_grad_(True)
        y = fn(xg)
        y.backward(dy)
        assert torch.isfinite(y).all() and torch.isfinite(xg.grad).all(), name
        cases.append({"name": "neuron/" + name, "kind": "neuron",
                      "neuron": {"type": typ, "a": a, "b": b, "c": c},
                      "inputs": [{"shape": shape, "data": x.flatten().tolist()}],
                      "output": {"shape": shape, "data": y.detach().flatten().tolist()},
                      "grad_output": dy.flatten().tolist(), "grad_inputs": [xg.grad.flatten().tolist()]})
    for pshape in ([2, 3, 4, 5], [1, 7, 3, 3]):
        x = away(uniform(pshape, -3, 3), [0])
        w = uniform([pshape[1]], -0.5, 1)
        dy = uniform(pshape, -1, 1)
        xg, wg = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
        y = F.prelu(xg, wg)
        y.backward(dy)
        cases.append({"name": "neuron/prelu_%d" % pshape[1], "kind": "neuron",
                      "neuron": {"type": "prelu", "a": 0, "b": 0, "c": 0, "prelu": w.tolist()},
                      "inputs": [{"shape": pshape, "data": x.flatten().tolist()}],
                      "output": {"shape": pshape, "data": y.detach().flatten().tolist()},
                      "grad_output": dy.flatten().tolist(), "grad_inputs": [xg.grad.flatten().tolist()],
                      "grad_prelu": wg.grad.tolist()})

    # Softmax over channels.
    for sshape in ([2, 5, 3, 4], [1, 13, 2, 3], [3, 1, 2, 2], [1, 40, 1, 3]):
        for kind, fn in (("softmax", F.softmax), ("log_softmax", F.log_softmax)):
            x = uniform(sshape, -5, 5)
            dy = uniform(sshape, -1, 1)
            xg = x.clone().requires_grad_(True)
            y = fn(xg, 1)
            y.backward(dy)
            cases.append({"name": "%s/%s" % (kind, "x".join(map(str, sshape))), "kind": kind,
                          "inputs": [{"shape": sshape, "data": x.flatten().tolist()}],
                          "output": {"shape": sshape, "data": y.detach().flatten().tolist()},
                          "grad_output": dy.flatten().tolist(), "grad_inputs": [xg.grad.flatten().tolist()]})

    # Arithmetic with broadcasting, scales, bias and clamping.
    patterns = [([2, 3, 4, 5], [2, 3, 4, 5]), ([2, 3, 4, 5], [1, 3, 1, 1]), ([1, 1, 4, 5], [2, 3, 1, 1]),
                ([2, 3, 4, 5], [1, 1, 1, 1]), ([2, 1, 4, 1], [1, 3, 1, 5]), ([3, 2, 2, 4], [3, 2, 1, 4])]
    params = [(1, 1, 0, None, None), (1.5, -0.75, 0.25, None, None), (0.5, 2, -0.5, -1, 1.25), (1, 1, 0, 0, None)]
    ops = [("add", lambda u, v: u + v), ("subtract", lambda u, v: u - v),
           ("multiply", lambda u, v: u * v), ("divide", lambda u, v: u / v)]
    for oi, (op, fn) in enumerate(ops):
        for pi, (xs, ys) in enumerate(patterns):
            ps, ss, bias, lo, hi = params[(oi + pi) % len(params)]
            x = uniform(xs, -2, 2)
            y = uniform(ys, -2, 2)
            if op == "divide":
                y = torch.where(y < 0, y - 0.5, y + 0.5)
            for _ in range(20):  # redraw dy-independent data until no pre-clamp value is near a bound
                pre = fn(ps * x, ss * y) + bias
                near = torch.zeros_like(pre, dtype=torch.bool)
                for bnd in (lo, hi):
                    if bnd is not None:
                        near |= (pre - bnd).abs() < 1e-3
                if not near.any():
                    break
                x = uniform(xs, -2, 2)
            else:
                raise AssertionError("no data away from the bounds for " + op)
            rshape = list(torch.broadcast_shapes(torch.Size(xs), torch.Size(ys)))
            dy = uniform(rshape, -1, 1)
            xg, yg = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
            z = fn(ps * xg, ss * yg) + bias
            if lo is not None or hi is not None:
                z = torch.clamp(z, min=lo, max=hi)
            z.backward(dy)
            cases.append({"name": "arithmetic/%s/%s+%s" % (op, "x".join(map(str, xs)), "x".join(map(str, ys))),
                          "kind": "arithmetic",
                          "arithmetic": {"op": op, "primary_scale": ps, "secondary_scale": ss, "bias": bias,
                                         "minimum": lo, "maximum": hi},
                          "inputs": [{"shape": xs, "data": x.flatten().tolist()},
                                     {"shape": ys, "data": y.flatten().tolist()}],
                          "output": {"shape": rshape, "data": z.detach().flatten().tolist()},
                          "grad_output": dy.flatten().tolist(),
                          "grad_inputs": [xg.grad.flatten().tolist(), yg.grad.flatten().tolist()]})

    counts = {}
    for c in cases:
        counts[c["kind"]] = counts.get(c["kind"], 0) + 1
    meta = {"format": FORMAT, "generator": "ops/testdata/torch/gen_elementwise_cases.py", "seed": SEED,
            "torch": torch.__version__, "device": "cpu", "counts": counts,
            "layout": "NCHW float32; shapes [n, c, h, w]"}
    text = '{"meta": ' + json.dumps(meta, sort_keys=True) + ',\n"cases": [\n' + ",\n".join(
        case_json(c) for c in cases) + "\n]}\n"
    back = json.loads(text)
    assert len(back["cases"]) == len(cases)
    for c, b in zip(cases, back["cases"]):
        f32 = lambda vs: [struct.unpack("<f", struct.pack("<f", v))[0] for v in vs]
        assert f32(b["output"]["data"]) == c["output"]["data"], c["name"]
        assert [f32(g) for g in b["grad_inputs"]] == c["grad_inputs"], c["name"]
    with open(args.out, "w") as f:
        f.write(text)
    size = len(text.encode())
    print("wrote %s: %d cases %s, %.2f MB, torch %s" % (args.out, len(cases), counts, size / 1e6, torch.__version__))
    if size > 1_000_000:
        print("warning: the file is over 1 MB", file=sys.stderr)


if __name__ == "__main__":
    main()
