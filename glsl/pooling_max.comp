#version 450
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. A NaN in the
// window makes the result NaN.
#include "pooling_common.glsl"

void main() {
	Block b;
	if (!block(b)) return;
	columns(b);
	float m[OX];
	bool nan[OX];
	for (int o = 0; o < OX; o++) {
		m[o] = NEG_INF;
		nan[o] = false;
	}
	const float outside = CLAMP ? NEG_INF : 0.0;
	for (int ky = 0; ky < KH; ky++) {
		uint row;
		bool yin = rowOf(b, ky, row);
		float v[SPAN];
		for (int s = 0; s < SPAN; s++) v[s] = src[row + uint(colX[s])];
		for (int o = 0; o < OX; o++) {
			for (int kx = 0; kx < KW; kx++) {
				int s = o * SX + kx * DX;
				bool in_ = yin && colIn[s];
				m[o] = max(m[o], in_ ? v[s] : outside);
				nan[o] = nan[o] || (in_ && isnan(v[s]));
			}
		}
	}
	bool rows = anyRow(b);
	for (int o = 0; o < OX; o++) {
		if (o < b.count) {
			float r = nan[o] ? quietNaN() : m[o];
			dst[b.dstRow + uint(o)] = rows && anyColumn(o) ? r : 0.0;
		}
	}
}
