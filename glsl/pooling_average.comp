#version 450
// PoolingAverage (MPSCNNPoolingAverage): out = (sum of the in-image taps) / N,
// N = the number of taps inside pc.region, which the kernel sets from the edge
// mode: EdgeZero counts every tap (or, with ExcludeEdges, those inside the
// padding region); EdgeClamp counts those inside the image grown by the zero
// pads. N = 0 gives 0. Taps outside the image add nothing.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

void main() {
	Pixel p;
	if (!pixelOf(p)) return;
	columns(p);
	float sum = 0.0;
	for (int ky = 0; ky < KH; ky++) {
		loadRow(p, ky);
		for (int kx = 0; kx < KW; kx++) sum += rowV[kx];
	}
	int n = counted(p.s.x, KW, DX, pc.region.x, pc.region.z) * counted(p.s.y, KH, DY, pc.region.y, pc.region.w);
	dst[p.dstIdx] = STORE_DST(n > 0 ? sum / float(n) : 0.0);
}
