#version 450
// PoolingMaxGradient and DilatedPoolingMaxGradient
// (MPSCNNPoolingMaxGradient, MPSCNNDilatedPoolingMaxGradient):
// dx[p] = sum of dy[w] over the windows w whose argmax is p.
//
// aux holds each window's argmax code in pooling_max_argmax.comp's layout:
// recorded by the forward in a gradient state (RecordArgmax), or computed
// from the source image by that shader as this gradient's first pass. The
// codes follow SPEC.md's rule (first maximum in row-major tap order, the
// first NaN beats everything, an outside tap may win under EdgeZero and
// then nothing gets its gradient).
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(constant_id = 10) const int AMBITS = 8;

layout(std430, binding = 1) readonly buffer Aux { uint aux[]; };

shared uint code[WH * WW];

void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	GTile t;
	if (!gtileOf(t)) return;
	uint rowWords = uint(pc.winHi.x - pc.winLo.x + PER - 1) / uint(PER);
	for (uint e = gl_LocalInvocationIndex; e < uint(WH * WW); e += gl_WorkGroupSize.x) {
		ivec2 w;
		float v = 0.0;
		uint c = MASK;
		if (stagedWindow(t, e, w)) {
			v = dy[t.dyOff + uint(w.y) * pc.dyWidth + uint(w.x)];
			uint rx = uint(w.x - pc.winLo.x), ry = uint(w.y - pc.winLo.y);
			c = (aux[t.auxOff + ry * rowWords + rx / uint(PER)] >> ((rx % uint(PER)) * uint(AMBITS))) & MASK;
		}
		contrib[e] = v;
		code[e] = c;
	}
	barrier();
	for (uint i = gl_LocalInvocationIndex; i < uint(TW * TH); i += gl_WorkGroupSize.x) {
		ivec2 p;
		if (!tilePixel(t, i, p)) continue;
		float acc = 0.0;
		for (int ky = 0; ky < NWY; ky++) {
			int row;
			int ty = holdY(t, p.y, ky, row);
			if (ty < 0) continue;
			for (int kx = 0; kx < NWX; kx++) {
				int col;
				int tx = holdX(t, p.x, kx, col);
				if (tx < 0) continue;
				int e = row * WW + col;
				if (code[e] == uint(ty * KW + tx)) acc += contrib[e];
			}
		}
		dx[t.dxOff + uint(p.y * pc.size.x + p.x)] = acc;
	}
}
