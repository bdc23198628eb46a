#!/usr/bin/env python3
"""LeNet-5 on MNIST in PyTorch, against `vkmps train mnist` (issue 18).

Two measurements, both on the same data and GPU as vkmps:

1. Step by step: the same initial weights (vkmps's --init-out folder of
   .npy files), the same batches (the training images in file order:
   vkmps's --no-shuffle), SGD with momentum 0.9 and lr 0.01 (PyTorch's form,
   which `vkmps train mnist --optimizer momentum` uses). The losses of the
   first steps are compared with vkmps's --out log.jsonl.
2. Throughput: images per second of training steps (forward, backward,
   update) at each --batch, eager PyTorch, float32 with TF32 off, timed
   with CUDA events after a warm-up, the host included (that is what bounds
   eager PyTorch on this model).

usage:
  python3 bench/torch_lenet.py --data DIR --init DIR --vkmps-log LOG.jsonl [--steps 50] [--batches 64,512]
Prints a JSON object per measurement on stdout.
"""
import argparse, gzip, json, os, struct, sys, time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    rank = magic & 0xFF
    dims = struct.unpack(">" + "I" * rank, data[4:4 + 4 * rank])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(data_dir):
    def path(name):
        p = os.path.join(data_dir, name)
        return p if os.path.exists(p) else p + ".gz"
    x = read_idx(path("train-images-idx3-ubyte")).astype(np.float32)
    y = read_idx(path("train-labels-idx1-ubyte")).astype(np.int64)
    x = (x / 255.0 - 0.1307) / 0.3081
    return torch.from_numpy(x[:, None]), torch.from_numpy(y)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1 = nn.Linear(256, 120)
        self.f2 = nn.Linear(120, 84)
        self.f3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.f1(x))
        x = F.relu(self.f2(x))
        return self.f3(x)


def load_init(model, init_dir):
    with torch.no_grad():
        for name in ["c1", "c2", "f1", "f2", "f3"]:
            layer = getattr(model, name)
            layer.weight.copy_(torch.from_numpy(np.load(os.path.join(init_dir, name + ".weights.npy"))))
            layer.bias.copy_(torch.from_numpy(np.load(os.path.join(init_dir, name + ".bias.npy"))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--init", help="vkmps's --init-out folder")
    ap.add_argument("--vkmps-log", help="vkmps's log.jsonl of the same steps")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--batches", default="64,512")
    ap.add_argument("--timed", type=int, default=300)
    args = ap.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, y = load(args.data)
    xg, yg = x.to(dev), y.to(dev)

    if args.init:
        model = LeNet().to(dev)
        load_init(model, args.init)
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        losses = []
        b = 64
        for s in range(args.steps):
            xb, yb = xg[s * b:(s + 1) * b], yg[s * b:(s + 1) * b]
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        rec = {"kind": "lenet-steps", "steps": args.steps, "torch_losses": losses}
        if args.vkmps_log:
            v = [json.loads(l)["loss"] for l in open(args.vkmps_log) if l.strip()][:args.steps]
            rel = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(v, losses)]
            rec.update({"vkmps_losses": v, "max_rel_diff": max(rel), "within_1e-3": all(r <= 1e-3 for r in rel)})
        print(json.dumps(rec), flush=True)

    for b in [int(s) for s in args.batches.split(",")]:
        model = LeNet().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        g = torch.Generator(device="cpu").manual_seed(1)
        n = x.shape[0] // b

        def step(i):
            idx = perm[(i % n) * b:(i % n + 1) * b]
            loss = F.cross_entropy(model(xg[idx]), yg[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return loss

        perm = torch.randperm(x.shape[0], generator=g).to(dev)
        for i in range(50):
            step(i)
        torch.cuda.synchronize() if dev.type == "cuda" else None
        t0 = time.perf_counter()
        if dev.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
        for i in range(args.timed):
            step(i)
        if dev.type == "cuda":
            end.record()
            torch.cuda.synchronize()
        wall = time.perf_counter() - t0
        rec = {"kind": "lenet-throughput", "batch": b, "steps": args.timed, "ms_per_step": 1e3 * wall / args.timed,
               "images_per_s": b * args.timed / wall, "device": torch.cuda.get_device_name() if dev.type == "cuda" else "cpu",
               "torch": torch.__version__}
        if dev.type == "cuda":
            rec["event_ms_per_step"] = start.elapsed_time(end) / args.timed
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
