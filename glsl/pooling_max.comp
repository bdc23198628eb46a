#version 450
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. NaN propagates:
// the first NaN in tap order is the result.
#include "pooling_common.glsl"

void main() {
	ivec2 ij;
	uint so, di;
	if (!pixel(ij, so, di)) return;
	ivec2 s = windowStart(ij);
	float m = 0.0;
	bool have = false;
	for (int ky = 0; ky < KH; ky++) {
		int y = s.y + ky * DY;
		bool yin = y >= 0 && y < pc.srcSize.y;
		for (int kx = 0; kx < KW; kx++) {
			int x = s.x + kx * DX;
			float v = 0.0;
			if (yin && x >= 0 && x < pc.srcSize.x) {
				v = src[so + uint(y * pc.srcSize.x + x)];
			} else if (CLAMP) {
				continue;
			}
			if (!have) {
				m = v;
				have = true;
			} else if (!isnan(m) && (isnan(v) || v > m)) {
				m = v;
			}
		}
	}
	dst[di] = m;
}
