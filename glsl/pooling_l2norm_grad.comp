#version 450
// PoolingL2NormGradient (MPSCNNPoolingL2NormGradient):
// dx[p] = sum over the windows w holding p of dy[w] * in[p] / out[w], where
// out[w] = sqrt(sum of in^2 over w's in-image taps) is recomputed from the
// forward source as pooling_l2norm.comp computes it (same order, so the
// same value). A window with out[w] = 0 contributes 0, never NaN.
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(std430, binding = 1) readonly buffer Src { float src[]; };

float norm(uint off, ivec2 s) {
	float sum = 0.0;
	for (int ky = 0; ky < KH; ky++) {
		int y = s.y + ky * DY;
		if (y < 0 || y >= pc.size.y) continue;
		for (int kx = 0; kx < KW; kx++) {
			int x = s.x + kx * DX;
			if (x >= 0 && x < pc.size.x) {
				float v = src[off + uint(y * pc.size.x + x)];
				sum += v * v;
			}
		}
	}
	return sqrt(sum);
}

void main() {
	ivec2 p;
	uint dyo, so, di;
	if (!gradPixel(p, dyo, so, di)) return;
	int x0, x1, y0, y1;
	windowRange(p.x, pc.winBase.x, SX, KW, DX, pc.winLo.x, pc.winHi.x, x0, x1);
	windowRange(p.y, pc.winBase.y, SY, KH, DY, pc.winLo.y, pc.winHi.y, y0, y1);
	float v = src[so + uint(p.y * pc.size.x + p.x)];
	float acc = 0.0;
	for (int wy = y0; wy <= y1; wy++) {
		int sy = pc.winBase.y + SY * wy;
		if (tapOf(p.y, sy, DY) < 0) continue;
		for (int wx = x0; wx <= x1; wx++) {
			int sx = pc.winBase.x + SX * wx;
			if (tapOf(p.x, sx, DX) < 0) continue;
			float out_ = norm(so, ivec2(sx, sy));
			if (out_ > 0.0) acc += dy[dyo + uint(wy) * pc.dyWidth + uint(wx)] / out_ * v;
		}
	}
	dx[di] = acc;
}
