#version 450
// PoolingL2Norm (MPSCNNPoolingL2Norm): out = sqrt(sum of in^2 over the
// window's in-image taps); taps outside add nothing in either edge mode.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

void main() {
	Pixel p;
	if (!pixelOf(p)) return;
	columns(p);
	float sum = 0.0;
	for (int ky = 0; ky < KH; ky++) {
		loadRow(p, ky);
		for (int kx = 0; kx < KW; kx++) sum += rowV[kx] * rowV[kx];
	}
	dst[p.dstIdx] = STORE_DST(sqrt(sum));
}
