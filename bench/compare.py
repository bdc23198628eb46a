#!/usr/bin/env python3
"""Join `vkmps bench --json` with torch_pool_baseline.py's output (both one
JSON object per line, run on the same GPU) and print the side-by-side table
of issue 9: GPU microseconds, the speed-up over PyTorch (NCHW), and the share
of the copy bandwidth each achieved under the minimum-traffic model.

    python3 bench/compare.py vkmps.jsonl torch.jsonl [--md]
"""
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(r):
    return (r["op"], tuple(r["shape"]), r["kernel"], r["stride"], r["pad"])


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    md = "--md" in sys.argv
    if len(args) != 2:
        sys.exit(__doc__)
    vk, th = load(args[0]), load(args[1])
    head = vk[0]
    vcopy = next(r for r in vk if r.get("op") == "d2d-copy")
    tcopy = next((r for r in th if r.get("op") == "d2d-copy"), {})
    tmeta = th[0] if th and "torch" in th[0] else {}
    torch = {key(r): r for r in th if r.get("layout") == "nchw" and "fwd_us" in r}
    print(f"device: {head['device']}, driver {head['driver']} {head['driver_version']}, {head['date']}")
    print(f"PyTorch {tmeta.get('torch', '?')} cuDNN {tmeta.get('cudnn', '?')} on {tmeta.get('device', '?')}")
    print(f"copy bandwidth: vkmps copy shader {vcopy['GBps']} GB/s, vkCmdCopyBuffer {vcopy.get('cmd_copy_GBps', '?')} GB/s, "
          f"PyTorch d2d {tcopy.get('GBps', '?')} GB/s")
    ceiling = vcopy["GBps"]
    rows = []
    for r in vk[1:]:
        if "fwd_us" not in r:
            continue
        t = torch.get(key(r))
        name = r["op"] + (" +argmax" if r.get("argmax") else "")
        shape = "x".join(map(str, r["shape"])) + f" k{r['kernel']} s{r['stride']} p{r['pad']}"
        tf, tb = (t["fwd_us"], t["bwd_us"]) if t else (None, None)
        rows.append([name, shape,
                     r["fwd_us"], tf, (tf / r["fwd_us"]) if tf else None, 100 * r["fwd_GBps"] / ceiling,
                     r["bwd_us"], tb, (tb / r["bwd_us"]) if tb else None, 100 * r["bwd_GBps_min_traffic"] / ceiling])
    cols = ["kernel", "shape", "fwd us", "torch fwd", "x torch", "% copy", "bwd us", "torch bwd", "x torch", "% copy"]

    def fmt(v, i):
        if v is None:
            return "-"
        if isinstance(v, str):
            return v
        return f"{v:.2f}" if i in (4, 8) else f"{v:.1f}"
    table = [[fmt(v, i) for i, v in enumerate(row)] for row in rows]
    if md:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
        for row in table:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(c), *(len(row[i]) for row in table)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for row in table:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


if __name__ == "__main__":
    main()
