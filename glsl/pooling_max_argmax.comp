#version 450
// PoolingMax and DilatedPoolingMax that also record each window's argmax:
// in a gradient state (RecordArgmax, vkmps's addition foreseen by the
// MPSCNNPoolingMaxGradient notes), or, with WRITE_VALUES off, as the first
// pass of a max gradient that has no recorded argmax.
//
// The winner follows SPEC.md's rule, the same on every device: taps in
// row-major order, the first maximum wins, the first NaN beats everything;
// under EdgeZero outside taps read 0 and may win, under EdgeClamp they are
// skipped. Its code is the tap ky*KW + kx, or all ones (the AMBITS-bit
// sentinel) when an outside tap wins or the window has no tap.
//
// Layout: per plane, clip row j holds ceil(W/PER) words of PER = 32/AMBITS
// codes, the first pixel in the low bits. A strip is OX pixels, a multiple
// of PER, so each invocation writes whole words: no atomics, no sharing.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

layout(constant_id = 11) const int AMBITS = 8;
layout(constant_id = 12) const bool WRITE_VALUES = true;
// TWO_PHASE: per window the maximum, then the first tap equal to it (the
// window's values kept in registers); otherwise tap by tap with selects.
// The first is faster without dilation, the second with (H200).
layout(constant_id = 18) const bool TWO_PHASE = true;

layout(std430, binding = 2) writeonly buffer Argmax { uint am[]; };

void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	Strip p;
	if (!stripOf(p)) return;
	uint code[OX];
	if (TWO_PHASE) {
		// Per window, the maximum first (NaN aside, as the forward computes
		// it), then the first tap equal to it, or the first NaN: the same
		// winner as comparing tap by tap with a strict >, at one compare and
		// one select per tap. Outside taps hold the edge mode's value (0, or
		// -inf under EdgeClamp, where they are never chosen).
		columns(p);
		float v[KH * SEG];
		bool in_[KH * SEG];
		float m[OX];
		bool nan[OX];
		[[unroll]] for (int o = 0; o < OX; o++) {
			m[o] = NEG_INF;
			nan[o] = false;
		}
		[[unroll]] for (int ky = 0; ky < KH; ky++) {
			loadRowOutside(p, ky, CLAMP ? NEG_INF : 0.0);
			[[unroll]] for (int e = 0; e < SEG; e++) {
				v[ky * SEG + e] = segV[e];
				in_[ky * SEG + e] = segIn[e];
			}
			[[unroll]] for (int o = 0; o < OX; o++) {
				[[unroll]] for (int kx = 0; kx < KW; kx++) {
					float x = segV[tapCol(o, kx)];
					m[o] = max(m[o], x);
					nan[o] = nan[o] || isnan(x);
				}
			}
		}
		[[unroll]] for (int o = 0; o < OX; o++) {
			code[o] = MASK;
			[[unroll]] for (int t = KH * KW - 1; t >= 0; t--) {
				int i = (t / KW) * SEG + tapCol(o, t % KW);
				bool hit = nan[o] ? isnan(v[i]) : (v[i] == m[o] && (in_[i] || !CLAMP));
				code[o] = hit ? (in_[i] ? uint(t) : MASK) : code[o];
			}
			// A window no tap of which is inside (EdgeClamp): 0, MASK.
			bool any = !CLAMP || anyTap(p, o);
			code[o] = (any && o < p.count) ? code[o] : MASK;
			res[o] = any ? (nan[o] ? quietNaN() : m[o]) : 0.0;
		}
	} else {
		// Tap by tap in row-major order, per window: a tap the edge mode
		// considers (inside taps; outside ones too under EdgeZero, reading 0)
		// wins when it is the first, or when no NaN has won and it is a NaN or
		// strictly greater: the first maximum, or the first NaN.
		columns(p);
		float m[OX];
		bool have[OX], nan[OX];
		[[unroll]] for (int o = 0; o < OX; o++) {
			m[o] = 0.0;
			have[o] = false;
			nan[o] = false;
			code[o] = MASK;
		}
		[[unroll]] for (int ky = 0; ky < KH; ky++) {
			loadRowOutside(p, ky, 0.0);
			[[unroll]] for (int o = 0; o < OX; o++) {
				[[unroll]] for (int kx = 0; kx < KW; kx++) {
					int e = tapCol(o, kx);
					bool considered = segIn[e] || !CLAMP;
					float x = segV[e];
					bool take = considered && (!have[o] || (!nan[o] && (isnan(x) || x > m[o])));
					m[o] = take ? x : m[o];
					code[o] = take ? (segIn[e] ? uint(ky * KW + kx) : MASK) : code[o];
					have[o] = have[o] || considered;
					nan[o] = nan[o] || (considered && isnan(x));
				}
			}
		}
		[[unroll]] for (int o = 0; o < OX; o++) {
			// No tap considered (EdgeClamp, a window wholly outside): 0, MASK.
			res[o] = have[o] ? (nan[o] ? quietNaN() : m[o]) : 0.0;
			code[o] = o < p.count ? code[o] : MASK;
		}
	}
	if (WRITE_VALUES) storeResults(p);
	uint rowWords = (uint(pc.clipSize.x) + uint(PER) - 1u) / uint(PER);
	uint amRow = pc.amBase + p.n * pc.amBatch + p.c * pc.amPlane + uint(p.o.y) * rowWords;
	[[unroll]] for (int w = 0; w < OX / PER; w++) {
		uint word = 0u;
		[[unroll]] for (int q = 0; q < PER; q++) word |= (code[w * PER + q] & MASK) << uint(q * AMBITS);
		uint col = uint(p.o.x / PER + w);
		if (col < rowWords) am[amRow + col] = word;
	}
}
