#version 450
// First pass of PoolingL2NormGradient: for every forward window w of the
// dispatch's clip, r[w] = dy[w] / out[w], out[w] = sqrt(sum of in^2 over w's
// in-image taps) computed as the forward does, and r[w] = 0 where out[w] = 0
// (never NaN). The second pass gathers dx[p] = in[p] * sum of r[w] over the
// windows holding p. r has dy's layout: Dst is r (dstBase, dstBatch,
// dstPlane, dstWidth) and dy is read at the same pixel (dyBase, dyBatch,
// dyPlane; dy's width is dstWidth).
#include "pooling_common.glsl"

layout(std430, binding = 2) readonly buffer Dy { float dy[]; };

void main() {
	Block b;
	if (!block(b)) return;
	columns(b);
	float sum[OX];
	for (int o = 0; o < OX; o++) sum[o] = 0.0;
	for (int ky = 0; ky < KH; ky++) {
		uint row;
		bool yin = rowOf(b, ky, row);
		float v[SPAN];
		for (int s = 0; s < SPAN; s++) v[s] = src[row + uint(colX[s])];
		for (int o = 0; o < OX; o++) {
			for (int kx = 0; kx < KW; kx++) {
				int s = o * SX + kx * DX;
				float t = (yin && colIn[s]) ? v[s] : 0.0;
				sum[o] += t * t;
			}
		}
	}
	ivec2 d = pc.clipOrigin + ivec2(b.bx * OX, b.j);
	uint dyRow = pc.dyBase + b.n * pc.dyBatch + b.c * pc.dyPlane + uint(d.y) * pc.dstWidth + uint(d.x);
	for (int o = 0; o < OX; o++) {
		if (o < b.count) {
			float out_ = sqrt(sum[o]);
			dst[b.dstRow + uint(o)] = out_ > 0.0 ? dy[dyRow + uint(o)] / out_ : 0.0;
		}
	}
}
