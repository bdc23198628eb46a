// The tiled GEMM engine of the convolution family (ops/gemm.go):
// C[M x N] = A[M x K] * B[K x N] in float32, one BM x BN tile of C per
// workgroup, the K axis walked in BK-deep slices.
//
// Each of the (BM/TM)*(BN/TN) invocations keeps a TM x TN block of C in
// registers (register blocking): its rows are TM/4 quads of 4 rows
// m = q*4*(BM/TM) + tm*4 + i, its columns TN/4 quads n = q*4*(BN/TN) +
// tn*4 + j, so both come out of shared memory as vec4 loads and a warp's
// loads of B are consecutive 16-byte words. Slices are staged in shared
// memory twice over (double buffering): while the invocations multiply
// slice t out of one buffer, their loads of slice t+1 are in flight into
// registers and then go to the other buffer, so one barrier per slice
// suffices and global latency hides behind arithmetic.
//
// The includer declares before including this file:
//   - the specialization constants BM, BN, BK, TM, TN (constant IDs 1..5;
//     local_size_x_id 0 is (BM/TM)*(BN/TN)) and the bools A_KFAST, B_KFAST,
//     VEC_A and VEC_B;
//   - void gemmFetchA(uint kt) and void gemmFetchB(uint kt): load slice kt
//     of A (B) into ra[] (rb[]), RA (RB) values per invocation, value r of
//     invocation t being element gemmPosA(t, r) (gemmPosB) of the slice,
//     and 0 outside the matrix.
// It then calls gemmRun(kTiles) and reads acc[], the TM x TN block
// (row i, column quad q at acc[i*(TN/4) + q]; gemmRow, gemmCol give their
// tile positions).
//
// Slice layout: A-major "K fast": invocation t loads k = t % BK of rows
// t / BK + r*(T/BK); "M fast": m = t % BM of slices t / BM + r*(T/BM). The
// same for B with N. Shared rows are padded by 4 floats so that the K-fast
// stores do not all fall into one bank.
//
// Vector loads: with VEC_A the includer's gemmFetchA fills ra4[] instead,
// quad r of invocation t being the 4 values of row m from k (gemmPosA4),
// quads numbered along k then m so that neighbouring invocations read
// neighbouring 16 bytes (without A_KFAST: the 4 values of slice row k from
// m, numbered along m); with VEC_B, gemmFetchB fills rb4[], quad r being
// 4 values of slice row k from column n (gemmPosB4), numbered along n
// (with B_KFAST: of column n from row k, numbered along k).
// A quad r*T + t beyond the slice (QA, QB) is not loaded.
//
// Raw registers: an includer may keep in ra[] and rb[] what its loads
// return, not yet converted to float (type GEMM_REG, see gemm_layout.glsl),
// and define GEMM_A_VALUE(r) and GEMM_B_VALUE(r), the float of value r
// of ra and rb, and GEMM_B4_VALUE(r), the vec4 of quad r of rb4 (type
// GEMM_REG_B4); gemmStage converts then, after gemmMultiply, so that no
// conversion waits on a load in flight before the multiply.
//
// Row sums: an includer that defines GEMM_ROWSUM (and does not use VEC_A)
// gets the sums of A's rows over every slice too, at the cost of an add
// per value it loads: each invocation adds the values it stages, per slice
// position (the slices are cut the same way each time), and gemmRowSum
// then adds the positions of each row in order (a fixed order: the sums
// repeat bit for bit).

#ifndef GEMM_A_VALUE
#define GEMM_A_VALUE(r) ra[r]
#define GEMM_B_VALUE(r) rb[r]
#endif
#ifndef GEMM_B4_VALUE
#define GEMM_B4_VALUE(r) rb4[r]
#endif

const uint GEMM_WM = BM / TM;             // invocations along m
const uint GEMM_WN = BN / TN;             // invocations along n
const uint GEMM_T = GEMM_WM * GEMM_WN;    // invocations per workgroup
#include "gemm_layout.glsl"
const uint SA = BM + 4;                   // floats per shared row of A (one k)
const uint SB = BN + 4;                   // floats per shared row of B

shared vec4 gemmA[2 * BK * SA / 4];
shared vec4 gemmB[2 * BK * SB / 4];

vec4 acc[TM * TN / 4];
#ifdef GEMM_ROWSUM
float rowPart[RA]; // the sum of the values this invocation staged at value r
#endif

// gemmRow returns the tile row of accumulator row i of invocation t.
uint gemmRow(uint t, uint i) { return (i / 4) * 4 * GEMM_WM + (t / GEMM_WN) * 4 + (i % 4); }

// gemmCol returns the tile column of accumulator column j of invocation t.
uint gemmCol(uint t, uint j) { return (j / 4) * 4 * GEMM_WN + (t % GEMM_WN) * 4 + (j % 4); }

