#version 450
// PoolingL2NormGradient (MPSCNNPoolingL2NormGradient), second pass:
// dx[p] = in[p] * sum over the windows w holding p of r[w], where the first
// pass (pooling_l2norm_ratio.comp) left r[w] = dy[w] / out[w] (0 where
// out[w] = 0, never NaN) in binding 0, laid out as dy.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant loop -DPOOL_LOOP
// vkmps:variant loopf16 -DPOOL_LOOP -DVKMPS_F16
#define GRAD_DX_BINDING 2
#define DY_F32 // binding 0 is r, float32 scratch
#define GRAD_AUX_SCALE // dx = sum * the forward source (binding 1)
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
		for (int x = wx.x; x <= wx.y; x++) {
			int tx = q.p.x - pc.winBase.x - SX * x;
			if (tx % DX != 0) continue;
			acc += LOAD_DY(dy[q.dyOff + uint(y) * pc.dyWidth + uint(x)]);
		}
	}
	uint p = uint(q.p.y * pc.size.x + q.p.x);
	dx[q.dxOff + p] = STORE(acc * LOAD(src[q.auxOff + p]));
}
#else
void main() {
	Cell c;
	if (!cellOf(c)) return;
	windowAxes(c);
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
					float w = (winYIn[b] && winXIn[j]) ? v[z][b][j] : 0.0;
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
