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
	uint wordCol[AX], shift[AX];
	for (int a = 0; a < AX; a++) {
		uint qx = uint(winX[a] - pc.winLo.x);
		wordCol[a] = qx / uint(PER);
		shift[a] = (qx % uint(PER)) * uint(AMBITS);
	}
	float acc[SY][SX];
	for (int fy = 0; fy < SY; fy++)
		for (int fx = 0; fx < SX; fx++) acc[fy][fx] = 0.0;
	for (int b = AY - 1; b >= 0; b--) {
		uint row = c.dyOff + winRow[b] * pc.dyWidth;
		uint codeRow = c.auxOff + (winRow[b] - uint(pc.winLo.y)) * rowWords;
		for (int a = AX - 1; a >= 0; a--) {
			float v = LOAD_DY(dy[row + uint(winX[a])]);
			uint word = aux[codeRow + wordCol[a]];
			uint code = (winYIn[b] && winXIn[a]) ? (word >> shift[a]) & MASK : MASK;
			for (int fy = 0; fy < SY; fy++) {
				if (!holds(b, fy, SY, KEY, DY)) continue;
				for (int fx = 0; fx < SX; fx++) {
					if (!holds(a, fx, SX, KEX, DX)) continue;
					uint tap = uint(((SY * b + fy) / DY) * KW + (SX * a + fx) / DX);
					acc[fy][fx] += code == tap ? v : 0.0;
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
