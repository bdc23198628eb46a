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
	int tap;
	dst[di] = windowMax(so, windowStart(ij), tap);
}
