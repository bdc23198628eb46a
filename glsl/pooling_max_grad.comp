#version 450
// PoolingMaxGradient and DilatedPoolingMaxGradient
// (MPSCNNPoolingMaxGradient, MPSCNNDilatedPoolingMaxGradient):
// dx[p] = sum of dy[w] over the windows w whose argmax is p.
//
// aux holds each window's argmax code in pooling_max_argmax.comp's layout:
// recorded by the forward in a gradient state (RecordArgmax), or computed
// from the source image by that shader as this gradient's first pass. The
// codes follow SPEC.md's rule (first maximum in row-major tap order, the
// first NaN beats everything, an outside tap may win under EdgeZero and
// then nothing gets its gradient).
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(constant_id = 8) const int AMBITS = 8;

layout(std430, binding = 1) readonly buffer Aux { uint aux[]; };

void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	ivec2 p;
	uint dyo, amo, di;
	if (!gradPixel(p, dyo, amo, di)) return;
	int rowWords = (pc.winHi.x - pc.winLo.x + PER - 1) / PER;
	int x0, x1, y0, y1;
	windowRange(p.x, pc.winBase.x, SX, KW, DX, pc.winLo.x, pc.winHi.x, x0, x1);
	windowRange(p.y, pc.winBase.y, SY, KH, DY, pc.winLo.y, pc.winHi.y, y0, y1);
	float acc = 0.0;
	for (int i = 0; i < NWY; i++) {
		int wy = y0 + i;
		int sy = pc.winBase.y + SY * wy;
		int ty = tapOf(p.y, sy, DY);
		if (wy > y1 || ty < 0) continue;
		uint row = dyo + uint(wy) * pc.dyWidth;
		uint amRow = amo + uint((wy - pc.winLo.y) * rowWords);
		for (int k = 0; k < NWX; k++) {
			int wx = x0 + k;
			int sx = pc.winBase.x + SX * wx;
			int tx = tapOf(p.x, sx, DX);
			if (wx > x1 || tx < 0) continue;
			int rx = wx - pc.winLo.x;
			uint code = (aux[amRow + uint(rx / PER)] >> uint((rx % PER) * AMBITS)) & MASK;
			if (code == uint(ty * KW + tx)) acc += dy[row + uint(wx)];
		}
	}
	dx[di] = acc;
}
