#version 450
// The tiled variant, for windows of more than 64 taps (see pooling_tiled.glsl;
// the "global" builds read taps directly, for tiles over shared memory).
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. A NaN in the
// window makes the result NaN.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant global -DPOOL_GLOBAL
// vkmps:variant globalf16 -DPOOL_GLOBAL -DVKMPS_F16
#include "pooling_tiled.glsl"

void main() {
	Tile t;
	if (!tileOf(t)) return;
	loadTile(t, CLAMP ? NEG_INF : 0.0);
	for (uint i = gl_LocalInvocationIndex; i < uint(TW * TH); i += gl_WorkGroupSize.x) {
		int ox = int(i % uint(TW)), oy = int(i / uint(TW));
		if (!pixelInClip(t, ox, oy)) continue;
		float m = NEG_INF;
		bool nan = false;
		for (int ky = 0; ky < KH; ky++) {
			for (int kx = 0; kx < KW; kx++) {
				float v = tap(ox, oy, kx, ky);
				m = max(m, v);
				nan = nan || isnan(v);
			}
		}
		float r = nan ? quietNaN() : m;
		dst[dstIndex(t, ox, oy)] = STORE_DST((CLAMP && !anyTap(windowStart(t, ox, oy))) ? 0.0 : r);
	}
}
