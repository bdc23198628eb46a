#version 450
// PoolingAverageGradient (MPSCNNPoolingAverageGradient):
// dx[p] = sum over the windows w holding p of dy[w] / N(w), N(w) counted as
// pooling_average.comp counts it (the taps inside pc.region; the forward
// kernel's edge mode, zero pads and ExcludeEdges set the region). Only the
// source's size matters, so the source image is not bound.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant loop -DPOOL_LOOP
// vkmps:variant loopf16 -DPOOL_LOOP -DVKMPS_F16
// vkmps:variant octf16 -DVKMPS_F16 -DGRAD_OCTETS
#define GRAD_DX_BINDING 1
#include "pooling_grad_common.glsl"

#ifdef POOL_LOOP
void main() {
	Pix q;
	if (!pixOf(q)) return;
	ivec2 wy = windowRange(q.p.y, pc.winBase.y, SY, KEY, pc.winLo.y, pc.winHi.y);
	ivec2 wx = windowRange(q.p.x, pc.winBase.x, SX, KEX, pc.winLo.x, pc.winHi.x);
	float acc = 0.0;
	for (int y = wy.x; y <= wy.y; y++) {
		int ty = q.p.y - pc.winBase.y - SY * y;
		if (ty % DY != 0) continue;
		int ny = counted(pc.winBase.y + SY * y, KH, DY, pc.region.y, pc.region.w);
		for (int x = wx.x; x <= wx.y; x++) {
			int tx = q.p.x - pc.winBase.x - SX * x;
			if (tx % DX != 0) continue;
			int n = ny * counted(pc.winBase.x + SX * x, KW, DX, pc.region.x, pc.region.z);
			if (n > 0) acc += LOAD_DY(dy[q.dyOff + uint(y) * pc.dyWidth + uint(x)]) / float(n);
		}
	}
	dx[q.dxOff + uint(q.p.y * pc.size.x + q.p.x)] = STORE(acc);
}
#else
// N of each window of the strip, and whether it counts (inside the
// forward clip, N > 0).
float nf[AY][WX];
bool counts[AY][WX];

float windowValue(int b, int j, float v) { return counts[b][j] ? v / nf[b][j] : 0.0; }

void main() {
	Cell c;
	if (!cellOf(c)) return;
	windowAxes(c);
	int nx[WX];
	[[unroll]] for (int j = 0; j < WX; j++) nx[j] = counted(pc.winBase.x + SX * (c.m.x - (AX - 1) + j), KW, DX, pc.region.x, pc.region.z);
	[[unroll]] for (int b = 0; b < AY; b++) {
		int ny = counted(pc.winBase.y + SY * (c.m.y - b), KH, DY, pc.region.y, pc.region.w);
		[[unroll]] for (int j = 0; j < WX; j++) {
			int n = ny * nx[j];
			nf[b][j] = float(n);
			counts[b][j] = winYIn[b] && winXIn[j] && n > 0;
		}
	}
	gatherSums(c); // the windows above are the same on every plane
}
#endif
