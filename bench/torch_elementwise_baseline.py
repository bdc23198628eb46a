"""PyTorch (CUDA) baseline for the neuron, arithmetic and softmax kernels, to
set beside `go test ./ops -bench 'Neuron|Arithmetic|SoftMax'GPU` on the same GPU.

Prints one JSON object per line: op, shape, dtype, forward and backward GPU
microseconds (CUDA events, mean of `--iters` after warm-up) and the
minimum-traffic bandwidth, counted as ops/neuron_bench_test.go counts it
(each image read or written once). The last line is the device-to-device
copy bandwidth of the same number of bytes.

Usage (a CUDA machine where python3 has torch):
    python3 torch_elementwise_baseline.py [--iters 50] [--dtype float32|float16] [--small]
"""
import argparse
import json

import torch
import torch.nn.functional as F


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
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--small", action="store_true", help="the benchmarks' small shapes (without VKMPS_BENCH_LARGE)")
    args = ap.parse_args()
    dtype = getattr(torch, args.dtype)
    esize = torch.tensor([], dtype=dtype).element_size()
    print(json.dumps({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "dtype": args.dtype}))
    shape = (2, 16, 56, 56) if args.small else (64, 256, 56, 56)
    n, c = shape[0], shape[1]
    x = torch.randn(shape, device="cuda", dtype=dtype)
    y = torch.randn_like(x)
    pc = torch.randn(1, c, 1, 1, device="cuda", dtype=dtype)
    g = torch.randn_like(x)
    out = torch.empty_like(x)
    nbytes = x.numel() * esize

    def emit(op, fwd_us, fwd_traffic, bwd_us=None, bwd_traffic=None, s=shape):
        rec = {"op": op, "shape": list(s), "dtype": args.dtype, "fwd_us": round(fwd_us, 1),
               "fwd_GBps": round(fwd_traffic * nb(s) / fwd_us / 1e3)}
        if bwd_us is not None:
            rec["bwd_us"] = round(bwd_us, 1)
            rec["bwd_GBps"] = round(bwd_traffic * nb(s) / bwd_us / 1e3)
        print(json.dumps(rec))

    def nb(s):
        k = 1
        for v in s:
            k *= v
        return k * esize

    # Neurons: forward out-of-place (2 images), backward via the autograd
    # kernels (dy, x, dx: 3 images).
    w = torch.rand(c, device="cuda", dtype=dtype)
    neurons = {
        "relu": lambda t: F.relu(t), "prelu": lambda t: F.prelu(t, w), "tanh": torch.tanh, "gelu": F.gelu,
    }
    for name, fn in neurons.items():
        xg = x.clone().requires_grad_(True)
        fwd = gpu_us(lambda: fn(x), args.iters)
        yv = fn(xg)
        both = gpu_us(lambda: torch.autograd.grad(fn(xg), xg, g), args.iters)
        emit(name, fwd, 2, max(both - fwd, 1e-3), 3)

    # Arithmetic.
    emit("add", gpu_us(lambda: torch.add(x, y, out=out), args.iters), 3)
    emit("add-clamped", gpu_us(lambda: torch.clamp(x + y, 0, 6), args.iters), 3)
    emit("multiply-per-channel", gpu_us(lambda: torch.mul(x, pc, out=out), args.iters), 2)
    emit("multiply/bwd-primary (dy*y)", gpu_us(lambda: torch.mul(g, y, out=out), args.iters), 3)
    emit("add-per-channel/bwd-secondary (sum over n,h,w)", gpu_us(lambda: g.sum(dim=(0, 2, 3), keepdim=True), args.iters), 1)
    emit("multiply-per-channel/bwd-secondary (sum of dy*x over n,h,w)",
         gpu_us(lambda: (g * x).sum(dim=(0, 2, 3), keepdim=True), args.iters), 2)

    # Softmax over channels.
    shapes = [(1, 1000, 16, 16), (1, 1000, 8, 8), (8, 1000, 1, 1)] if args.small else \
        [(1, 1000, 64, 64), (1, 1000, 8, 8), (64, 1000, 1, 1)]
    for s in shapes:
        xs = torch.randn(s, device="cuda", dtype=dtype, requires_grad=True)
        gs = torch.randn(s, device="cuda", dtype=dtype)
        for name, fn in (("softmax", F.softmax), ("log-softmax", F.log_softmax)):
            fwd = gpu_us(lambda: fn(xs, 1), args.iters)
            ys = fn(xs, 1)
            bwd = gpu_us(lambda: torch.autograd.grad(ys, xs, gs, retain_graph=True), args.iters)
            emit(name, fwd, 2, bwd, 3, s)

    # Upsampling by 2x2 (BenchmarkUpsamplingGPU's shape): forward and the
    # autograd gradient, 5 source-sized images of traffic each way.
    us = (2, 16, 28, 28) if args.small else (32, 256, 56, 56)
    xu = torch.randn(us, device="cuda", dtype=dtype, requires_grad=True)
    gu = torch.randn((us[0], us[1], 2 * us[2], 2 * us[3]), device="cuda", dtype=dtype)
    for name, kw in (("upsample-nearest", dict(mode="nearest")),
                     ("upsample-bilinear", dict(mode="bilinear", align_corners=False)),
                     ("upsample-bilinear-align", dict(mode="bilinear", align_corners=True))):
        fn = lambda: F.interpolate(xu, scale_factor=2, **kw)
        fwd = gpu_us(fn, args.iters)
        yu = fn()
        bwd = gpu_us(lambda: torch.autograd.grad(yu, xu, gu, retain_graph=True), args.iters)
        emit(name, fwd, 5, bwd, 5, us)

    a = torch.empty(x.numel() * esize // 4, device="cuda", dtype=torch.float32)
    b = torch.empty_like(a)
    us = gpu_us(lambda: b.copy_(a), 20)
    print(json.dumps({"op": "d2d-copy", "bytes": nbytes, "GBps": round(2 * nbytes / us / 1e3)}))


if __name__ == "__main__":
    main()
