#!/usr/bin/env python3
"""Depthwise convolution times per setting, from BenchmarkConvolutionGPU.

    python3 bench/dw_settings_table.py FILE COPY_GBPS

FILE holds `== <binary> [<VKMPS_GEMM>] <dtype>` header lines, each
followed by the `ns/op` lines of `ops.test -test.bench
'BenchmarkConvolutionGPU/depthwise' -test.count N` under that setting
(the run scripts in bench/results/h200-2026-11-28-s3 write them). Prints
per setting and per shape and pass the GPU µs of the last repeat and its
GB/s of minimum traffic as a share of COPY_GBPS (the copy shader's GB/s
on the same machine, from `vkmps bench --copy-mib`).
"""
import re
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    copy = float(sys.argv[2])
    rows, cols, cur = {}, [], None
    for line in open(sys.argv[1]):
        if line.startswith("=="):
            cur = line[3:].strip()
            rows.setdefault(cur, {})
            continue
        m = re.match(r"BenchmarkConvolutionGPU/(\S+?)/\S+/(\w+)-\d+\s+\d+\s+([\d.]+) GB/s.*?([\d.]+) gpu-us", line)
        if not m or cur is None:
            continue
        shape, p, gbps, us = m.groups()
        key = (shape.replace("depthwise3x3-", ""), p)
        if key not in cols:
            cols.append(key)
        rows[cur][key] = (float(us), float(gbps))
    print("%-40s" % "setting" + "".join("%15s" % (c[0] + " " + c[1]) for c in cols))
    for name, r in rows.items():
        cells = ["%8.1f %4.0f%%" % (r[c][0], 100 * r[c][1] / copy) if c in r else "%14s" % "-" for c in cols]
        print("%-40s" % name + " ".join(cells))


if __name__ == "__main__":
    main()
