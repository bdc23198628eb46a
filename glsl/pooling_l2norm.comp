#version 450
// PoolingL2Norm (MPSCNNPoolingL2Norm): out = sqrt(sum of in^2 over the
// window's in-image taps); taps outside add nothing in either edge mode.
#include "pooling_common.glsl"

void main() {
	Block b;
	if (!block(b)) return;
	columns(b);
	float sum[OX];
	for (int o = 0; o < OX; o++) sum[o] = 0.0;
	for (int ky = 0; ky < KH; ky++) {
		uint row;
		bool yin = rowOf(b, ky, row);
		float v[SPAN];
		for (int s = 0; s < SPAN; s++) v[s] = src[row + uint(colX[s])];
		for (int o = 0; o < OX; o++) {
			for (int kx = 0; kx < KW; kx++) {
				int s = o * SX + kx * DX;
				float t = (yin && colIn[s]) ? v[s] : 0.0;
				sum[o] += t * t;
			}
		}
	}
	for (int o = 0; o < OX; o++) {
		if (o < b.count) dst[b.dstRow + uint(o)] = sqrt(sum[o]);
	}
}
