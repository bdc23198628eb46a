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

const int NW = (NV * VW + 1) / 2; // words fetched per window row

// rawWord returns word w of window row ky, counted from its first load.
uint rawWord(int ky, int w) {
	if (VW == 8) {
		uvec4 u = raw8[ky * NV + w / 4];
		return (w % 4) == 0 ? u.x : (w % 4) == 1 ? u.y : (w % 4) == 2 ? u.z : u.w;
	}
	if (VW == 4) {
		uvec2 u = raw4h[ky * NV + w / 2];
		return (w % 2) == 0 ? u.x : u.y;
	}
	return raw2h[ky * NV + w];
}

// Per word, its two columns' maxima over the window rows.
uint cm[NW];

// colHalf returns segment column e's maximum over the window rows, OUT
// where the column lies outside the image.
float16_t colHalf(int e, float16_t OUT) {
	int i = PAR + e;
	return colIn[e] ? unpackFloat2x16(cm[i / 2])[i % 2] : OUT;
}

// halfPass is the fast pass on halves. Its arrays hold 32-bit words: on an
// H200 arrays of halves went to local memory (112 bytes a thread, the max
// forward at 112x112 ten times slower).
bool halfPass(Strip p) {
	const float16_t OUT = CLAMP ? float16_t(NEG_INF) : float16_t(0.0);
	f16vec2 sum = f16vec2(0.0);
	fetchRows(p);
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		int y = p.s.y + ky * DY;
		bool yin = y >= 0 && y < pc.srcSize.y;
		[[unroll]] for (int w = 0; w < NW; w++) {
			f16vec2 v = yin ? unpackFloat2x16(rawWord(ky, w)) : f16vec2(OUT);
			sum += v;
			cm[w] = packFloat2x16(ky == 0 ? v : max(unpackFloat2x16(cm[w]), v));
		}
	}
	if (any(isnan(sum))) return false;
	[[unroll]] for (int o = 0; o < OX; o++) {
		float16_t m = colHalf(tapCol(o, 0), OUT);
		[[unroll]] for (int kx = 1; kx < KW; kx++) m = max(m, colHalf(tapCol(o, kx), OUT));
		res[o] = (CLAMP && !anyTap(p, o)) ? 0.0 : float(m);
	}
	return true;
}
#endif

// fastPass fills res unless the strip may hold a NaN; returns whether it
// did.
bool fastPass(Strip p) {
#ifdef VKMPS_F16A
	if (VW >= 2) return halfPass(p);
#endif
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
	[[unroll]] for (int o = 0; o < OX; o++) res[o] = (CLAMP && !anyTap(p, o)) ? 0.0 : m[o];
	return true;
}

void poolStrip(Strip p) {
	if (FAST && fastPass(p)) {
		storeResults(p);
		return;
	}
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
	storeResults(p);
}
