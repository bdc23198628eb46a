#version 450
// PoolingAverageGradient (MPSCNNPoolingAverageGradient):
// dx[p] = sum over the windows w holding p of dy[w] / N(w), N(w) counted as
// pooling_average.comp counts it (the taps inside pc.region; the forward
// kernel's edge mode, zero pads and ExcludeEdges set the region). Only the
// source's size matters, so the source image is not bound.
// vkmps:variant f16 -DVKMPS_F16
#define GRAD_DX_BINDING 1
#include "pooling_grad_common.glsl"

void main() {
	Cell c;
	if (!cellOf(c)) return;
	windowAxes(c);
	int nx[AX];
	for (int a = 0; a < AX; a++) nx[a] = counted(pc.winBase.x + SX * (c.m.x - a), KW, DX, pc.region.x, pc.region.z);
	float acc[SY][SX];
	for (int fy = 0; fy < SY; fy++)
		for (int fx = 0; fx < SX; fx++) acc[fy][fx] = 0.0;
	for (int b = AY - 1; b >= 0; b--) {
		int ny = counted(pc.winBase.y + SY * (c.m.y - b), KH, DY, pc.region.y, pc.region.w);
		uint row = c.dyOff + winRow[b] * pc.dyWidth;
		for (int a = AX - 1; a >= 0; a--) {
			int n = ny * nx[a];
			float v = LOAD_DY(dy[row + uint(winX[a])]);
			v = (winYIn[b] && winXIn[a] && n > 0) ? v / float(n) : 0.0;
			for (int fy = 0; fy < SY; fy++) {
				if (!holds(b, fy, SY, KEY, DY)) continue;
				for (int fx = 0; fx < SX; fx++) {
					if (holds(a, fx, SX, KEX, DX)) acc[fy][fx] += v;
				}
			}
		}
	}
	for (int fy = 0; fy < SY; fy++) {
		for (int fx = 0; fx < SX; fx++) {
			ivec2 p;
			if (cellPixel(c, fx, fy, p)) dx[c.dxOff + uint(p.y * pc.size.x + p.x)] = STORE(acc[fy][fx]);
		}
	}
}
