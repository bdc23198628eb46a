#!/usr/bin/env python3
"""Float32 and float16 pooling times side by side under several settings.

    python3 bench/pool_settings_table.py DIR NAME,NAME,...

reads DIR/NAME.jsonl, each written by `vkmps bench --dtype float32,float16
--json` (under some VKMPS_TUNE or build), and prints per kernel, image
height and pass (fwd, bwd) "float32 us / float16 us  float32/float16" for
each NAME, then "best": the fastest float32 over the fastest float16 of
the row (issue 21's target is 1.5 on the two large shapes). "+am" rows
record the argmax in the forward and read it in the gradient. Rows of
28x28 images are left out.
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    d0, names = sys.argv[1], sys.argv[2].split(",")
    rows = {}
    for n in names:
        with open(f"{d0}/{n}.jsonl") as f:
            for line in f:
                d = json.loads(line)
                if "op" not in d or d["op"] == "d2d-copy":
                    continue
                k = (d["op"] + ("+am" if d["argmax"] else ""), d["shape"][2], d["dtype"])
                rows.setdefault(k, {})[n] = (d["fwd_us"], d["bwd_us"])
    keys = sorted(set((k[0], k[1]) for k in rows))
    print("%-16s %4s    " % ("op", "H") + "  ".join("%17s" % n for n in names))
    for op, h in keys:
        if h == 28:
            continue
        f32, f16 = rows.get((op, h, "float32"), {}), rows.get((op, h, "float16"), {})
        for p, pas in enumerate(("fwd", "bwd")):
            line = "%-16s %4d %s " % (op, h, pas)
            for n in names:
                a, b = f32.get(n), f16.get(n)
                line += " %6.1f/%5.1f %4.2f" % (a[p], b[p], a[p] / b[p]) if a and b else " %17s" % "-"
            if f32 and f16:
                line += "   best %.2f" % (min(v[p] for v in f32.values()) / min(v[p] for v in f16.values()))
            print(line)


if __name__ == "__main__":
    main()
