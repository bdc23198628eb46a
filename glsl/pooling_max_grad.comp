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
#define GRAD_DX_BINDING 2
#include "pooling_grad_common.glsl"

layout(constant_id = 11) const int AMBITS = 8;

layout(std430, binding = 1) readonly buffer Aux { uint aux[]; };

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
	float acc[SY][CX * SX];
	[[unroll]] for (int fy = 0; fy < SY; fy++)
		[[unroll]] for (int f = 0; f < CX * SX; f++) acc[fy][f] = 0.0;
	// Windows in ascending order (rows, then columns), as the sum's order.
	[[unroll]] for (int b = AY - 1; b >= 0; b--) {
		uint row = c.dyOff + winRow[b] * pc.dyWidth;
		uint codeRow = c.auxOff + (winRow[b] - uint(pc.winLo.y)) * rowWords;
		[[unroll]] for (int j = 0; j < WX; j++) {
			float v = LOAD_DY(dy[row + uint(winX[j])]);
			uint word = aux[codeRow + wordCol[j]];
			uint code = (winYIn[b] && winXIn[j]) ? (word >> shift[j]) & MASK : MASK;
			[[unroll]] for (int i = 0; i < CX; i++) {
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
	[[unroll]] for (int fy = 0; fy < SY; fy++) {
		[[unroll]] for (int i = 0; i < CX; i++) {
			[[unroll]] for (int fx = 0; fx < SX; fx++) {
				ivec2 p;
				if (cellPixel(c, i, fx, fy, p)) dx[c.dxOff + uint(p.y * pc.size.x + p.x)] = STORE(acc[fy][i * SX + fx]);
			}
		}
	}
}
