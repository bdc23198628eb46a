#version 450
// The tiled variant, for windows of more than 64 taps (see pooling_tiled.glsl;
// the "global" builds read taps directly, for tiles over shared memory).
// PoolingAverage (MPSCNNPoolingAverage): out = (sum of the in-image taps) / N,
// N = the number of taps inside pc.region, which the kernel sets from the edge
// mode: EdgeZero counts every tap (or, with ExcludeEdges, those inside the
// padding region); EdgeClamp counts those inside the image grown by the zero
// pads. N = 0 gives 0. Taps outside the image add nothing.
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
			for (int kx = 0; kx < KW; kx++) sum += tap(ox, oy, kx, ky);
		}
		ivec2 s = windowStart(t, ox, oy);
		int n = counted(s.x, KW, DX, pc.region.x, pc.region.z) * counted(s.y, KH, DY, pc.region.y, pc.region.w);
		dst[dstIndex(t, ox, oy)] = STORE_DST(n > 0 ? sum / float(n) : 0.0);
	}
}
