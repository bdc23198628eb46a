#version 450
// PoolingL2Norm (MPSCNNPoolingL2Norm): out = sqrt(sum of in^2 over the
// window's in-image taps); taps outside add nothing in either edge mode.
#include "pooling_common.glsl"

void main() {
	ivec2 ij;
	uint so, di;
	if (!pixel(ij, so, di)) return;
	ivec2 s = windowStart(ij);
	float sum = 0.0;
	for (int ky = 0; ky < KH; ky++) {
		int y = s.y + ky * DY;
		if (y < 0 || y >= pc.srcSize.y) continue;
		for (int kx = 0; kx < KW; kx++) {
			int x = s.x + kx * DX;
			if (x >= 0 && x < pc.srcSize.x) {
				float v = src[so + uint(y * pc.srcSize.x + x)];
				sum += v * v;
			}
		}
	}
	dst[di] = sqrt(sum);
}
