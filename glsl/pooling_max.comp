#version 450
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. A NaN in the
// window makes the result NaN.
#include "pooling_common.glsl"

void main() {
	Pixel p;
	if (!pixelOf(p)) return;
	columns(p);
	float m = NEG_INF;
	bool nan = false;
	const float outside = CLAMP ? NEG_INF : 0.0;
	for (int ky = 0; ky < KH; ky++) {
		loadRow(p, ky);
		for (int kx = 0; kx < KW; kx++) {
			m = max(m, rowIn[kx] ? rowV[kx] : outside);
			nan = nan || isnan(rowV[kx]);
		}
	}
	float r = nan ? quietNaN() : m;
	dst[p.dstIdx] = (CLAMP && !anyTap(p)) ? 0.0 : r;
}
