"""PyTorch (CUDA) eager loss baseline for ops.Loss (BenchmarkLossGPU), for
side-by-side runs on an NVIDIA GPU.

Prints one JSON object per line: loss, shape, dtype, forward (reduction
"mean") and backward (autograd's gradient w.r.t. the prediction alone, the
forward's graph kept) GPU microseconds (CUDA events, mean of --iters after a
warm-up), and the minimum-traffic bandwidth each achieved (forward: the
prediction and labels read; backward: both read and the gradient written,
as BenchmarkLossGPU counts). The last line is the device-to-device copy
bandwidth of a tensor of the prediction's size.

Usage (a CUDA machine where python3 has torch):
    python3 torch_loss_baseline.py [--iters 50] [--dtype float32|float16] [--shape 64 256 56 56]
"""
import argparse
import json

import torch
import torch.nn.functional as F

LOSSES = {
    "mse": lambda y, t: F.mse_loss(y, t),
    "huber": lambda y, t: F.huber_loss(y, t, delta=1.0),
    "sigmoid-cross-entropy": lambda y, t: F.binary_cross_entropy_with_logits(y, t),
    "softmax-cross-entropy": lambda y, t: F.cross_entropy(y, t),  # probability labels over channels
}


def gpu_us(fn, iters):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16"])
    ap.add_argument("--shape", type=int, nargs=4, default=[64, 256, 56, 56])
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    shape = tuple(args.shape)
    n = shape[0] * shape[1] * shape[2] * shape[3]
    nbytes = n * torch.tensor([], dtype=dtype).element_size()
    torch.manual_seed(1)
    for name, fn in LOSSES.items():
        y = torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True)
        if name == "sigmoid-cross-entropy":
            t = torch.rand(shape, device="cuda", dtype=dtype)
        elif name == "softmax-cross-entropy":
            t = torch.softmax(torch.randn(shape, device="cuda", dtype=torch.float32), 1).to(dtype)
        else:
            t = torch.randn(shape, device="cuda", dtype=dtype)
        with torch.no_grad():
            fwd = gpu_us(lambda: fn(y, t), args.iters)
        loss = fn(y, t)
        bwd = gpu_us(lambda: torch.autograd.grad(loss, y, retain_graph=True), args.iters)
        print(json.dumps({
            "loss": name, "shape": list(shape), "dtype": args.dtype,
            "fwd_us": round(fwd, 2), "fwd_GBps": round(2 * nbytes / fwd / 1e3, 1),
            "bwd_us": round(bwd, 2), "bwd_GBps": round(3 * nbytes / bwd / 1e3, 1),
        }))
        del y, t, loss
    a = torch.empty(n, device="cuda", dtype=dtype)
    b = torch.empty_like(a)
    cp = gpu_us(lambda: b.copy_(a), args.iters)
    print(json.dumps({"copy_us": round(cp, 2), "copy_GBps": round(2 * nbytes / cp / 1e3, 1)}))


if __name__ == "__main__":
    main()
