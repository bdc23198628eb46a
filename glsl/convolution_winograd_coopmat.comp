#version 450
// The Winograd products (see convolution_winograd_common.glsl) on tensor
// cores (gemm_coopmat.glsl, VK_NV_cooperative_matrix), as
// convolution_winograd_gemm.comp's per transformed position xi (the
// workgroup's z, and with MODE 1 the split s = z / 36):
//   MODE 0 (convolution, data gradient): X[xi][m][t] = sum over c of
//     U[xi][c][m] * V[xi][c][t]: A[m][k] = U[xi][k][m] (m fastest in
//     memory: staged column-major; quads along m with VEC_A, M a
//     multiple of 4), B[k][n] = V[xi][k][n] (n fastest; quads along n
//     with VEC_B, T a multiple of 4);
//   MODE 1 (weight gradient): P[s][xi][m][n] = sum over the tiles k of
//     split s of D[xi][m][k] * V[xi][n][k]: A and B with k fastest, A as
//     quads along k with VEC_A, B with VEC_B (T, kChunk, uBase and vBase
//     multiples of 4); an empty split writes 0.
// U, D and V are the half builds' (WINO_HALF: halves, scaled by powers of
// two that the output transforms undo), read as halves; the products
// accumulate in float32 and P is stored as float32, X too unless X_HALF:
// then X divided by WINO_X_SCALE, rounded to halves (half of X's bytes
// written here and read by convolution_winograd_output.comp's half
// build, which multiplies them back), from half 2*xBase. For float16
// images, where the device has cooperative matrices (ops'
// convCoopTileFor); the "emu" build computes the same without them
// (gemm_coopmat.glsl's VKMPS_COOP_EMULATE), for tests on any device.
// The "pk" builds (gemm_coopmat.glsl's COOP_PACKED) serve VEC_A with VEC_B.
// vkmps:variant emu -DVKMPS_COOP_EMULATE
// vkmps:variant pk -DCOOP_PACKED
// vkmps:variant emupk -DVKMPS_COOP_EMULATE -DCOOP_PACKED
// The "khr" builds: gemm_coopmat.glsl through VK_KHR_cooperative_matrix.
// vkmps:variant khr +khr -DVKMPS_COOP_KHR
// vkmps:variant khrpk +khr -DVKMPS_COOP_KHR -DCOOP_PACKED
#define WINO_HALF
#include "convolution_winograd_common.glsl"

layout(std430, binding = 0) buffer Scr { float scr[]; };
layout(std430, binding = 0) buffer ScrH { float16_t scrh[]; };
layout(std430, binding = 0) buffer ScrH4 { f16vec4 scrh4[]; };

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 2;         // subgroups along m
layout(constant_id = 5) const uint WN = 2;         // subgroups along n
layout(constant_id = 12) const int MODE = 0;
layout(constant_id = 18) const bool VEC_A = false; // quads of A: MODE 0 (U) along m, MODE 1 (D) along k
layout(constant_id = 19) const bool VEC_B = false; // quads of V: MODE 0 along n, MODE 1 along k
layout(constant_id = 24) const uint CM = 16;       // the device's cooperative matrix shape
layout(constant_id = 25) const uint CN = 8;
layout(constant_id = 26) const uint CK = 16;
layout(constant_id = 27) const uint SUBGROUP = 32; // the device's subgroup size
layout(constant_id = 20) const bool X_HALF = false; // MODE 0: X stored as halves
// STORE_DIRECT (ops' winogradCoopDirect): the tiles cover X (or P)
// exactly and its rows lie on 16 bytes: each accumulator goes straight
// from the registers to X (gemm_coopmat.glsl's gemmEpilogueDirect)
// instead of through shared memory.
layout(constant_id = 29) const bool STORE_DIRECT = false;
// STAGE_TILE (ops' winogradCoopStage): X_HALF, and X's rows and the
// part's first value on 16 bytes: the tile is staged as halves in shared
// memory and stored 16 bytes an invocation (gemm_coopmat.glsl's
// gemmEpilogueTile).
layout(constant_id = 30) const bool STAGE_TILE = false;
const bool A_KFAST = MODE == 1;
const bool B_KFAST = MODE == 1;

// The real build keeps the loaded halves as halves until staged (no
// conversion to float32 and back); the emulated build as floats.
#ifndef VKMPS_COOP_EMULATE
#define GEMM_REG float16_t
#define GEMM_REG_A4 f16vec4
#define GEMM_REG_B4 f16vec4
#endif
#define GEMM_STORE_QUADS // gemmStoreC4, below
#define GEMM_QUADS true
#define GEMM_DIRECT // gemmDirectStore, below
#define GEMM_STAGE_TILE // gemmStoreTile, below
#include "gemm_coopmat.glsl"

uint tileM0, tileN0, uRow, vRow, xRow; // uRow, vRow in halves, xRow in floats (halves with X_HALF)
uint gM, gN, kOff, kLim; // the GEMM's rows and columns, its k in [kOff, kLim)

