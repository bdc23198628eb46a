#version 450
// The tiled variant, for windows of more than 64 taps (see pooling_tiled.glsl;
// the "global" builds read taps directly, for tiles over shared memory).
// First pass of PoolingL2NormGradient: for every forward window w of the
// dispatch's clip, r[w] = dy[w] / out[w], out[w] = sqrt(sum of in^2 over w's
// in-image taps) computed as the forward does, and r[w] = 0 where out[w] = 0
// (never NaN). The second pass gathers dx[p] = in[p] * sum of r[w] over the
// windows holding p. r has dy's layout: Dst is r (dstBase, dstBatch,
// dstPlane, dstWidth) and dy is read at the same pixel (dyBase, dyBatch,
// dyPlane; dy's width is dstWidth).
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant global -DPOOL_GLOBAL
// vkmps:variant globalf16 -DPOOL_GLOBAL -DVKMPS_F16
#define DST_F32 // r is float32 scratch
#include "pooling_tiled.glsl"

layout(std430, binding = 2) readonly buffer Dy { ELEM dy[]; };

void main() {
	Tile t;
	if (!tileOf(t)) return;
	loadTile(t, 0.0);
	uint dyOff = pc.dyBase + t.n * pc.dyBatch + t.c * pc.dyPlane;
	for (uint i = gl_LocalInvocationIndex; i < uint(TW * TH); i += gl_WorkGroupSize.x) {
		int ox = int(i % uint(TW)), oy = int(i / uint(TW));
		if (!pixelInClip(t, ox, oy)) continue;
		float sum = 0.0;
		for (int ky = 0; ky < KH; ky++) {
			for (int kx = 0; kx < KW; kx++) {
				float v = tap(ox, oy, kx, ky);
				sum += v * v;
			}
		}
		float out_ = sqrt(sum);
		uint di = dstIndex(t, ox, oy);
		dst[di] = out_ > 0.0 ? LOAD(dy[dyOff + (di - t.dstOff)]) / out_ : 0.0;
	}
}
