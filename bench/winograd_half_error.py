#!/usr/bin/env python3
"""The rounding of Winograd products of halves, simulated in float64 with
numpy: the numbers ops/convolution_winograd.go and its tests quote for
winocoop=1 (glsl/convolution_winograd_coopmat.comp).

F(4x4, 3x3) (forward and data gradient): U = 16 G g G^T and V = B^T d B / 16
rounded to halves, their products summed in float32, X's output transform
in float64; against the direct sums of the same (half) inputs; and with
X divided by 16 and rounded to halves too (winoxhalf=1). F(3x3, 4x4)
(weight gradient): D = A dy A^T / 16 and V / 16 rounded to halves, the sums
in float32 times 256. Prints, per channel count or tile count, the relative
RMS error and the worst error in units of a half's rounding of the
products' magnitude (2^-11 (1 + sum |products|)), which the tests'
winogradCoopSlack (64) covers.

usage: python3 bench/winograd_half_error.py
"""
import numpy as np

BT = np.array([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
               [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]], float)
G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])
AT = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]], float)


def half(a):
    return a.astype(np.float16).astype(np.float64)


def single(a):
    return a.astype(np.float32).astype(np.float64)


def report(what, got, want, mag):
    worst = (abs(got - want) / (2 ** -11 * (1 + mag))).max()
    rel = np.sqrt(np.mean((got - want) ** 2) / np.mean(want ** 2))
    print("%-34s relative RMS %.2e, worst %.1f half roundings of the magnitude" % (what, rel, worst))


def forward(rng, c, m=8, tiles=2000, xhalf=False):
    d = half(rng.uniform(-1, 1, (tiles, c, 6, 6)))
    g = half(rng.uniform(-1, 1, (m, c, 3, 3)))
    want, mag = np.zeros((tiles, m, 4, 4)), np.zeros((tiles, m, 4, 4))
    for ky in range(3):
        for kx in range(3):
            want += np.einsum('tcyx,mc->tmyx', d[:, :, ky:ky + 4, kx:kx + 4], g[:, :, ky, kx])
            mag += np.einsum('tcyx,mc->tmyx', abs(d[:, :, ky:ky + 4, kx:kx + 4]), abs(g[:, :, ky, kx]))
    u = half(16 * np.einsum('ij,mcjk,lk->mcil', G, g, G))
    v = half(np.einsum('ij,tcjk,lk->tcil', BT, d, BT) / 16)
    x = single(np.einsum('mcij,tcij->tmij', u, v))
    if xhalf:
        x = half(x / 16) * 16
    report("forward, %d channels%s" % (c, ", X as halves" if xhalf else ""), np.einsum('ij,tmjk,lk->tmil', AT, x, AT), want, mag)


def weights(rng, tiles, m=4, c=4):
    d = half(rng.uniform(-1, 1, (tiles, c, 6, 6)))
    dy = half(rng.uniform(-1, 1, (tiles, m, 4, 4)))
    want, mag = np.zeros((m, c, 3, 3)), np.zeros((m, c, 3, 3))
    for ky in range(3):
        for kx in range(3):
            want[:, :, ky, kx] = np.einsum('tmyx,tcyx->mc', dy, d[:, :, ky:ky + 4, kx:kx + 4])
            mag[:, :, ky, kx] = np.einsum('tmyx,tcyx->mc', abs(dy), abs(d[:, :, ky:ky + 4, kx:kx + 4]))
    dd = half(np.einsum('ji,tmjk,kl->tmil', AT, dy, AT) / 16)
    v = half(np.einsum('ij,tcjk,lk->tcil', BT, d, BT) / 16)
    p = single(np.einsum('tmij,tcij->mcij', dd, v)) * 256
    report("weight gradient, %d tiles" % tiles, np.einsum('ji,mcjk,kl->mcil', G, p, G), want, mag)


def main():
    rng = np.random.default_rng(2)
    for c in (3, 16, 64, 256):
        forward(rng, c)
        forward(rng, c, xhalf=True)
    for t in (16, 400, 3000):
        weights(rng, t)


if __name__ == "__main__":
    main()
