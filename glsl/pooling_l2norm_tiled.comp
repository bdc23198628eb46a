#version 450
// The tiled variant, for windows of more than 64 taps (see pooling_tiled.glsl;
// the "global" builds read taps directly, for tiles over shared memory).
// PoolingL2Norm (MPSCNNPoolingL2Norm): out = sqrt(sum of in^2 over the
// window's in-image taps); taps outside add nothing in either edge mode.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant global -DPOOL_GLOBAL
// vkmps:variant globalf16 -DPOOL_GLOBAL -DVKMPS_F16
#include "pooling_tiled.glsl"

void main() {
	Tile t;
	if (!tileOf(t)) return;
	loadTile(t, 0.0);
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
		dst[dstIndex(t, ox, oy)] = STORE_DST(sqrt(sum));
	}
}
