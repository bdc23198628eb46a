#version 450
// PoolingMax and DilatedPoolingMax (MPSCNNPoolingMax, MPSCNNDilatedPoolingMax):
// out = max over the window's taps. EdgeZero: taps outside read 0; EdgeClamp:
// they are skipped, and a window with no tap inside gives 0. A NaN in the
// window makes the result NaN.
// vkmps:variant f16 -DVKMPS_F16
#define POOL_FETCH_ROWS
#include "pooling_common.glsl"

// FAST: first a pass that issues the loads of all window rows at once
// and takes one max per tap, noting only whether the strip holds a NaN
// (through the sum of its used source values, NaN if one is, or rarely
// from infinities); where it may, the full pass below runs from memory
// again, so both give the same bits. Tuning fastmax=1; off by default.
layout(constant_id = 19) const bool FAST = false;

// usedCol reports whether some window of the strip has a tap in segment
// column e (with dilation, some columns between taps are loaded but unused).
bool usedCol(int e) {
	bool u = false;
	[[unroll]] for (int o = 0; o < OX; o++)
		[[unroll]] for (int kx = 0; kx < KW; kx++) u = u || tapCol(o, kx) == e;
	return u;
}

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
