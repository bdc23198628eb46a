#version 450
// PoolingAverage (MPSCNNPoolingAverage): out = (sum of the in-image taps) / N,
// N = the number of taps inside pc.region, which the kernel sets from the edge
// mode: EdgeZero counts every tap (or, with ExcludeEdges, those inside the
// padding region); EdgeClamp counts those inside the image grown by the zero
// pads. N = 0 gives 0. Taps outside the image add nothing. Taps are added
// in row-major order.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

void poolStrip(Strip p) {
	float sum[OX];
	[[unroll]] for (int o = 0; o < OX; o++) sum[o] = 0.0;
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		loadRow(p, ky);
		[[unroll]] for (int o = 0; o < OX; o++) {
			[[unroll]] for (int kx = 0; kx < KW; kx++) sum[o] += segV[tapCol(o, kx)];
		}
	}
	int ny = counted(p.s.y, KH, DY, pc.region.y, pc.region.w);
	[[unroll]] for (int o = 0; o < OX; o++) {
		int n = counted(p.s.x + o * SX, KW, DX, pc.region.x, pc.region.z) * ny;
		res[o] = n > 0 ? sum[o] / float(n) : 0.0;
	}
	storeResults(p);
}
