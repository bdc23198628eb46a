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
// vkmps:variant packedf16 -DVKMPS_F16 -DVKMPS_F16A
#ifdef VKMPS_F16A
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define POOL_FETCH_ROWS
#endif
#include "pooling_common.glsl"

layout(constant_id = 11) const int AMBITS = 8;
layout(constant_id = 12) const bool WRITE_VALUES = true;
// TWO_PHASE: per window the maximum, then the first tap equal to it (the
// window's values kept in registers); otherwise tap by tap with selects.
// The first is faster without dilation, the second with (H200).
layout(constant_id = 18) const bool TWO_PHASE = true;

layout(std430, binding = 2) writeonly buffer Argmax { uint am[]; };

// FAST: first a pass that assumes the common case, no NaN in the strip
// and no window whose maximum could be an outside tap (the strip lies
// inside the image, or the maximum differs from the value outside taps
// hold): the maximum and its first tap with one compare and one or two
// selects per tap, no NaN or edge bookkeeping. A strip outside that case
// (rare: NaNs, or a border window whose maximum is 0 under EdgeZero, or
// -inf or no tap under EdgeClamp) runs the full pass below (TWO_PHASE's
// choice) again from memory, so both give the same bits. On by default
// (ops' argmaxFast; Tuning argmax=1 and 2 turn it off).
layout(constant_id = 19) const bool FAST = false;

const int PER = 32 / AMBITS;
const uint MASK = 0xffffffffu >> (32 - AMBITS);

// usedCol reports whether some window of the strip has a tap in segment
// column e (with dilation, some columns between taps are loaded but unused).
bool usedCol(int e) {
	bool u = false;
	[[unroll]] for (int o = 0; o < OX; o++)
		[[unroll]] for (int kx = 0; kx < KW; kx++) u = u || tapCol(o, kx) == e;
	return u;
}

// fastPass fills res and code under the common case's assumptions and
// returns whether they held.
bool fastPass(Strip p, inout uint code[OX]) {
	const float OUT = CLAMP ? NEG_INF : 0.0;
	float m[OX];
	bool nan = false;
	// Whether every tap of the strip is inside the image.
	bool inside = p.s.x >= 0 && p.s.x + SEG <= pc.srcSize.x && p.s.y >= 0 && p.s.y + KEY <= pc.srcSize.y;
	if (TWO_PHASE) {
		// The maximum, then the first tap equal to it (taps in reverse).
		float v[KH * SEG];
		[[unroll]] for (int o = 0; o < OX; o++) m[o] = NEG_INF;
		[[unroll]] for (int ky = 0; ky < KH; ky++) {
			loadRowOutside(p, ky, OUT);
			[[unroll]] for (int e = 0; e < SEG; e++) {
				v[ky * SEG + e] = segV[e];
				if (usedCol(e)) nan = nan || isnan(segV[e]);
			}
			[[unroll]] for (int o = 0; o < OX; o++)
				[[unroll]] for (int kx = 0; kx < KW; kx++) m[o] = max(m[o], segV[tapCol(o, kx)]);
		}
		[[unroll]] for (int o = 0; o < OX; o++) {
			uint c = 0u;
			[[unroll]] for (int t = KH * KW - 1; t >= 0; t--)
				c = v[(t / KW) * SEG + tapCol(o, t % KW)] == m[o] ? uint(t) : c;
			code[o] = c;
		}
	} else {
		// Tap by tap: a strictly greater tap takes over.
		[[unroll]] for (int ky = 0; ky < KH; ky++) {
			loadRowOutside(p, ky, OUT);
			[[unroll]] for (int e = 0; e < SEG; e++)
				if (usedCol(e)) nan = nan || isnan(segV[e]);
			[[unroll]] for (int o = 0; o < OX; o++) {
				[[unroll]] for (int kx = 0; kx < KW; kx++) {
					float x = segV[tapCol(o, kx)];
					if (ky == 0 && kx == 0) {
						m[o] = x;
						code[o] = 0u;
					} else {
						bool gt = x > m[o];
						m[o] = gt ? x : m[o];
						code[o] = gt ? uint(ky * KW + kx) : code[o];
					}
				}
			}
		}
	}
	bool ok = !nan;
	[[unroll]] for (int o = 0; o < OX; o++) {
		ok = ok && (inside || m[o] != OUT || o >= p.count);
		res[o] = m[o];
		code[o] = o < p.count ? code[o] : MASK;
	}
	return ok;
}