void gemmFetchA(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_A) {
		[[unroll]] for (uint r = 0; r < RA4; r++) {
			if (r * GEMM_T + t >= QA) break;
			uvec2 p = gemmPosA4(t, r);
			uint m = tileM0 + p.x, k = kOff + kt * BK + p.y;
			// MODE 1: k and kLim are multiples of 4 here (T is; so is
			// kChunk); MODE 0: m and M are. A quad is wholly in or out.
			uint at = MODE == 1 ? uRow + m * pc.T + k : uRow + k * pc.M + m;
			ra4[r] = m < gM && k < kLim ? GEMM_REG_A4(scrh4[at / 4u]) : GEMM_REG_A4(0.0);
		}
		return;
	}
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uvec2 p = gemmPosA(t, r);
		uint m = tileM0 + p.x, k = kOff + kt * BK + p.y;
		bool in_ = m < gM && k < kLim;
		ra[r] = in_ ? GEMM_REG(scrh[MODE == 1 ? uRow + m * pc.T + k : uRow + k * pc.M + m]) : GEMM_REG(0.0);
	}
}

void gemmFetchB(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_B) {
		[[unroll]] for (uint r = 0; r < RB4; r++) {
			if (r * GEMM_T + t >= QB) break;
			uvec2 p = gemmPosB4(t, r);
			uint k = kOff + kt * BK + p.x, n = tileN0 + p.y;
			// MODE 0: n and T are multiples of 4; MODE 1: k, kLim and T
			// are. A quad is wholly in or out.
			uint at = MODE == 1 ? vRow + n * pc.T + k : vRow + k * pc.T + n;
			rb4[r] = k < kLim && n < gN ? GEMM_REG_B4(scrh4[at / 4u]) : GEMM_REG_B4(0.0);
		}
		return;
	}
	[[unroll]] for (uint r = 0; r < RB; r++) {
		uvec2 p = gemmPosB(t, r);
		uint k = kOff + kt * BK + p.x, n = tileN0 + p.y;
		rb[r] = k < kLim && n < gN ? GEMM_REG(scrh[vRow + (MODE == 1 ? n * pc.T + k : k * pc.T + n)]) : GEMM_REG(0.0);
	}
}

layout(std430, binding = 0) buffer Scr4 { vec4 scr4[]; };

// The epilogue's quads (gemm_coopmat.glsl's gemmStoreC4): one 16-byte
// store (8 with X_HALF) where the four columns lie in the matrix and its
// rows start on quads, else value by value.
void gemmStoreC4(uint m, uint n, vec4 v) {
	uint mm = m + tileM0, nn = n + tileN0;
	if (mm >= gM) return;
	uint at = xRow + mm * gN + nn;
	if (nn + 3u < gN && gN % 4u == 0u && xRow % 4u == 0u) {
		if (X_HALF) scrh4[at / 4u] = f16vec4(v * (1.0 / WINO_X_SCALE));
		else scr4[at / 4u] = v;
		return;
	}
	[[unroll]] for (uint i = 0; i < 4u; i++) gemmStoreC(m, n + i, v[i]);
}

void gemmStoreC(uint m, uint n, float v) {
	m += tileM0;
	n += tileN0;
	if (m >= gM || n >= gN) return;
	// X_HALF: xRow counts halves (MODE 0 only).
	if (X_HALF) scrh[xRow + m * gN + n] = float16_t(v * (1.0 / WINO_X_SCALE));
	else scr[xRow + m * gN + n] = v;
}

layout(std430, binding = 0) buffer ScrU4 { uvec4 scru4[]; };

// gemmStoreTile stores halves n..n+7 of row m of the tile (STAGE_TILE:
// X_HALF, gN and xRow multiples of 8, so a quad is wholly in or out).
void gemmStoreTile(uint m, uint n, uvec4 v) {
	uint mm = m + tileM0, nn = n + tileN0;
	if (mm < gM && nn < gN) scru4[(xRow + mm * gN + nn) / 8u] = v;
}

// gemmDirectStore stores accumulator q (rows m.., columns n.. of the
// tile) as X's or P's rows (STORE_DIRECT).
void gemmDirectStore(uint q, uint m, uint n) {
	uint at = xRow + (tileM0 + m) * gN + tileN0 + n;
	if (X_HALF) {
		COOP_STORE_F16(q, scrh, at, gN, 1.0 / WINO_X_SCALE);
	} else {
		COOP_STORE_F32(q, scr, at, gN);
	}
}

void main() {
	uint xi = gl_WorkGroupID.z % 36u, split = gl_WorkGroupID.z / 36u;
	tileM0 = gl_WorkGroupID.y * BM;
	tileN0 = gl_WorkGroupID.x * BN;
	if (MODE == 1) {
		gM = pc.M;
		gN = pc.C;
		kOff = split * pc.kChunk;
		kLim = min(pc.T, kOff + pc.kChunk);
		uRow = SCR_PER_SLOT * pc.uBase + xi * pc.M * pc.T;
		xRow = pc.xBase + (split * 36u + xi) * pc.M * pc.C;
	} else {
		gM = pc.M;
		gN = pc.T;
		kOff = 0u;
		kLim = pc.C;
		uRow = SCR_PER_SLOT * pc.uBase + xi * pc.C * pc.M;
		xRow = (X_HALF ? SCR_PER_SLOT * pc.xBase : pc.xBase) + xi * pc.M * pc.T;
	}
	vRow = SCR_PER_SLOT * pc.vBase + xi * pc.C * pc.T;
	gemmRun(kLim > kOff ? (kLim - kOff + BK - 1u) / BK : 1u);
	if (STAGE_TILE) gemmEpilogueTile(1.0 / WINO_X_SCALE);
	else if (STORE_DIRECT) gemmEpilogueDirect();
	else gemmEpilogue();
}
