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

void main() {
	Pixel p;
	if (!pixelOf(p)) return;
	columns(p);
	float sum = 0.0;
	for (int ky = 0; ky < KH; ky++) {
		loadRow(p, ky);
		for (int kx = 0; kx < KW; kx++) sum += rowV[kx] * rowV[kx];
	}
	float out_ = sqrt(sum);
	uint rel = p.dstIdx - (pc.dstBase + p.n * pc.dstBatch + p.c * pc.dstPlane);
	dst[p.dstIdx] = out_ > 0.0 ? LOAD(dy[pc.dyBase + p.n * pc.dyBatch + p.c * pc.dyPlane + rel]) / out_ : 0.0;
}
