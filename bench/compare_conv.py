#!/usr/bin/env python3
"""Joins `vkmps bench --conv --json` with bench/torch_training_baseline.py's
convolution rows (same layer names) into issue 15's table: per layer and
pass, vkmps's µs and TFLOP/s against cuDNN's float32 without TF32, with
TF32, and float16 (tensor cores); the ratio is cuDNN's time over vkmps's
(above 1: vkmps faster), against fp32 for vkmps's float32 rows and fp16
for its float16 rows.

usage: python3 bench/compare_conv.py VKMPS.jsonl TORCH.jsonl [--md]
"""
import json, sys


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
    ours = [r for r in rows(args[0]) if "conv" in r and "mode" in r]
    torch = {(r["conv"], r["mode"]): r for r in rows(args[1]) if "conv" in r and "mode" in r}
    head = ["convolution", "dtype", "pass", "vkmps µs (TFLOP/s)", "cuDNN fp32", "cuDNN tf32", "cuDNN fp16", "× cuDNN"]
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
            table.append(cells)
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
