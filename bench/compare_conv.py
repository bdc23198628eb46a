#!/usr/bin/env python3
"""Joins `vkmps bench --conv --json` with bench/torch_training_baseline.py's
convolution rows (same layer names) into issue 15's table: per layer and
pass, vkmps's µs and TFLOP/s against cuDNN's float32 without TF32, with
TF32, and float16 (tensor cores); the ratio is cuDNN's time over vkmps's
(above 1: vkmps faster), against fp32 for vkmps's float32 rows and fp16
for its float16 rows. "% peak" is vkmps's TFLOP/s over the device's dense
peak for its type (PEAKS, from the vendor's data sheet: the float32 rows
against the non-tensor float32 rate, the float16 rows against the
float16 tensor-core rate with float32 accumulation); the Winograd rows
count a direct convolution's multiply-adds, so theirs is an effective
rate and may pass what the arithmetic itself reaches. The header names
the device's peaks, TF32's too (cuDNN's "tf32" column).

usage: python3 bench/compare_conv.py VKMPS.jsonl TORCH.jsonl [--md]
"""
import json, sys


# PEAKS: dense TFLOP/s (float32 non-tensor, TF32 tensor, float16 tensor
# with float32 accumulation) by device name, from NVIDIA's data sheets
# for the SXM parts (the H200's compute is the H100 SXM's).
PEAKS = {
    "NVIDIA H100 80GB HBM3": (66.9, 494.7, 989.4),
    "NVIDIA H100": (66.9, 494.7, 989.4),
    "NVIDIA H200": (66.9, 494.7, 989.4),
}


def peaks(device):
    """The device's (fp32, tf32, fp16) peaks: an exact name, else the
    longest PEAKS name the device's starts with; None when unknown."""
    if device in PEAKS:
        return PEAKS[device]
    best = max((k for k in PEAKS if device.startswith(k)), key=len, default=None)
    return PEAKS[best] if best else None


def rows(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    md = "--md" in sys.argv
    if len(args) != 2:
        sys.exit(__doc__)
    mine = rows(args[0])
    ours = [r for r in mine if "conv" in r and "mode" in r]
    device = next((r["device"] for r in mine if "device" in r), "")
    peak = peaks(device)
    torch = {(r["conv"], r["mode"]): r for r in rows(args[1]) if "conv" in r and "mode" in r}
    head = ["convolution", "dtype", "pass", "vkmps µs (TFLOP/s)", "cuDNN fp32", "cuDNN tf32", "cuDNN fp16", "× cuDNN", "% peak"]
    table = []
    for r in ours:
        for p in ("fwd", "dx", "dw"):
            us, tf = r[p + "_us"], r[p + "_tflops"]
            cells = [r["conv"], r["dtype"], p, "%.1f (%.1f)" % (us, tf)]
            for mode in ("fp32", "tf32", "fp16"):
                t = torch.get((r["conv"], mode))
                cells.append("%.1f (%.1f)" % (t[p + "_us"], t[p + "_tflops"]) if t else "")
            t = torch.get((r["conv"], r["mode"]))
            cells.append("%.2f" % (t[p + "_us"] / us) if t and us > 0 else "")
            cells.append("%.1f" % (100 * tf / peak[2 if r["dtype"] == "float16" else 0]) if peak else "")
            table.append(cells)
    if peak:
        print("%s: dense peaks %.1f TFLOP/s float32, %.1f TF32, %.1f float16 (data sheet)%s" %
              (device, peak[0], peak[1], peak[2], "\n" if md else ""))
    elif device:
        print("%s: no peak known (bench/compare_conv.py PEAKS)%s" % (device, "\n" if md else ""))
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * 3 + "--:|" * (len(head) - 3))
        for c in table:
            print("| " + " | ".join(c) + " |")
        return
    widths = [max(len(x) for x in col) for col in zip(head, *table)]
    for c in [head] + table:
        print("  ".join(x.rjust(w) for x, w in zip(c, widths)))


if __name__ == "__main__":
    main()
