#version 450
// PoolingAverageGradient (MPSCNNPoolingAverageGradient):
// dx[p] = sum over the windows w holding p of dy[w] / N(w), N(w) counted as
// pooling_average.comp counts it (the taps inside pc.region; the forward
// kernel's edge mode, zero pads and ExcludeEdges set the region). Only the
// source's size matters, so the source image is not bound.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant loop -DPOOL_LOOP
// vkmps:variant loopf16 -DPOOL_LOOP -DVKMPS_F16
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
void main() {
	Cell c;
	if (!cellOf(c)) return;
	windowAxes(c);
	int nx[WX];
	[[unroll]] for (int j = 0; j < WX; j++) nx[j] = counted(pc.winBase.x + SX * (c.m.x - (AX - 1) + j), KW, DX, pc.region.x, pc.region.z);
	// N of each window, and whether it counts (inside the forward clip, N > 0).
	float nf[AY][WX];
	bool counts[AY][WX];
	[[unroll]] for (int b = 0; b < AY; b++) {
		int ny = counted(pc.winBase.y + SY * (c.m.y - b), KH, DY, pc.region.y, pc.region.w);
		[[unroll]] for (int j = 0; j < WX; j++) {
			int n = ny * nx[j];
			nf[b][j] = float(n);
			counts[b][j] = winYIn[b] && winXIn[j] && n > 0;
		}
	}
	// The windows above are the same on every plane. Groups of PG planes:
	// first every load, then plane by plane the sums and stores.
	[[unroll]] for (int g = 0; g < PZ; g += PG) {
		Cell cz[PG];
		bool live[PG];
		planeGroup(c, g, cz, live);
		float v[PG][AY][WX];
		[[unroll]] for (int z = 0; z < PG; z++) {
			[[unroll]] for (int b = 0; b < AY; b++) {
				uint row = cz[z].dyOff + winRow[b] * pc.dyWidth;
				[[unroll]] for (int j = 0; j < WX; j++) v[z][b][j] = LOAD_DY(dy[row + uint(winX[j])]);
			}
		}
		[[unroll]] for (int z = 0; z < PG; z++) {
			if (!live[z]) break;
			clearAcc();
			// Windows in ascending order (rows, then columns), as the sum's order.
			[[unroll]] for (int b = AY - 1; b >= 0; b--) {
				[[unroll]] for (int j = 0; j < WX; j++) {
					float w = counts[b][j] ? v[z][b][j] / nf[b][j] : 0.0;
					[[unroll]] for (int i = 0; i < CXE; i++) {
						int a = cellsBack(i, j);
						if (a < 0 || a >= AX) continue;
						[[unroll]] for (int fy = 0; fy < SY; fy++) {
							if (!holds(b, fy, SY, KEY, DY)) continue;
							[[unroll]] for (int fx = 0; fx < SX; fx++) {
								if (holds(a, fx, SX, KEX, DX)) acc[fy][i * SX + fx] += w;
							}
						}
					}
				}
			}
			storeCells(cz[z]);
		}
		if (!live[PG - 1]) break;
	}
}
#endif
