#!/usr/bin/env python3
"""Generate conv_cases.json: PyTorch reference outputs and autograd gradients
for the vkmps convolution family (package ops/ref checks its CPU reference
against it; the GPU kernels are checked against both).

Run from the repository root with PyTorch (CPU is enough):

    /usr/bin/python3 ops/testdata/torch/gen_conv_cases.py   # writes conv_cases.json beside this script

Deterministic: geometry from random.Random(SEED), data from a CPU
torch.Generator seeded with SEED; the file depends only on the PyTorch
version and the CPU's float32 rounding.

Cases, NCHW float32, every one with a random grad_output dy and the autograd
gradients of sum(dy * output):
  conv       F.conv2d(F.pad(x, (left, right, top, bottom)), w, b, stride,
             dilation=..., groups=...): asymmetric zero pads, groups (depthwise
             with channel multipliers included), dilation, strides above the
             kernel. vkmps: padding.Explicit(top, left, bottom, right).
  transpose  F.conv_transpose2d(x, w, b, stride, padding, output_padding,
             groups, dilation) with padding (ph, pw) on both sides.
             vkmps: ConvolutionTransposePadding.
  linear     F.linear(x.flatten(1), w, b) with w of shape (O, C*H*W).

JSON (format 1): {"meta": {...}, "cases": [{"name", "op", "kernel": [kh, kw],
"stride", "dilation", "padding": [top, left, bottom, right], "output_padding":
[oh, ow], "groups", "input_shape", "input", "weight_shape", "weight", "bias"
(null when none), "output_shape", "output", "grad_output", "grad_input",
"grad_weight", "grad_bias" (null when none)}]}; flat NCHW lists, each float
the shortest decimal that rounds back to the same float32.
"""

import json
import os
import random
import struct
import sys

import torch
import torch.nn.functional as F

SEED = 20240607
FORMAT = 1


def f32(v):
    """Shortest decimal string of a float32 that round-trips."""
    s = repr(v)
    for p in range(6, 18):
        t = '%.*g' % (p, v)
        if struct.unpack('f', struct.pack('f', float(t)))[0] == v:
            return float(t)
    return float(s)


def flat(t):
    return [f32(float(v)) for v in t.detach().reshape(-1).tolist()]


def draw_conv(r):
    while True:
        kh, kw = r.randint(1, 4), r.randint(1, 4)
        sh, sw = r.randint(1, 3), r.randint(1, 3)
        dh, dw = r.randint(1, 2), r.randint(1, 2)
        g = r.choice([1, 1, 2, 3])
        cin, cout = g * r.randint(1, 4), g * r.randint(1, 4)
        if r.random() < 0.25:
            cin = r.randint(1, 8)
            g = cin
            cout = cin * r.randint(1, 2)
        n, h, w = r.randint(1, 3), r.randint(1, 9), r.randint(1, 9)
        pads = [r.randint(0, 2), r.randint(0, 2), r.randint(0, 2), r.randint(0, 2)]  # top, left, bottom, right
        oh = (h + pads[0] + pads[2] - dh * (kh - 1) - 1) // sh + 1
        ow = (w + pads[1] + pads[3] - dw * (kw - 1) - 1) // sw + 1
        if h + pads[0] + pads[2] - dh * (kh - 1) - 1 >= 0 and w + pads[1] + pads[3] - dw * (kw - 1) - 1 >= 0 and oh >= 1 and ow >= 1:
            return dict(kernel=[kh, kw], stride=[sh, sw], dilation=[dh, dw], groups=g, cin=cin, cout=cout, n=n, h=h, w=w,
                        padding=pads, bias=r.random() < 0.7)


def draw_transpose(r):
    while True:
        c = draw_conv(r)
        ph, pw = r.randint(0, 2), r.randint(0, 2)
        oph = r.randint(0, max(c['stride'][0], c['dilation'][0]) - 1)
        opw = r.randint(0, max(c['stride'][1], c['dilation'][1]) - 1)
        (kh, kw), (sh, sw), (dh, dw) = c['kernel'], c['stride'], c['dilation']
        oh = (c['h'] - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
        ow = (c['w'] - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
        if oh >= 1 and ow >= 1:
            c['padding'] = [ph, pw, ph, pw]
            c['output_padding'] = [oph, opw]
            return c


def run_case(name, op, c, gen):
    n, cin, cout, g = c['n'], c['cin'], c['cout'], c['groups']
    kh, kw = c['kernel']
    x = torch.randn(n, cin, c['h'], c['w'], generator=gen, requires_grad=True)
    if op == 'conv':
        wshape = (cout, cin // g, kh, kw)
    elif op == 'transpose':
        wshape = (cin, cout // g, kh, kw)
    else:
        wshape = (cout, cin * c['h'] * c['w'])
    w = (torch.randn(*wshape, generator=gen) * 0.5).requires_grad_(True)
    b = torch.randn(cout, generator=gen).requires_grad_(True) if c['bias'] else None
    if op == 'conv':
        t, l, bo, ri = c['padding']
        y = F.conv2d(F.pad(x, (l, ri, t, bo)), w, b, stride=c['stride'], dilation=c['dilation'], groups=g)
    elif op == 'transpose':
        y = F.conv_transpose2d(x, w, b, stride=c['stride'], padding=c['padding'][:2], output_padding=c['output_padding'],
                               groups=g, dilation=c['dilation'])
    else:
        y = F.linear(x.flatten(1), w, b).reshape(n, cout, 1, 1)
    dy = torch.randn(*y.shape, generator=gen)
    (y * dy).sum().backward()
    return {
        'name': name, 'op': op, 'kernel': c['kernel'], 'stride': c['stride'], 'dilation': c['dilation'],
        'padding': c['padding'], 'output_padding': c.get('output_padding', [0, 0]), 'groups': g,
        'input_shape': list(x.shape), 'input': flat(x), 'weight_shape': list(w.shape), 'weight': flat(w),
        'bias': flat(b) if b is not None else None,
        'output_shape': list(y.shape), 'output': flat(y), 'grad_output': flat(dy),
        'grad_input': flat(x.grad), 'grad_weight': flat(w.grad), 'grad_bias': flat(b.grad) if b is not None else None,
    }


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    r = random.Random(SEED)
    gen = torch.Generator().manual_seed(SEED)
    cases = []
    for i in range(10):
        cases.append(run_case('conv%d' % i, 'conv', draw_conv(r), gen))
    for i in range(6):
        cases.append(run_case('transpose%d' % i, 'transpose', draw_transpose(r), gen))
    for i, (n, c, h, w, o) in enumerate([(3, 4, 3, 2, 5), (5, 16, 1, 1, 7), (2, 6, 4, 4, 3)]):
        cases.append(run_case('linear%d' % i, 'linear', dict(n=n, cin=c, h=h, w=w, cout=o, groups=1, kernel=[h, w], stride=[1, 1],
                                                            dilation=[1, 1], padding=[0, 0, 0, 0], bias=i != 1), gen))
    out = {'meta': {'format': FORMAT, 'seed': SEED, 'torch': torch.__version__, 'python': sys.version.split()[0]}, 'cases': cases}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'conv_cases.json')
    with open(path, 'w') as f:
        json.dump(out, f, separators=(',', ':'))
        f.write('\n')
    print('wrote %d cases to %s (%d bytes)' % (len(cases), path, os.path.getsize(path)))


if __name__ == '__main__':
    main()
