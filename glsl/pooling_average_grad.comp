#version 450
// PoolingAverageGradient (MPSCNNPoolingAverageGradient):
// dx[p] = sum over the windows w holding p of dy[w] / N(w), N(w) counted as
// pooling_average.comp counts it (the taps inside pc.region; the forward
// kernel's edge mode, zero pads and ExcludeEdges set the region). Only the
// source's size matters, so the source image is not bound.
#define GRAD_DX_BINDING 1
#include "pooling_grad_common.glsl"

void main() {
	Cell c;
	if (!cellOf(c)) return;
	float acc[SY][SX];
	for (int fy = 0; fy < SY; fy++)
		for (int fx = 0; fx < SX; fx++) acc[fy][fx] = 0.0;
	for (int b = AY - 1; b >= 0; b--) {
		int wy = c.m.y - b;
		int ny = counted(pc.winBase.y + SY * wy, KH, DY, pc.region.y, pc.region.w);
		for (int a = AX - 1; a >= 0; a--) {
			ivec2 w = ivec2(c.m.x - a, wy);
			int n = ny * counted(pc.winBase.x + SX * w.x, KW, DX, pc.region.x, pc.region.z);
			float v = dy[dyIndex(c, w)];
			v = (inWindows(w) && n > 0) ? v / float(n) : 0.0;
			for (int fy = 0; fy < SY; fy++) {
				if (!holds(b, fy, SY, KEY, DY)) continue;
				for (int fx = 0; fx < SX; fx++) {
					if (holds(a, fx, SX, KEX, DX)) acc[fy][fx] += v;
				}
			}
		}
	}
	for (int fy = 0; fy < SY; fy++) {
		for (int fx = 0; fx < SX; fx++) {
			ivec2 p;
			if (cellPixel(c, fx, fy, p)) dx[c.dxOff + uint(p.y * pc.size.x + p.x)] = acc[fy][fx];
		}
	}
}
