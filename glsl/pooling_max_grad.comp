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
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant loop -DPOOL_LOOP
// vkmps:variant loopf16 -DPOOL_LOOP -DVKMPS_F16
// vkmps:variant octf16 -DVKMPS_F16 -DGRAD_OCTETS
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(constant_id = 11) const int AMBITS = 8;

layout(std430, binding = 1) readonly buffer Aux { uint aux[]; };

#ifdef POOL_LOOP
void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	Pix q;
	if (!pixOf(q)) return;
	uint rowWords = uint(pc.winHi.x - pc.winLo.x + PER - 1) / uint(PER);
	ivec2 wy = windowRange(q.p.y, pc.winBase.y, SY, KEY, pc.winLo.y, pc.winHi.y);
	ivec2 wx = windowRange(q.p.x, pc.winBase.x, SX, KEX, pc.winLo.x, pc.winHi.x);
	float acc = 0.0;
	for (int y = wy.x; y <= wy.y; y++) {
		int ty = q.p.y - pc.winBase.y - SY * y;
		if (ty % DY != 0) continue;
		uint codeRow = q.auxOff + uint(y - pc.winLo.y) * rowWords;
		for (int x = wx.x; x <= wx.y; x++) {
			int tx = q.p.x - pc.winBase.x - SX * x;
			if (tx % DX != 0) continue;
			uint qx = uint(x - pc.winLo.x);
			uint code = (aux[codeRow + qx / uint(PER)] >> ((qx % uint(PER)) * uint(AMBITS))) & MASK;
			if (code == uint((ty / DY) * KW + tx / DX)) acc += LOAD_DY(dy[q.dyOff + uint(y) * pc.dyWidth + uint(x)]);
		}
	}
	dx[q.dxOff + uint(q.p.y * pc.size.x + q.p.x)] = STORE(acc);
}
#else
void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	Cell c;
	if (!cellOf(c)) return;
	uint rowWords = uint(pc.winHi.x - pc.winLo.x + PER - 1) / uint(PER);
	windowAxes(c);
	uint wordCol[WX], shift[WX];
	[[unroll]] for (int j = 0; j < WX; j++) {
		uint qx = uint(winX[j] - pc.winLo.x);
		wordCol[j] = qx / uint(PER);
		shift[j] = (qx % uint(PER)) * uint(AMBITS);
	}
	// Plane by plane: the windows above are the same on each.
	[[unroll]] for (int z = 0; z < PZ; z++) {
		if (z > 0 && !cellPlane(c, z)) break;
		clearAcc();
		// Windows in ascending order (rows, then columns), as the sum's order.
		[[unroll]] for (int b = AY - 1; b >= 0; b--) {
			uint row = c.dyOff + winRow[b] * pc.dyWidth;
			uint codeRow = c.auxOff + (winRow[b] - uint(pc.winLo.y)) * rowWords;
			[[unroll]] for (int j = 0; j < WX; j++) {
				float v = LOAD_DY(dy[row + uint(winX[j])]);
				uint word = aux[codeRow + wordCol[j]];
				uint code = (winYIn[b] && winXIn[j]) ? (word >> shift[j]) & MASK : MASK;
				[[unroll]] for (int i = 0; i < CXE; i++) {
					int a = cellsBack(i, j);
					if (a < 0 || a >= AX) continue;
					[[unroll]] for (int fy = 0; fy < SY; fy++) {
						if (!holds(b, fy, SY, KEY, DY)) continue;
						[[unroll]] for (int fx = 0; fx < SX; fx++) {
							if (!holds(a, fx, SX, KEX, DX)) continue;
							uint tap = uint(((SY * b + fy) / DY) * KW + (SX * a + fx) / DX);
							acc[fy][i * SX + fx] += code == tap ? v : 0.0;
						}
					}
				}
			}
		}
		storeCells(c);
	}
}
#endif
