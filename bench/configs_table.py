#!/usr/bin/env python3
"""Side-by-side table of benchmark outputs run under several configurations.

The input is one text file holding the outputs of several runs, each
after a header line "== LABEL" (as the bench/results/*/runN.sh scripts
write them). Two kinds of rows are read:

  - BenchmarkConvolutionGPU lines of ops.test (-test.v with the ns/op
    column removed or not): "BenchmarkConvolutionGPU/SHAPE/DESC/PASS-16 ...
    X TFLOP/s  T gpu-us";
  - the per-kernel rows of `vkmps bench --ops` (shape, window, stride,
    padding, dilation, op name, forward µs, min, GB/s, %copy, backward µs,
    ...).

A label may repeat (runs alternating between builds): each cell then
shows every run's time in run order, and each ratio column
compares the best (lowest) time of the first label with each other
label's best (first / other: above 1 the other is faster).

    python3 bench/configs_table.py run2/conv32.txt
"""
import collections
import re
import sys

CONV = re.compile(r'BenchmarkConvolutionGPU/([^/\s]+)/[^/\s]+/(\w+)-\d+\s+\d+\s+(?:\d+ ns/op\s+)?[\d.]+ TFLOP/s\s+([\d.]+) gpu-us')
POOL = re.compile(r'\s+(\d+x\d+x\d+x\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s+(\S+(?: f16)?)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)')


def read(path):
    """Returns (labels in order, rows in order, {label: {row: [µs, ...]}})."""
    label = None
    labels, rows = [], []
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in open(path):
        if line.startswith('=='):
            label = line[2:].strip()
            if label not in labels:
                labels.append(label)
            continue
        m = CONV.match(line)
        if m:
            cells = {(m.group(1), m.group(2)): float(m.group(3))}
        else:
            m = POOL.match(line)
            if not m:
                continue
            cells = {(m.group(1), m.group(2) + ' fwd'): float(m.group(3)),
                     (m.group(1), m.group(2) + ' bwd'): float(m.group(4))}
        for row, t in cells.items():
            if row not in rows:
                rows.append(row)
            times[label][row].append(t)
    return labels, rows, times


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    labels, rows, times = read(sys.argv[1])
    if not labels:
        sys.exit('no "== LABEL" header in ' + sys.argv[1])
    width = max(16, *(len(l) for l in labels))
    print('%-22s %-26s' % ('shape', 'pass') + ''.join('%*s' % (width + 2, l) for l in labels) +
          ''.join('%12s' % ('x ' + str(i + 1)) for i in range(1, len(labels))))
    for row in rows:
        cells = [times[l].get(row, []) for l in labels]
        line = '%-22s %-26s' % row + ''.join('%*s' % (width + 2, '/'.join('%.1f' % t for t in c)) for c in cells)
        if cells[0]:
            for c in cells[1:]:
                line += '%12s' % ('%.3f' % (min(cells[0]) / min(c)) if c else '')
        print(line)


if __name__ == '__main__':
    main()
