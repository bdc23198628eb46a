#version 450
// PoolingL2NormGradient (MPSCNNPoolingL2NormGradient), second pass:
// dx[p] = in[p] * sum over the windows w holding p of r[w], where the first
// pass (pooling_l2norm_ratio.comp) left r[w] = dy[w] / out[w] (0 where
// out[w] = 0, never NaN) in binding 0, laid out as dy.
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(std430, binding = 1) readonly buffer Src { float src[]; };

void main() {
	ivec2 p;
	uint ro, so, di;
	if (!gradPixel(p, ro, so, di)) return;
	int x0, x1, y0, y1;
	windowRange(p.x, pc.winBase.x, SX, KW, DX, pc.winLo.x, pc.winHi.x, x0, x1);
	windowRange(p.y, pc.winBase.y, SY, KH, DY, pc.winLo.y, pc.winHi.y, y0, y1);
	float acc = 0.0;
	for (int i = 0; i < NWY; i++) {
		int wy = y0 + i;
		int sy = pc.winBase.y + SY * wy;
		if (wy > y1 || tapOf(p.y, sy, DY) < 0) continue;
		uint row = ro + uint(wy) * pc.dyWidth;
		for (int k = 0; k < NWX; k++) {
			int wx = x0 + k;
			int sx = pc.winBase.x + SX * wx;
			if (wx > x1 || tapOf(p.x, sx, DX) < 0) continue;
			acc += dy[row + uint(wx)];
		}
	}
	dx[di] = acc * src[so + uint(p.y * pc.size.x + p.x)];
}