#ifdef VKMPS_F16A
// halfPass is fastPass (under the same assumptions, and false where they
// may not hold) on the halves themselves: the "packedf16" build (ops'
// halfArithmetic: float16 images loaded at least in pairs, a device with
// shaderFloat16; with dilation along x some columns reduced are no
// window's). Per fetched word
// (two neighbouring columns, the lower in its low bits) and window row
// in order, one f16vec2 max takes the columns' maxima over the rows so
// far, and a strictly greater value moves the column's first row holding
// its maximum (kf) to that row. A window's maximum m is then the largest
// of its columns' maxima, and its first tap in row-major order equal to m
// is the smallest kf*KW + kx over its columns kx whose maximum is m: the
// first tap equal to the maximum, as fastPass finds it, and the same
// value (a max of halves is exact). The NaN test is a sum of every
// fetched half (a NaN, or inf - inf, there sends the strip to the full
// pass, as in pooling_max.comp's pass on halves). One destination row
// an invocation: a form over several rows that reduced the rows they
// share once (pooling_max.comp's) took the float16 argmax forward at
// 112x112 from 33.4 to 74-111 us on an H200, its arrays in local memory
// (bench/results/h200-2026-11-29-s9, run 2).
uint cmw[NW];   // per word, its two columns' maxima (packed halves)
uvec2 kfw[NW];  // and the first window row holding each

// colMax returns segment column e's maximum over the window rows, OUT
// where the column lies outside the image.
float16_t colMax(int e, float16_t OUT) {
	int i = PAR + e;
	return colIn[e] ? unpackFloat2x16(cmw[i / 2])[i % 2] : OUT;
}

bool halfPass(Strip p, inout uint code[OX]) {
	const float16_t OUT = CLAMP ? float16_t(NEG_INF) : float16_t(0.0);
	f16vec2 sum = f16vec2(0.0);
	bool inside = p.s.x >= 0 && p.s.x + SEG <= pc.srcSize.x && p.s.y >= 0 && p.s.y + KEY <= pc.srcSize.y;
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		loadWords(p, ky * DY);
		int y = p.s.y + ky * DY;
		bool yin = y >= 0 && y < pc.srcSize.y;
		[[unroll]] for (int w = 0; w < NW; w++) {
			f16vec2 v = yin ? unpackFloat2x16(rw[w]) : f16vec2(OUT);
			sum += v;
			if (ky == 0) {
				cmw[w] = packFloat2x16(v);
				kfw[w] = uvec2(0u);
			} else {
				f16vec2 c = unpackFloat2x16(cmw[w]);
				bvec2 gt = greaterThan(v, c);
				cmw[w] = packFloat2x16(max(c, v));
				kfw[w] = uvec2(gt.x ? uint(ky) : kfw[w].x, gt.y ? uint(ky) : kfw[w].y);
			}
		}
	}
	if (any(isnan(sum))) return false;
	bool ok = true;
	[[unroll]] for (int o = 0; o < OX; o++) {
		float16_t m = colMax(tapCol(o, 0), OUT);
		[[unroll]] for (int kx = 1; kx < KW; kx++) m = max(m, colMax(tapCol(o, kx), OUT));
		uint c = MASK;
		[[unroll]] for (int kx = 0; kx < KW; kx++) {
			int i = PAR + tapCol(o, kx);
			uint t = kfw[i / 2][i % 2] * uint(KW) + uint(kx);
			c = colMax(tapCol(o, kx), OUT) == m ? min(c, t) : c;
		}
		ok = ok && (inside || m != OUT || o >= p.count);
		res[o] = float(m);
		code[o] = o < p.count ? c : MASK;
	}
	return ok;
}
#endif

// fullPass fills res and code for any strip: NaNs, outside taps, windows
// with no tap inside.
void fullPass(Strip p, inout uint code[OX]) {
	if (TWO_PHASE) {
		// Per window, the maximum first (NaN aside, as the forward computes
		// it), then the first tap equal to it, or the first NaN: the same
		// winner as comparing tap by tap with a strict >, at one compare and
		// one select per tap. Outside taps hold the edge mode's value (0, or
		// -inf under EdgeClamp, where they are never chosen).
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
}

#ifdef VKMPS_F16A
const bool HALF = VW >= 2;
#else
const bool HALF = false;
#endif

void poolStrip(Strip p) {
	uint code[OX];
	bool done = false;
#ifdef VKMPS_F16A
	if (FAST && HALF) done = halfPass(p, code);
	else
#endif
	if (FAST) done = fastPass(p, code);
	if (!done) fullPass(p, code);
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
