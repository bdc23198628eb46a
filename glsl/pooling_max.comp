#version 450
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. A NaN in the
// window makes the result NaN.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

void main() {
	Pixel p;
	if (!pixelOf(p)) return;
	columns(p);
	float m = NEG_INF;
	bool nan = false;
	for (int ky = 0; ky < KH; ky++) {
		loadRowOutside(p, ky, CLAMP ? NEG_INF : 0.0);
		for (int kx = 0; kx < KW; kx++) {
			m = max(m, rowV[kx]);
			nan = nan || isnan(rowV[kx]);
		}
	}
	float r = nan ? quietNaN() : m;
	dst[p.dstIdx] = STORE_DST((CLAMP && !anyTap(p)) ? 0.0 : r);
}
