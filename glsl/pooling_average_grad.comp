#version 450
// PoolingAverageGradient (MPSCNNPoolingAverageGradient):
// dx[p] = sum over the windows w holding p of dy[w] / N(w), N(w) counted as
// pooling_average.comp counts it (the taps inside pc.region; the forward
// kernel's edge mode, zero pads and ExcludeEdges set the region). Only the
// source's size matters, so the source image is not bound.
#define GRAD_DX_BINDING 1
#include "pooling_grad_common.glsl"

// Taps of a window starting at s (k taps d apart) inside [lo, hi).
int counted(int s, int k, int d, int lo, int hi) {
	int n = 0;
	for (int t = 0; t < k; t++) {
		int q = s + t * d;
		n += (q >= lo && q < hi) ? 1 : 0;
	}
	return n;
}

void main() {
	ivec2 p;
	uint dyo, auxo, di;
	if (!gradPixel(p, dyo, auxo, di)) return;
	int x0, x1, y0, y1;
	windowRange(p.x, pc.winBase.x, SX, KW, DX, pc.winLo.x, pc.winHi.x, x0, x1);
	windowRange(p.y, pc.winBase.y, SY, KH, DY, pc.winLo.y, pc.winHi.y, y0, y1);
	float acc = 0.0;
	for (int wy = y0; wy <= y1; wy++) {
		int sy = pc.winBase.y + SY * wy;
		if (tapOf(p.y, sy, DY) < 0) continue;
		int ny = counted(sy, KH, DY, pc.region.y, pc.region.w);
		for (int wx = x0; wx <= x1; wx++) {
			int sx = pc.winBase.x + SX * wx;
			if (tapOf(p.x, sx, DX) < 0) continue;
			int n = ny * counted(sx, KW, DX, pc.region.x, pc.region.z);
			if (n > 0) acc += dy[dyo + uint(wy) * pc.dyWidth + uint(wx)] / float(n);
		}
	}
	dx[di] = acc;
}
