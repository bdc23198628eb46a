#version 450
// PoolingAverage (MPSCNNPoolingAverage): out = (sum of the in-image taps) / N,
// N = the number of taps inside pc.region, which the kernel sets from the edge
// mode: EdgeZero counts every tap (or, with ExcludeEdges, those inside the
// padding region); EdgeClamp counts those inside the image grown by the zero
// pads. N = 0 gives 0. Taps outside the image add nothing.
#include "pooling_common.glsl"

void main() {
	ivec2 ij;
	uint so, di;
	if (!pixel(ij, so, di)) return;
	ivec2 s = windowStart(ij);
	float sum = 0.0;
	int nx = 0, ny = 0;
	for (int kx = 0; kx < KW; kx++) {
		int x = s.x + kx * DX;
		nx += (x >= pc.region.x && x < pc.region.z) ? 1 : 0;
	}
	for (int ky = 0; ky < KH; ky++) {
		int y = s.y + ky * DY;
		ny += (y >= pc.region.y && y < pc.region.w) ? 1 : 0;
		if (y < 0 || y >= pc.srcSize.y) continue;
		for (int kx = 0; kx < KW; kx++) {
			int x = s.x + kx * DX;
			if (x >= 0 && x < pc.srcSize.x) sum += src[so + uint(y * pc.srcSize.x + x)];
		}
	}
	int n = nx * ny;
	dst[di] = n > 0 ? sum / float(n) : 0.0;
}
