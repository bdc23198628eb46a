"""cuDNN's time for each convolution of a ResNet-18 training step (batch 32, 224x224).

Prints one JSON line per distinct layer and mode (fp32 without TF32, tf32, fp16):
forward, data gradient and weight gradient in µs (CUDA events, mean over --iters
after warm-up, cudnn.benchmark on as in bench/torch_resnet18.py), the layer's count
in the network, then one "total" line per mode: the step's convolution time, the
count-weighted sum without the stem's data gradient (the image needs none). Compare
with `vkmps train synthetic ... --json F`, whose profile_nodes give vkmps's time for
the same nodes.

Usage (a CUDA machine with torch):  python3 torch_resnet18_convs.py [--iters 30]
"""
import argparse, json
import torch
import torch.nn.functional as F

from torch_training_baseline import gpu_us  # CUDA events over iters after warm-up

# name, C, H (=W), O, k, stride, pad, count in ResNet-18
LAYERS = [
    ("stem 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 3, 1),
    ("3x3 64 @56", 64, 56, 64, 3, 1, 1, 4),
    ("3x3/2 64->128 @56", 64, 56, 128, 3, 2, 1, 1),
    ("1x1/2 64->128 @56", 64, 56, 128, 1, 2, 0, 1),
    ("3x3 128 @28", 128, 28, 128, 3, 1, 1, 3),
    ("3x3/2 128->256 @28", 128, 28, 256, 3, 2, 1, 1),
    ("1x1/2 128->256 @28", 128, 28, 256, 1, 2, 0, 1),
    ("3x3 256 @14", 256, 14, 256, 3, 1, 1, 3),
    ("3x3/2 256->512 @14", 256, 14, 512, 3, 2, 1, 1),
    ("1x1/2 256->512 @14", 256, 14, 512, 1, 2, 0, 1),
    ("3x3 512 @7", 512, 7, 512, 3, 1, 1, 3),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    n = a.batch
    for mode in ("fp32", "tf32", "fp16"):
        torch.backends.cudnn.allow_tf32 = mode == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        dt = torch.float16 if mode == "fp16" else torch.float32
        total = 0.0
        for (name, c, h, o, k, s, p, count) in LAYERS:
            x = torch.randn(n, c, h, h, device="cuda", dtype=dt)
            wt = torch.randn(o, c, k, k, device="cuda", dtype=dt)
            y = F.conv2d(x, wt, None, s, p)
            dy = torch.randn_like(y)
            fwd = gpu_us(lambda: F.conv2d(x, wt, None, s, p), a.iters)
            dx = gpu_us(lambda: torch.ops.aten.convolution_backward(dy, x, wt, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [True, False, False]), a.iters)
            dw = gpu_us(lambda: torch.ops.aten.convolution_backward(dy, x, wt, None, [s, s], [p, p], [1, 1], False, [0, 0], 1, [False, True, False]), a.iters)
            stem = name.startswith("stem")
            total += count * (fwd + dw + (0 if stem else dx))
            print(json.dumps({"layer": name, "mode": mode, "count": count, "fwd_us": round(fwd, 1), "dx_us": round(dx, 1),
                              "dw_us": round(dw, 1), "dx_needed": not stem}), flush=True)
        print(json.dumps({"total": mode, "conv_us_per_step": round(total, 1)}), flush=True)
    torch.backends.cudnn.allow_tf32 = True


if __name__ == "__main__":
    main()
