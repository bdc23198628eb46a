#version 450
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. A NaN in the
// window makes the result NaN.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant packedf16 -DVKMPS_F16 -DVKMPS_F16A
#ifdef VKMPS_F16A
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#define POOL_FETCH_ROWS
#define POOL_STRIP_ROWS
#include "pooling_common.glsl"

// FAST: first a pass that issues the loads of all window rows at once
// and takes one max per tap, noting only whether the strip holds a NaN
// (through the sum of its used source values, NaN if one is, or rarely
// from infinities); where it may, the full pass below runs from memory
// again, so both give the same bits. On by default (ops' Tuning
// fastmax=0 turns it off).
layout(constant_id = 19) const bool FAST = false;

// usedCol reports whether some window of the strip has a tap in segment
// column e (with dilation, some columns between taps are loaded but unused).
bool usedCol(int e) {
	bool u = false;
	[[unroll]] for (int o = 0; o < OX; o++)
		[[unroll]] for (int kx = 0; kx < KW; kx++) u = u || tapCol(o, kx) == e;
	return u;
}

#ifdef VKMPS_F16A
// The "packedf16" build (ops' halfArithmetic: float16 images, loads of at
// least pairs, a device with shaderFloat16) computes the fast pass on the
// halves themselves. A fetched 32-bit word holds two neighbouring columns
// (the lower in its low bits): the maxima over the window rows take one
// f16vec2 max per word and row, then each window takes the maximum of its
// columns. A max of halves is exact, so the results are the bits of the
// float32 pass. The NaN test is a sum of every fetched half (a NaN or
// inf - inf there, even in a column no window uses, sends the strip to the
// full pass).

const int RY = (OY - 1) * SY + KEY; // source rows the strip's OY rows of windows span

// windowRow returns the window row (ky) that source row r is for the
// strip's destination row j, or -1 when r is none of its rows.
int windowRow(int r, int j) {
	int d = r - j * SY;
	return (d >= 0 && d % DY == 0 && d / DY < KH) ? d / DY : -1;
}

// rowUsed reports whether source row r is a window row of some
// destination row of the strip.
bool rowUsed(int r) {
	bool u = false;
	[[unroll]] for (int j = 0; j < OY; j++) u = u || windowRow(r, j) >= 0;
	return u;
}

// Per destination row j and word w, cm[j * NW + w]: the word's two
// columns' maxima over row j's window rows.
uint cm[OY * NW];

// colHalf returns segment column e's maximum over destination row j's
// window rows, OUT where the column lies outside the image.
float16_t colHalf(int j, int e, float16_t OUT) {
	int i = PAR + e;
	return colIn[e] ? unpackFloat2x16(cm[j * NW + i / 2])[i % 2] : OUT;
}

// halfPass is the fast pass on halves over the strip's OY destination
// rows (source rows shared by the windows of two rows are reduced once),
// storing their results; false (nothing stored) when a fetched half may be
// a NaN. Its arrays hold 32-bit words: on an H200 arrays of halves went to
// local memory (112 bytes a thread, the max forward at 112x112 ten times
// slower; bench/results/h200-2026-11-29-s7).
bool halfPass(Strip p) {
	const float16_t OUT = CLAMP ? float16_t(NEG_INF) : float16_t(0.0);
	f16vec2 sum = f16vec2(0.0);
	[[unroll]] for (int r = 0; r < RY; r++) {
		if (rowUsed(r)) {
			loadWords(p, r);
			int y = p.s.y + r;
			bool yin = y >= 0 && y < pc.srcSize.y;
			[[unroll]] for (int w = 0; w < NW; w++) {
				f16vec2 v = yin ? unpackFloat2x16(rw[w]) : f16vec2(OUT);
				sum += v;
				[[unroll]] for (int j = 0; j < OY; j++) {
					int ky = windowRow(r, j);
					if (ky == 0) cm[j * NW + w] = packFloat2x16(v);
					else if (ky > 0) cm[j * NW + w] = packFloat2x16(max(unpackFloat2x16(cm[j * NW + w]), v));
				}
			}
		}
	}
	if (any(isnan(sum))) return false;
	[[unroll]] for (int j = 0; j < OY; j++) {
		Strip q = rowOf(p, j);
		if (q.o.y >= pc.clipSize.y) break;
		[[unroll]] for (int o = 0; o < OX; o++) {
			float16_t m = colHalf(j, tapCol(o, 0), OUT);
			[[unroll]] for (int kx = 1; kx < KW; kx++) m = max(m, colHalf(j, tapCol(o, kx), OUT));
			// Under EdgeClamp a window with no tap inside has only outside
			// taps (OUT, -inf), so only a maximum of -inf needs the test.
			// Testing every window (anyTap's floor divisions) took the
			// float16 max forward at 112x112 (3x3, stride 2) 26.2 us
			// instead of 23.4 on an H200, dilated max 37.8 instead of 26.9
			// (bench/results/h200-2026-11-29-s10, run 5).
			res[o] = float(m);
			if (CLAMP && m == OUT && !anyTap(q, o)) res[o] = 0.0;
		}
		storeResults(q);
	}
	return true;
}
#endif

// fastPass fills res unless the strip may hold a NaN; returns whether it
// did.
bool fastPass(Strip p) {
	float m[OX];
	[[unroll]] for (int o = 0; o < OX; o++) m[o] = NEG_INF;
	float sum = 0.0;
	fetchRows(p);
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		unpackRow(p, ky, CLAMP ? NEG_INF : 0.0);
		[[unroll]] for (int e = 0; e < SEG; e++)
			if (usedCol(e)) sum += segV[e];
		[[unroll]] for (int o = 0; o < OX; o++)
			[[unroll]] for (int kx = 0; kx < KW; kx++) m[o] = max(m[o], segV[tapCol(o, kx)]);
	}
	if (isnan(sum)) return false;
	[[unroll]] for (int o = 0; o < OX; o++) {
		res[o] = m[o];
		if (CLAMP && m[o] == NEG_INF && !anyTap(p, o)) res[o] = 0.0; // see halfPass
	}
	return true;
}

// fullPass fills res for any strip: NaNs propagate.
void fullPass(Strip p) {
	float m[OX];
	bool nan[OX];
	[[unroll]] for (int o = 0; o < OX; o++) {
		m[o] = NEG_INF;
		nan[o] = false;
	}
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		loadRowOutside(p, ky, CLAMP ? NEG_INF : 0.0);
		[[unroll]] for (int o = 0; o < OX; o++) {
			[[unroll]] for (int kx = 0; kx < KW; kx++) {
				float v = segV[tapCol(o, kx)];
				m[o] = max(m[o], v);
				nan[o] = nan[o] || isnan(v);
			}
		}
	}
	[[unroll]] for (int o = 0; o < OX; o++) {
		float r = nan[o] ? quietNaN() : m[o];
		res[o] = (CLAMP && !anyTap(p, o)) ? 0.0 : r;
	}
}

#ifdef VKMPS_F16A
const bool HALF = VW >= 2;
#else
const bool HALF = false;
#endif

// poolStrip computes the strip's OY rows: on halves where this build can
// (a strip that may hold a NaN falls through), else row by row, the fast
// pass first.
void poolStrip(Strip p) {
#ifdef VKMPS_F16A
	if (FAST && HALF && halfPass(p)) return;
#endif
	[[unroll]] for (int j = 0; j < OY; j++) {
		Strip q = rowOf(p, j);
		if (q.o.y >= pc.clipSize.y) break;
		if (!(FAST && !HALF && fastPass(q))) fullPass(q);
		storeResults(q);
	}
}
