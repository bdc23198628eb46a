#!/usr/bin/env python3
"""One ResNet-18 training step in eager PyTorch (issue 18's baseline for
`vkmps train synthetic cmd/vkmps/models/resnet18.json`): torchvision's
resnet18, batch 32 of synthetic 3x224x224 images and random classes, SGD
with momentum 0.9, cross-entropy. For float32 (TF32 on, PyTorch's default
for convolutions, and off) and float16 (the whole model in half, as vkmps's
float16 images; vkmps keeps float32 master weights). Reports the wall time
per step (after warm-up, CUDA-synchronized), the GPU's kernel time per step
from torch.profiler, and so the GPU busy fraction, one JSON line each.

usage: python3 bench/torch_resnet18.py [--batch 32] [--steps 30]
"""
import argparse, json, time

import torch
import torch.nn.functional as F
import torchvision


def run(dtype, tf32, batch, steps):
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda")
    model = torchvision.models.resnet18().to(dev)
    if dtype == "float16":
        model = model.half()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(batch, 3, 224, 224, generator=g).to(dev)
    if dtype == "float16":
        x = x.half()
    y = torch.randint(0, 1000, (batch,), generator=g).to(dev)

    def step():
        loss = F.cross_entropy(model(x).float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    # Warm-up as vkmps train synthetic's: 10 steps (cuDNN's benchmark mode
    # tries its algorithms there), then more until a second has passed
    # since them, so that the GPU's clocks are up.
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    warm, w0 = 10, time.perf_counter()
    while time.perf_counter() - w0 < 1.0:
        step()
        warm += 1
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / steps
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    gpu_us = sum(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
                 for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA) / 5
    # Group the kernels as vkmps groups its nodes.
    kinds = {}
    for e in prof.key_averages():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
        n = e.key.lower()
        k = ("conv" if any(s in n for s in ("conv", "gemm", "sm90", "xmma", "cutlass", "implicit", "wgrad", "dgrad", "fprop"))
             else "batch_norm" if "batch_norm" in n or "bn_" in n else
             "pool" if "pool" in n else "elementwise/other")
        kinds[k] = kinds.get(k, 0) + t / 5 / 1e3
    return {"kind": "resnet18-step", "dtype": dtype, "tf32": tf32, "batch": batch, "warmup_steps": warm, "ms_per_step": wall * 1e3,
            "gpu_ms_per_step": gpu_us / 1e3, "gpu_busy": gpu_us / 1e6 / wall, "profile_ms": kinds,
            "device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    for dtype, tf32 in [("float32", True), ("float32", False), ("float16", False)]:
        print(json.dumps(run(dtype, tf32, args.batch, args.steps)), flush=True)


if __name__ == "__main__":
    main()
