#version 450
// First pass of PoolingL2NormGradient: for every forward window w of the
// dispatch's clip, r[w] = dy[w] / out[w], out[w] = sqrt(sum of in^2 over w's
// in-image taps) computed as the forward does, and r[w] = 0 where out[w] = 0
// (never NaN). The second pass gathers dx[p] = in[p] * sum of r[w] over the
// windows holding p. r has dy's layout: Dst is r (dstBase, dstBatch,
// dstPlane, dstWidth) and dy is read at the same pixel (dyBase, dyBatch,
// dyPlane; dy's width is dstWidth).
// vkmps:variant f16 -DVKMPS_F16
#define DST_F32 // r is float32 scratch
#include "pooling_common.glsl"

layout(std430, binding = 2) readonly buffer Dy { ELEM dy[]; };

void poolStrip(Strip p) {
	float sum[OX];
	[[unroll]] for (int o = 0; o < OX; o++) sum[o] = 0.0;
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		loadRow(p, ky);
		[[unroll]] for (int o = 0; o < OX; o++) {
			[[unroll]] for (int kx = 0; kx < KW; kx++) {
				float v = segV[tapCol(o, kx)];
				sum[o] += v * v;
			}
		}
	}
	uint rel = p.dstIdx - (pc.dstBase + p.n * pc.dstBatch + p.c * pc.dstPlane);
	uint dyIdx = pc.dyBase + p.n * pc.dyBatch + p.c * pc.dyPlane + rel;
	[[unroll]] for (int o = 0; o < OX; o++) {
		float out_ = sqrt(sum[o]);
		// The last strip of a row may end past the clip: dy is read only
		// inside it.
		float g = 0.0;
		if (o < p.count) g = LOAD(dy[dyIdx + uint(o)]);
		res[o] = out_ > 0.0 ? g / out_ : 0.0;
	}
	storeResults(p);
}
