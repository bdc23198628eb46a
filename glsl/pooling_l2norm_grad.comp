#version 450
// PoolingL2NormGradient (MPSCNNPoolingL2NormGradient), second pass:
// dx[p] = in[p] * sum over the windows w holding p of r[w], where the first
// pass (pooling_l2norm_ratio.comp) left r[w] = dy[w] / out[w] (0 where
// out[w] = 0, never NaN) in binding 0, laid out as dy.
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(std430, binding = 1) readonly buffer Src { float src[]; };

void main() {
	GTile t;
	if (!gtileOf(t)) return;
	for (uint e = gl_LocalInvocationIndex; e < uint(WH * WW); e += gl_WorkGroupSize.x) {
		ivec2 w;
		contrib[e] = stagedWindow(t, e, w) ? dy[t.dyOff + uint(w.y) * pc.dyWidth + uint(w.x)] : 0.0;
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
		uint q = uint(p.y * pc.size.x + p.x);
		dx[t.dxOff + q] = acc * src[t.auxOff + q];
	}
}
