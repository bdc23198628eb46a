#version 450
// PoolingMax and DilatedPoolingMax that also record each window's argmax:
// in a gradient state (RecordArgmax, vkmps's addition foreseen by the
// MPSCNNPoolingMaxGradient notes), or, with WRITE_VALUES off, as the first
// pass of a max gradient that has no recorded argmax.
//
// The argmax winner follows SPEC.md's rule, the same on every device: taps
// in row-major order, the first maximum wins, the first NaN beats everything;
// under EdgeZero outside taps read 0 and may win, under EdgeClamp they are
// skipped. Its code is the tap ky*KW + kx, or all ones (the AMBITS-bit
// sentinel) when an outside tap wins or the window has no tap.
//
// Layout: per plane, clip row j holds ceil(W/OX) words, word bx holding the
// OX = 32/AMBITS codes of block bx (the first pixel in the low bits); each
// invocation writes its block's one word, so no two invocations share a word
// (no atomics, no 8/16-bit storage).
#include "pooling_common.glsl"

layout(constant_id = 9) const int AMBITS = 8;          // bits per code: 32 / OX
layout(constant_id = 10) const bool WRITE_VALUES = true;

layout(std430, binding = 2) writeonly buffer Argmax { uint am[]; };

void main() {
	Block b;
	if (!block(b)) return;
	columns(b);
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	float m[OX];
	uint code[OX];
	bool have[OX];
	for (int o = 0; o < OX; o++) {
		m[o] = 0.0;
		code[o] = MASK;
		have[o] = false;
	}
	for (int ky = 0; ky < KH; ky++) {
		uint row;
		bool yin = rowOf(b, ky, row);
		float v[SPAN];
		for (int s = 0; s < SPAN; s++) v[s] = src[row + uint(colX[s])];
		for (int o = 0; o < OX; o++) {
			for (int kx = 0; kx < KW; kx++) {
				int s = o * SX + kx * DX;
				bool in_ = yin && colIn[s];
				float t = in_ ? v[s] : 0.0;
				bool take = (in_ || !CLAMP) && (!have[o] || (!isnan(m[o]) && (isnan(t) || t > m[o])));
				m[o] = take ? t : m[o];
				code[o] = take ? (in_ ? uint(ky * KW + kx) : MASK) : code[o];
				have[o] = have[o] || take;
			}
		}
	}
	uint word = 0u;
	for (int o = 0; o < OX; o++) {
		if (o < b.count) {
			if (WRITE_VALUES) dst[b.dstRow + uint(o)] = m[o];
			word |= (code[o] & MASK) << uint(o * AMBITS);
		} else {
			word |= MASK << uint(o * AMBITS);
		}
	}
	uint bpr = (uint(pc.clipSize.x) + uint(OX) - 1u) / uint(OX);
	am[pc.amBase + b.n * pc.amBatch + b.c * pc.amPlane + uint(b.j) * bpr + uint(b.bx)] = word;
}
