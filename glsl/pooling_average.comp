#version 450
// PoolingAverage (MPSCNNPoolingAverage): out = (sum of the in-image taps) / N,
// N = the number of taps inside pc.region, which the kernel sets from the edge
// mode: EdgeZero counts every tap (or, with ExcludeEdges, those inside the
// padding region); EdgeClamp counts those inside the image grown by the zero
// pads. N = 0 gives 0. Taps outside the image add nothing. N is separable:
// (taps whose column is in the region) x (taps whose row is).
#include "pooling_common.glsl"

void main() {
	Block b;
	if (!block(b)) return;
	columns(b);
	float sum[OX];
	for (int o = 0; o < OX; o++) sum[o] = 0.0;
	int ny = 0;
	for (int ky = 0; ky < KH; ky++) {
		uint row;
		bool yin = rowOf(b, ky, row);
		int y = b.start.y + ky * DY;
		ny += (y >= pc.region.y && y < pc.region.w) ? 1 : 0;
		float v[SPAN];
		for (int s = 0; s < SPAN; s++) v[s] = src[row + uint(colX[s])];
		for (int o = 0; o < OX; o++) {
			for (int kx = 0; kx < KW; kx++) {
				int s = o * SX + kx * DX;
				sum[o] += (yin && colIn[s]) ? v[s] : 0.0;
			}
		}
	}
	for (int o = 0; o < OX; o++) {
		if (o < b.count) {
			int nx = 0;
			for (int kx = 0; kx < KW; kx++) {
				int x = b.start.x + o * SX + kx * DX;
				nx += (x >= pc.region.x && x < pc.region.z) ? 1 : 0;
			}
			int n = nx * ny;
			dst[b.dstRow + uint(o)] = n > 0 ? sum[o] / float(n) : 0.0;
		}
	}
}
