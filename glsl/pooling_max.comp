#version 450
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. A NaN in the
// window makes the result NaN.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

void main() {
	Strip p;
	if (!stripOf(p)) return;
	columns(p);
	float m[OX];
	bool nan[OX];
	[[unroll]] for (int o = 0; o < OX; o++) {
		m[o] = NEG_INF;
		nan[o] = false;
	}
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		loadRowOutside(p, ky, CLAMP ? NEG_INF : 0.0);
		[[unroll]] for (int o = 0; o < OX; o++) {
			[[unroll]] for (int kx = 0; kx < KW; kx++) {
				float v = segV[tapCol(o, kx)];
				m[o] = max(m[o], v);
				nan[o] = nan[o] || isnan(v);
			}
		}
	}
	[[unroll]] for (int o = 0; o < OX; o++) {
		float r = nan[o] ? quietNaN() : m[o];
		res[o] = (CLAMP && !anyTap(p, o)) ? 0.0 : r;
	}
	storeResults(p);
}
