#version 450
// PoolingAverageGradient (MPSCNNPoolingAverageGradient):
// dx[p] = sum over the windows w holding p of dy[w] / N(w), N(w) counted as
// pooling_average.comp counts it (the taps inside pc.region; the forward
// kernel's edge mode, zero pads and ExcludeEdges set the region). Only the
// source's size matters, so the source image is not bound.
#define GRAD_DX_BINDING 1
#include "pooling_grad_common.glsl"

void main() {
	ivec2 p;
	uint dyo, auxo, di;
	if (!gradPixel(p, dyo, auxo, di)) return;
	int x0, x1, y0, y1;
	windowRange(p.x, pc.winBase.x, SX, KW, DX, pc.winLo.x, pc.winHi.x, x0, x1);
	windowRange(p.y, pc.winBase.y, SY, KH, DY, pc.winLo.y, pc.winHi.y, y0, y1);
	float acc = 0.0;
	for (int i = 0; i < NWY; i++) {
		int wy = y0 + i;
		int sy = pc.winBase.y + SY * wy;
		if (wy > y1 || tapOf(p.y, sy, DY) < 0) continue;
		int ny = counted(sy, KH, DY, pc.region.y, pc.region.w);
		uint row = dyo + uint(wy) * pc.dyWidth;
		for (int k = 0; k < NWX; k++) {
			int wx = x0 + k;
			int sx = pc.winBase.x + SX * wx;
			if (wx > x1 || tapOf(p.x, sx, DX) < 0) continue;
			int n = ny * counted(sx, KW, DX, pc.region.x, pc.region.z);
			if (n > 0) acc += dy[row + uint(wx)] / float(n);
		}
	}
	dx[di] = acc;
}
