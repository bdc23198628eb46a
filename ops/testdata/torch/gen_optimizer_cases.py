#!/usr/bin/env python3
"""Generate optimizer_cases.json: five steps of torch.optim optimizers on fixed
tensors with given gradients, for the vkmps optimizers (ops.Optimizer in
OptimizerFormPyTorch and ref.Optimizer with PyTorch true are checked against
it; see ops/optimizer_test.go).

Run from the repository root with PyTorch (1.13 CPU is what it was made with):

    /usr/bin/python3 ops/testdata/torch/gen_optimizer_cases.py

Deterministic: every tensor comes from a CPU torch.Generator seeded with SEED,
and everything is float32 on the CPU. Each case starts from "param0" (one
tensor of 23 values), and at step i sets the learning rate to lr[i], sets the
gradient to grads[i], clamps it to [clip_min, clip_max] when "clip" is given
(Tensor.clamp_, as MPS clips per value before the optimizer adds weight
decay), calls step() and records the parameter in params[i].

Cases cover SGD (plain, momentum, Nesterov, weight decay, a decaying learning
rate where MPS's and PyTorch's momentum differ), RMSprop (alpha 0.99 and 0.9,
weight decay), Adam (defaults, other betas with weight decay, AMSGrad, and
gradients near 1e-6 where MPS's and PyTorch's epsilon differ), and clipping.

JSON layout (format 1): {"meta": {"torch", "seed", "steps"}, "cases": [{"name",
"optimizer": "sgd"|"rmsprop"|"adam", "lr": [steps], "momentum", "nesterov",
"weight_decay", "alpha", "betas": [b1, b2], "eps", "amsgrad", "clip": null or
[min, max], "param0": [...], "grads": [[...] x steps], "params": [[...] x
steps]}]}. Values are float32, written as the float64 decimals that read back
as the same float32.
"""
import json
import os

import numpy as np
import torch

SEED = 17
STEPS = 5
SIZE = 23


def f32list(t):
    return [float(np.float32(v)) for v in t.detach().reshape(-1).tolist()]


def run(case, gen):
    param0 = torch.randn(SIZE, generator=gen, dtype=torch.float32)
    scale = case.pop("grad_scale", 1.0)
    grads = [torch.randn(SIZE, generator=gen, dtype=torch.float32) * scale for _ in range(STEPS)]
    p = torch.nn.Parameter(param0.clone())
    kind = case["optimizer"]
    lr0 = case["lr"][0]
    if kind == "sgd":
        opt = torch.optim.SGD([p], lr=lr0, momentum=case["momentum"], nesterov=case["nesterov"],
                              weight_decay=case["weight_decay"])
    elif kind == "rmsprop":
        opt = torch.optim.RMSprop([p], lr=lr0, alpha=case["alpha"], eps=case["eps"],
                                  weight_decay=case["weight_decay"])
    else:
        opt = torch.optim.Adam([p], lr=lr0, betas=tuple(case["betas"]), eps=case["eps"],
                               weight_decay=case["weight_decay"], amsgrad=case["amsgrad"])
    params = []
    for i in range(STEPS):
        for g in opt.param_groups:
            g["lr"] = case["lr"][i]
        p.grad = grads[i].clone()
        if case["clip"] is not None:
            p.grad.clamp_(case["clip"][0], case["clip"][1])
        opt.step()
        params.append(f32list(p))
    case["param0"] = f32list(param0)
    case["grads"] = [f32list(g) for g in grads]
    case["params"] = params
    return case


def case(name, optimizer, lr, momentum=0.0, nesterov=False, weight_decay=0.0, alpha=0.99,
         betas=(0.9, 0.999), eps=1e-8, amsgrad=False, clip=None, grad_scale=1.0):
    if not isinstance(lr, list):
        lr = [lr] * STEPS
    return {"name": name, "optimizer": optimizer, "lr": lr, "momentum": momentum, "nesterov": nesterov,
            "weight_decay": weight_decay, "alpha": alpha, "betas": list(betas), "eps": eps,
            "amsgrad": amsgrad, "clip": clip, "grad_scale": grad_scale}


def main():
    torch.use_deterministic_algorithms(True)
    gen = torch.Generator().manual_seed(SEED)
    decaying = [0.1 * 0.5 ** i for i in range(STEPS)]
    cases = [
        case("sgd", "sgd", 0.1),
        case("sgd-momentum", "sgd", 0.05, momentum=0.9),
        case("sgd-momentum-decaying-lr", "sgd", decaying, momentum=0.9, weight_decay=0.01),
        case("sgd-nesterov", "sgd", 0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
        case("sgd-clip", "sgd", 0.1, momentum=0.5, clip=[-0.5, 0.3]),
        case("rmsprop", "rmsprop", 0.01),
        case("rmsprop-decay-wd", "rmsprop", 0.01, alpha=0.9, eps=1e-6, weight_decay=0.01),
        case("adam", "adam", 1e-3),
        case("adam-betas-wd", "adam", 1e-2, betas=(0.8, 0.99), weight_decay=0.1),
        case("adam-amsgrad", "adam", 1e-2, amsgrad=True),
        case("adam-small-gradients", "adam", 1e-3, grad_scale=1e-6),
        case("adam-clip-decaying-lr", "adam", decaying, clip=[-1.0, 0.5]),
    ]
    out = {"meta": {"torch": torch.__version__, "seed": SEED, "steps": STEPS},
           "cases": [run(c, gen) for c in cases]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizer_cases.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote", path, len(out["cases"]), "cases")


if __name__ == "__main__":
    main()
