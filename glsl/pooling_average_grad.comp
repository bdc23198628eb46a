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
	int nx[WX];
	[[unroll]] for (int j = 0; j < WX; j++) nx[j] = counted(pc.winBase.x + SX * (c.m.x - (AX - 1) + j), KW, DX, pc.region.x, pc.region.z);
	float acc[SY][CX * SX];
	[[unroll]] for (int fy = 0; fy < SY; fy++)
		[[unroll]] for (int f = 0; f < CX * SX; f++) acc[fy][f] = 0.0;
	// Windows in ascending order (rows, then columns), as the sum's order.
	[[unroll]] for (int b = AY - 1; b >= 0; b--) {
		int ny = counted(pc.winBase.y + SY * (c.m.y - b), KH, DY, pc.region.y, pc.region.w);
		uint row = c.dyOff + winRow[b] * pc.dyWidth;
		[[unroll]] for (int j = 0; j < WX; j++) {
			int n = ny * nx[j];
			float v = LOAD_DY(dy[row + uint(winX[j])]);
			v = (winYIn[b] && winXIn[j] && n > 0) ? v / float(n) : 0.0;
			[[unroll]] for (int i = 0; i < CX; i++) {
				int a = cellsBack(i, j);
				if (a < 0 || a >= AX) continue;
				[[unroll]] for (int fy = 0; fy < SY; fy++) {
					if (!holds(b, fy, SY, KEY, DY)) continue;
					[[unroll]] for (int fx = 0; fx < SX; fx++) {
						if (holds(a, fx, SX, KEX, DX)) acc[fy][i * SX + fx] += v;
					}
				}
			}
		}
	}
	[[unroll]] for (int fy = 0; fy < SY; fy++) {
		[[unroll]] for (int i = 0; i < CX; i++) {
			[[unroll]] for (int fx = 0; fx < SX; fx++) {
				ivec2 p;
				if (cellPixel(c, i, fx, fy, p)) dx[c.dxOff + uint(p.y * pc.size.x + p.x)] = STORE(acc[fy][i * SX + fx]);
			}
		}
	}
}
