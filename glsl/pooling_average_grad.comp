#version 450
// PoolingAverageGradient (MPSCNNPoolingAverageGradient):
// dx[p] = sum over the windows w holding p of dy[w] / N(w), N(w) counted as
// pooling_average.comp counts it (the taps inside pc.region; the forward
// kernel's edge mode, zero pads and ExcludeEdges set the region). Only the
// source's size matters, so the source image is not bound.
#define GRAD_DX_BINDING 1
#include "pooling_grad_common.glsl"

void main() {
	GTile t;
	if (!gtileOf(t)) return;
	for (uint e = gl_LocalInvocationIndex; e < uint(WH * WW); e += gl_WorkGroupSize.x) {
		ivec2 w;
		float v = 0.0;
		if (stagedWindow(t, e, w)) {
			ivec2 s = pc.winBase + ivec2(SX, SY) * w;
			int n = counted(s.x, KW, DX, pc.region.x, pc.region.z) * counted(s.y, KH, DY, pc.region.y, pc.region.w);
			if (n > 0) v = dy[t.dyOff + uint(w.y) * pc.dyWidth + uint(w.x)] / float(n);
		}
		contrib[e] = v;
	}
	barrier();
	for (uint i = gl_LocalInvocationIndex; i < uint(TW * TH); i += gl_WorkGroupSize.x) {
		ivec2 p;
		if (!tilePixel(t, i, p)) continue;
		float acc = 0.0;
		for (int ky = 0; ky < NWY; ky++) {
			int row;
			if (holdY(t, p.y, ky, row) < 0) continue;
			for (int kx = 0; kx < NWX; kx++) {
				int col;
				if (holdX(t, p.x, kx, col) < 0) continue;
				acc += contrib[row * WW + col];
			}
		}
		dx[t.dxOff + uint(p.y * pc.size.x + p.x)] = acc;
	}
}
