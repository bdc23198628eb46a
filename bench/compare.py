#!/usr/bin/env python3
"""Join `vkmps bench --json` with torch_pool_baseline.py's output (both one
JSON object per line, run on the same GPU) and print the side-by-side table
of issue 9: GPU microseconds, the speed-up over PyTorch (NCHW), and the share
of the copy bandwidth each achieved under the minimum-traffic model.
Rows join on op, shape, kernel, stride, pad and dtype (vkmps's rows say
theirs; a PyTorch file's header does), so a `vkmps bench --dtype
float32,float16` run joins a float32 and a float16 PyTorch file; the
float16 speed-ups over float32 (vkmps) follow the table, then the training
pairs (issue 21): forward + gradient against PyTorch's forward + backward,
where vkmps's max kinds take the cheaper of recording the argmax in the
forward ("+argmax" rows) and recomputing it in the gradient (plain rows).

    python3 bench/compare.py vkmps.jsonl torch.jsonl [torch16.jsonl] [--md]
"""
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(r, dtype):
    return (r["op"], tuple(r["shape"]), r["kernel"], r["stride"], r["pad"], dtype)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    md = "--md" in sys.argv
    if len(args) < 2:
        sys.exit(__doc__)
    vk = load(args[0])
    torch = {}
    th = []
    for path in args[1:]:
        rows = load(path)
        dt = rows[0].get("dtype", "float32") if rows and "torch" in rows[0] else "float32"
        torch.update({key(r, dt): r for r in rows if r.get("layout") == "nchw" and "fwd_us" in r})
        th = th or rows
    head = vk[0]
    vcopy = next(r for r in vk if r.get("op") == "d2d-copy")
    tcopy = next((r for r in th if r.get("op") == "d2d-copy"), {})
    tmeta = th[0] if th and "torch" in th[0] else {}
    print(f"device: {head['device']}, driver {head['driver']} {head['driver_version']}, {head['date']}")
    print(f"PyTorch {tmeta.get('torch', '?')} cuDNN {tmeta.get('cudnn', '?')} on {tmeta.get('device', '?')}")
    print(f"copy bandwidth: vkmps copy shader {vcopy['GBps']} GB/s, vkCmdCopyBuffer {vcopy.get('cmd_copy_GBps', '?')} GB/s, "
          f"PyTorch d2d {tcopy.get('GBps', '?')} GB/s")
    ceiling = vcopy["GBps"]
    rows = []
    for r in vk[1:]:
        if "fwd_us" not in r:
            continue
        dt = r.get("dtype", "float32")
        t = torch.get(key(r, dt))
        name = r["op"] + (" +argmax" if r.get("argmax") else "") + (" f16" if dt == "float16" else "")
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
    show(cols, table, md)
    half = [r for r in vk[1:] if "fwd_speedup_vs_float32" in r]
    if half:
        print("\nvkmps float16 speed-up over float32 (float32 time / float16 time; target 1.5x on the two large shapes)")
        show(["kernel", "shape", "fwd x", "bwd x"],
             [[r["op"] + (" +argmax" if r.get("argmax") else ""),
               "x".join(map(str, r["shape"])) + f" k{r['kernel']} s{r['stride']} p{r['pad']}",
               f"{r['fwd_speedup_vs_float32']:.2f}", f"{r['bwd_speedup_vs_float32']:.2f}"] for r in half], md)
    pairs = training_pairs(vk[1:], torch)
    if pairs:
        print("\ntraining pairs: forward + gradient, us (max kinds: the cheaper of recorded and recomputed argmax; target 2.5x)")
        show(["kernel", "shape", "vkmps us", "argmax", "torch us", "x torch"], pairs, md)


def training_pairs(rows, torch):
    """Per op, shape and dtype: vkmps's forward + gradient (for the max
    kinds the cheaper of the "+argmax" row and the plain row, and which
    it was) against PyTorch's forward + backward."""
    best, order = {}, []
    for r in rows:
        if "fwd_us" not in r or "bwd_us" not in r:
            continue
        dt = r.get("dtype", "float32")
        k = key(r, dt)
        t = r["fwd_us"] + r["bwd_us"]
        if k not in best:
            order.append(k)
            best[k] = (t, r)
        elif t < best[k][0]:
            best[k] = (t, r)
    out = []
    for k in order:
        t, r = best[k]
        tr = torch.get(k)
        tt = tr["fwd_us"] + tr["bwd_us"] if tr else None
        name = r["op"] + (" f16" if k[-1] == "float16" else "")
        how = ("recorded" if r.get("argmax") else "recomputed") if r["op"] in ("max", "dilated-max") else "-"
        shape = "x".join(map(str, r["shape"])) + f" k{r['kernel']} s{r['stride']} p{r['pad']}"
        out.append([name, shape, f"{t:.1f}", how, f"{tt:.1f}" if tt else "-", f"{tt / t:.2f}" if tt else "-"])
    return out


def show(cols, table, md):
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
