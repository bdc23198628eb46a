#version 450
// The Winograd products (see convolution_winograd_common.glsl) on
// gemm.glsl's tiles, per transformed position xi (the workgroup's z, and
// with MODE 1 the split s = z / 36):
//   MODE 0 (convolution, data gradient): X[xi][m][t] = sum over c of
//     U[xi][c][m] * V[xi][c][t]: A[m][k] = U[xi][k][m] (m fastest in
//     memory), B[k][n] = V[xi][k][n] (n fastest), as quads along n with
//     VEC_B (T a multiple of 4, vBase too);
//   MODE 1 (weight gradient): P[s][xi][m][n] = sum over the tiles k of
//     split s of D[xi][m][k] * V[xi][n][k]: A and B with k fastest, A as
//     quads along k with VEC_A (T and uBase multiples of 4); an empty
//     split writes 0. With CHANNELS_FAST, D[xi][k][m] and V[xi][k][n]
//     instead (the transforms' CHANNELS_FAST): A and B as in MODE 0, as
//     quads along m with VEC_A (M and uBase multiples of 4) and along n
//     with VEC_B (C and vBase multiples of 4).
// VEC_C: results stored as quads (see main).
// vkmps:variant t0 -DGEMM_TILE0
#include "convolution_winograd_common.glsl"

layout(std430, binding = 0) buffer Scr { float scr[]; };
layout(std430, binding = 0) buffer Scr4 { vec4 scr4[]; };

layout(local_size_x_id = 0) in;
#ifdef GEMM_TILE0
const uint BM = 128; // tile 0 of ops/gemm.go's gemmTiles, fixed at compile
const uint BN = 128; // time (as convolution_gemm_weights.comp's "t0"
const uint BK = 8;   // builds): specialized, its 8x8 block spills
const uint TM = 8;
const uint TN = 8;
#else
layout(constant_id = 1) const uint BM = 32;
layout(constant_id = 2) const uint BN = 32;
layout(constant_id = 3) const uint BK = 16;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
#endif
layout(constant_id = 12) const int MODE = 0;
layout(constant_id = 18) const bool VEC_A = false;
layout(constant_id = 19) const bool VEC_B = false;
layout(constant_id = 20) const bool VEC_C = false;
layout(constant_id = 22) const bool CHANNELS_FAST = false;
const bool KFAST = MODE == 1 && !CHANNELS_FAST; // A and B with k fastest
const bool A_KFAST = KFAST;
const bool B_KFAST = KFAST;

#include "gemm.glsl"

uint tileM0, tileN0, uRow, vRow;
uint gM, gN, kOff, kLim; // the GEMM's rows and columns, its k in [kOff, kLim)

void gemmFetchA(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_A) {
		[[unroll]] for (uint r = 0; r < RA4; r++) {
			if (r * GEMM_T + t >= QA) break;
			uvec2 p = gemmPosA4(t, r);
			uint m = tileM0 + p.x, k = kOff + kt * BK + p.y;
			// KFAST: k and kLim are multiples of 4 here (T is; so is
			// kChunk); else m and gM are.
			ra4[r] = m < gM && k < kLim ? scr4[(uRow + (KFAST ? m * pc.T + k : k * gM + m)) / 4u] : vec4(0.0);
		}
		return;
	}
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uvec2 p = gemmPosA(t, r);
		uint m = tileM0 + p.x, k = kOff + kt * BK + p.y;
		bool in_ = m < gM && k < kLim;
		ra[r] = in_ ? scr[KFAST ? uRow + m * pc.T + k : uRow + k * gM + m] : 0.0;
	}
}

void gemmFetchB(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_B) {
		[[unroll]] for (uint r = 0; r < RB4; r++) {
			if (r * GEMM_T + t >= QB) break;
			uvec2 p = gemmPosB4(t, r);
			uint k = kOff + kt * BK + p.x, n = tileN0 + p.y;
			rb4[r] = k < kLim && n < gN ? scr4[(vRow + k * gN + n) / 4u] : vec4(0.0);
		}
		return;
	}
	[[unroll]] for (uint r = 0; r < RB; r++) {
		uvec2 p = gemmPosB(t, r);
		uint k = kOff + kt * BK + p.x, n = tileN0 + p.y;
		rb[r] = k < kLim && n < gN ? scr[vRow + (KFAST ? n * pc.T + k : k * gN + n)] : 0.0;
	}
}

void main() {
	uint xi = gl_WorkGroupID.z % 36u, split = gl_WorkGroupID.z / 36u, t = gl_LocalInvocationID.x;
	tileM0 = gl_WorkGroupID.y * BM;
	tileN0 = gl_WorkGroupID.x * BN;
	uint xRow;
	if (MODE == 1) {
		gM = pc.M;
		gN = pc.C;
		kOff = split * pc.kChunk;
		kLim = min(pc.T, kOff + pc.kChunk);
		uRow = pc.uBase + xi * pc.M * pc.T;
		xRow = pc.xBase + (split * 36u + xi) * pc.M * pc.C;
	} else {
		// Split K (kChunk channels a split, 0: one split): split s writes
		// its partial X at slot s, the output transform adds them.
		uint chunk = pc.kChunk == 0u ? pc.C : pc.kChunk;
		gM = pc.M;
		gN = pc.T;
		kOff = split * chunk;
		kLim = min(pc.C, kOff + chunk);
		uRow = pc.uBase + xi * pc.C * pc.M;
		xRow = pc.xBase + (split * 36u + xi) * pc.M * pc.T;
	}
	vRow = pc.vBase + xi * pc.C * pc.T;
	gemmRun(kLim > kOff ? (kLim - kOff + BK - 1u) / BK : 1u);
	// With VEC_C (gN and xRow multiples of 4: a quad of columns lies
	// wholly inside or wholly past gN) each accumulator quad, 4
	// neighbouring columns, is one 16-byte store, a warp's stores filling
	// whole rows of its tile; else one value at a time.
	if (VEC_C) {
		[[unroll]] for (uint q = 0; q < TN / 4; q++) {
			uint n = tileN0 + gemmCol(t, q * 4u);
			[[unroll]] for (uint i = 0; i < TM; i++) {
				uint m = tileM0 + gemmRow(t, i);
				if (m < gM && n < gN) scr4[(xRow + m * gN + n) / 4u] = acc[i * (TN / 4) + q];
			}
		}
		return;
	}
	[[unroll]] for (uint i = 0; i < TM; i++) {
		uint m = tileM0 + gemmRow(t, i);
		if (m >= gM) continue;
		[[unroll]] for (uint j = 0; j < TN; j++) {
			uint n = tileN0 + gemmCol(t, j);
			if (n < gN) scr[xRow + m * gN + n] = acc[i * (TN / 4) + j / 4][j % 4];
		}
	}
}