void gemmStage(uint buf) {
	uint t = gl_LocalInvocationID.x;
#ifdef GEMM_ROWSUM
	[[unroll]] for (uint r = 0; r < RA; r++) rowPart[r] += GEMM_A_VALUE(r);
#endif
	if (VEC_A) {
		[[unroll]] for (uint r = 0; r < RA4; r++) {
			if (r * GEMM_T + t >= QA) break;
			uvec2 p = gemmPosA4(t, r);
			if (!A_KFAST) {
				// Quads along m: one whole vec4 of a shared row.
				gemmA[((buf * BK + p.y) * SA + p.x) / 4] = ra4[r];
				continue;
			}
			[[unroll]] for (uint j = 0; j < 4; j++) {
				uint i = (buf * BK + p.y + j) * SA + p.x;
				gemmA[i / 4][i % 4] = ra4[r][j];
			}
		}
	} else {
		[[unroll]] for (uint r = 0; r < RA; r++) {
			uvec2 p = gemmPosA(t, r);
			uint i = (buf * BK + p.y) * SA + p.x;
			gemmA[i / 4][i % 4] = GEMM_A_VALUE(r);
		}
	}
	if (VEC_B) {
		[[unroll]] for (uint r = 0; r < RB4; r++) {
			if (r * GEMM_T + t >= QB) break;
			uvec2 p = gemmPosB4(t, r);
			if (B_KFAST) {
				// A quad along k: four slice rows of column n.
				vec4 q = GEMM_B4_VALUE(r);
				[[unroll]] for (uint j = 0; j < 4; j++) {
					uint i = (buf * BK + p.x + j) * SB + p.y;
					gemmB[i / 4][i % 4] = q[j];
				}
				continue;
			}
			gemmB[((buf * BK + p.x) * SB + p.y) / 4] = GEMM_B4_VALUE(r);
		}
	} else {
		[[unroll]] for (uint r = 0; r < RB; r++) {
			uvec2 p = gemmPosB(t, r);
			uint i = (buf * BK + p.x) * SB + p.y;
			gemmB[i / 4][i % 4] = GEMM_B_VALUE(r);
		}
	}
}

void gemmMultiply(uint buf) {
	uint t = gl_LocalInvocationID.x;
	uint tm = t / GEMM_WN, tn = t % GEMM_WN;
	[[unroll]] for (uint kk = 0; kk < BK; kk++) {
		vec4 a[TM / 4];
		vec4 b[TN / 4];
		uint ab = (buf * BK + kk) * (SA / 4) + tm;
		uint bb = (buf * BK + kk) * (SB / 4) + tn;
		[[unroll]] for (uint q = 0; q < TM / 4; q++) a[q] = gemmA[ab + q * GEMM_WM];
		[[unroll]] for (uint q = 0; q < TN / 4; q++) b[q] = gemmB[bb + q * GEMM_WN];
		[[unroll]] for (uint i = 0; i < TM; i++) {
			float av = a[i / 4][i % 4];
			[[unroll]] for (uint q = 0; q < TN / 4; q++) acc[i * (TN / 4) + q] = fma(vec4(av), b[q], acc[i * (TN / 4) + q]);
		}
	}
}

void gemmFetchA(uint kt);
void gemmFetchB(uint kt);

// gemmRun accumulates kTiles slices (kTiles >= 1) into acc.
void gemmRun(uint kTiles) {
	[[unroll]] for (uint i = 0; i < TM * TN / 4; i++) acc[i] = vec4(0.0);
#ifdef GEMM_ROWSUM
	[[unroll]] for (uint r = 0; r < RA; r++) rowPart[r] = 0.0;
#endif
	gemmFetchA(0);
	gemmFetchB(0);
	gemmStage(0);
	barrier();
	for (uint kt = 0; kt < kTiles; kt++) {
		bool more = kt + 1 < kTiles;
		if (more) {
			gemmFetchA(kt + 1);
			gemmFetchB(kt + 1);
		}
		gemmMultiply(kt & 1);
		if (more) gemmStage((kt + 1) & 1);
		barrier();
	}
}

#ifdef GEMM_ROWSUM
// gemmRowSum returns, for invocation t < BM, the sum of row t of the
// tile's A over the slices gemmRun walked (for t >= BM: 0). Called by the
// whole workgroup after gemmRun: it reuses the A slices' shared memory.
float gemmRowSum() {
	uint t = gl_LocalInvocationID.x;
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uvec2 p = gemmPosA(t, r);
		uint i = p.y * SA + p.x;
		gemmA[i / 4][i % 4] = rowPart[r];
	}
	barrier();
	float s = 0.0;
	if (t < BM) {
		for (uint k = 0; k < BK; k++) {
			uint i = k * SA + t;
			s += gemmA[i / 4][i % 4];
		}
	}
	return s;
}
#endif
