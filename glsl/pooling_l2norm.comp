#version 450
// PoolingL2Norm (MPSCNNPoolingL2Norm): out = sqrt(sum of in^2 over the
// window's in-image taps, in row-major order); taps outside add nothing in
// either edge mode.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

void poolStrip(Strip p) {
	float sum[OX];
	[[unroll]] for (int o = 0; o < OX; o++) sum[o] = 0.0;
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		loadRow(p, ky);
		[[unroll]] for (int o = 0; o < OX; o++) {
			[[unroll]] for (int kx = 0; kx < KW; kx++) {
				float v = segV[tapCol(o, kx)];
				sum[o] += v * v;
			}
		}
	}
	[[unroll]] for (int o = 0; o < OX; o++) res[o] = sqrt(sum[o]);
	storeResults(p);
}
