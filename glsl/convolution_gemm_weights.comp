#version 450
// The weight gradient of a convolution or fully connected layer as an
// implicit GEMM (MPSCNNConvolutionGradient's weights part): per group g
// and split s (the workgroup's z = s*groups + g),
//   part[s][g][m][n] = sum over k in split s of A[m][k] * B[k][n]
// with m the output channel and
//   MODE 0 (convolution): k = (batch b, dy pixel (x, y)) over the dy region,
//     n = ci*KHW + tap, A[m][k] = Dy(b, g*M + m, (x, y)),
//     B[k][n] = X(b, g*cinG + ci, first + (x*SX, y*SY) + tap), 0 outside X;
//   MODE 1 (fully connected): k = b, A[m][k] = Dy[dyBase + k*dyBatch + m],
//     B[k][n] = X[xBase + k*xBatch + n].
// part[s] is laid out as the weights (O, I/G, KH, KW); with one split it
// is the weight gradient itself, else convolution_reduce.comp adds the
// splits in order. With BIASGRAD the tiled build also writes the sums of A's
// rows (the bias gradient, dy summed over the batch and pixels, read
// once) from the workgroups of the first column of tiles:
// biasPart[biasBase + z*M + m], per split as part. Every sum runs in a
// fixed order: the results repeat bit for bit.
//
// Loads: every value goes into ra/rb as loaded (gemm.glsl's raw
// registers) and becomes a float only when staged, after the multiply of
// the slice before, so that a slice's loads are in flight during that
// multiply; whether a value lies inside dy and X is one predicate on its
// load (xFetch), not a branch around it. In the float16 builds with WORDS
// (ops/gemm.go's convWords: both bindings cover whole 32-bit words) a
// value is loaded as the word holding it (dyw, xw: the bindings seen as
// words; float16 storage has no 16-bit registers to hold a half in) and
// its half is taken when staged, the high one where bit r of raHi (rbHi)
// is set. Without WORDS (a binding ending halfway through a word that its
// buffer lacks) each value is loaded as a half and converted at once, the
// conversion waiting on the load. On an H100 the float16 build converting
// at the load ran 1.2-1.3x slower than float32 (3x3 64@56, tile 1: 420
// against 356 us); as words staged raw, 330 against float32's 315 (which
// the predicated loads took from 356), bench/results/h100-2026-11-27-dw.
//
// The "t0" builds fix the tile to ops's tile 0 (128x128x8, 8x8 per
// invocation) at compile time, so that the compiler unrolls the tile's
// loops and keeps its accumulators in registers itself rather than
// leaving that to the driver after specialization (the 8x8 block of the
// plain build ran ten times slower than the 4x8 on an H100).
//
// The "coop" build (WEIGHTS_COOP) runs the same GEMM on tensor cores
// (gemm_coopmat.glsl, VK_NV_cooperative_matrix) for float16 images: the
// same loads and raw registers, staged as halves, products accumulated in
// float32; no fused bias sums (ops adds the bias gradient in its own
// pass). "emu" is its emulation (VKMPS_COOP_EMULATE) for any device.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant t0 -DGEMM_TILE0
// vkmps:variant t0f16 -DGEMM_TILE0 -DVKMPS_F16
// vkmps:variant coop -DVKMPS_F16 -DWEIGHTS_COOP
// vkmps:variant emu -DVKMPS_F16 -DWEIGHTS_COOP -DVKMPS_COOP_EMULATE
// vkmps:variant coopkhr +khr -DVKMPS_F16 -DWEIGHTS_COOP -DVKMPS_COOP_KHR
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
#ifdef WEIGHTS_COOP
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 2;        // subgroups along m
layout(constant_id = 5) const uint WN = 2;        // subgroups along n
layout(constant_id = 24) const uint CM = 16;      // the device's cooperative matrix shape
layout(constant_id = 25) const uint CN = 8;
layout(constant_id = 26) const uint CK = 16;
layout(constant_id = 27) const uint SUBGROUP = 32; // the device's subgroup size
#elif defined(GEMM_TILE0)
const uint BM = 128; // tile 0 of ops/gemm.go's gemmTiles
const uint BN = 128;
const uint BK = 8;
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
layout(constant_id = 15) const bool A_KFAST = true;
layout(constant_id = 16) const bool B_KFAST = true;
layout(constant_id = 17) const bool DIRECT = false;
layout(constant_id = 18) const bool BIASGRAD = false;
layout(constant_id = 19) const bool WORDS = false; // float16: load 32-bit words (see above)
const bool VEC_A = false; // gemm.glsl's quad loads: not used here
const bool VEC_B = false;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 1) readonly buffer X { ELEM x[]; };
#ifdef VKMPS_F16
layout(std430, binding = 0) readonly buffer DyWords { uint dyw[]; };
layout(std430, binding = 1) readonly buffer XWords { uint xw[]; };
#endif
layout(std430, binding = 2) writeonly buffer Part { float part[]; };
layout(std430, binding = 3) writeonly buffer BiasPart { float biasPart[]; };

layout(push_constant) uniform Push {
	ivec2 xSize;    // X plane W x H
	ivec2 first;    // X position of the first tap of dy region pixel (0, 0)
	ivec2 dyOrigin; // first pixel of the dy region
	ivec2 dySize;   // dy region W x H
	uint dyStride, xStride;
	uint dyBase, dyBatch, dyPlane;
	uint xBase, xBatch, xPlane;
	uint M, N, K;
	uint kChunk;    // k per split, a multiple of BK
	uint groups;
	uint cinG;      // X channels per group
	uint partBase;
	uint biasBase;
} pc;

uint raHi, rbHi; // float16 WORDS: bit r set when value r of ra (rb) is its word's high half

#ifdef VKMPS_F16
// Raw registers: the word holding the value (WORDS), else the float's bits.
#define GEMM_REG uint

float rawValue(uint v, uint hi, uint r) {
	if (!WORDS) return uintBitsToFloat(v);
	vec2 h = unpackHalf2x16(v);
	return ((hi >> r) & 1u) != 0u ? h.y : h.x;
}
#define GEMM_A_VALUE(r) rawValue(ra[r], raHi, r)
#define GEMM_B_VALUE(r) rawValue(rb[r], rbHi, r)

// dyRaw returns the raw register of dy[i] (0 unless ok), value r of ra,
// and sets bit r of hi when it is its word's high half; xRaw the same of
// x[i] for rb. In the float32 builds, the float (hi unused).
uint dyRaw(uint i, bool ok, inout uint hi, uint r) {
	if (!WORDS) return ok ? floatBitsToUint(LOAD(dy[i])) : 0u;
	hi |= (i & 1u) << r;
	return ok ? dyw[i >> 1] : 0u;
}

uint xRaw(uint i, bool ok, inout uint hi, uint r) {
	if (!WORDS) return ok ? floatBitsToUint(LOAD(x[i])) : 0u;
	hi |= (i & 1u) << r;
	return ok ? xw[i >> 1] : 0u;
}
#else
float dyRaw(uint i, bool ok, inout uint hi, uint r) { return ok ? dy[i] : 0.0; }
float xRaw(uint i, bool ok, inout uint hi, uint r) { return ok ? x[i] : 0.0; }
#endif

#ifdef WEIGHTS_COOP
#include "gemm_coopmat.glsl"
#else
#define GEMM_ROWSUM
#include "gemm.glsl"
#endif

// dyPixel returns (x, y, b) of k (MODE 0).
uvec3 dyPixel(uint k) {
	uint pixels = uint(pc.dySize.x * pc.dySize.y);
	uint b = k / pixels, p = k % pixels;
	return uvec3(p % uint(pc.dySize.x), p / uint(pc.dySize.x), b);
}

uint dyIndex(uvec3 px) {
	return pc.dyBase + px.z * pc.dyBatch + uint(pc.dyOrigin.y + int(px.y)) * pc.dyStride + uint(pc.dyOrigin.x + int(px.x));
}

// xFetch returns the raw register of X's value at tap of pixel px in the
// channel at chOff (0 outside X or unless ok), value r of rb.
GEMM_REG xFetch(uvec3 px, uint chOff, ivec2 tap, bool ok, uint r) {
	ivec2 q = pc.first + ivec2(px.xy) * ivec2(SX, SY) + tap;
	ok = ok && uint(q.x) < uint(pc.xSize.x) && uint(q.y) < uint(pc.xSize.y);
	return xRaw(pc.xBase + px.z * pc.xBatch + chOff + uint(q.y) * pc.xStride + uint(q.x), ok, rbHi, r);
}

float xAt(uvec3 px, uint chOff, ivec2 tap) {
	ivec2 q = pc.first + ivec2(px.xy) * ivec2(SX, SY) + tap;
	if (uint(q.x) >= uint(pc.xSize.x) || uint(q.y) >= uint(pc.xSize.y)) return 0.0;
	return LOAD(x[pc.xBase + px.z * pc.xBatch + chOff + uint(q.y) * pc.xStride + uint(q.x)]);
}

uint tileM0, tileN0, grp, kBeg, kEnd;
uint aOff[RA]; // MODE 0: dy channel offset of the row (~0u: outside)
uint bOff[RB]; // MODE 0: X channel offset of the column (~0u: outside)
ivec2 bTap[RB];
uint aRow, bCol; // MODE 1: the invocation's row / column (~0u: outside)
uvec3 curPx;     // MODE 0: the pixel of the invocation's k in the slice gemmFetchA loaded last

void gemmFetchA(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (MODE == 0) {
		uint k = kBeg + kt * BK + t % BK;
		bool kin = k < kEnd;
		// gemmFetchB's pixel too (the same k). Slices come in order: after
		// the first, step BK pixels on instead of dividing.
		if (kt == 0) curPx = dyPixel(k);
		else {
			curPx.x += BK;
			while (curPx.x >= uint(pc.dySize.x)) {
				curPx.x -= uint(pc.dySize.x);
				curPx.y++;
			}
			while (curPx.y >= uint(pc.dySize.y)) {
				curPx.y -= uint(pc.dySize.y);
				curPx.z++;
			}
		}
		uint at = kin ? dyIndex(curPx) : 0u;
		raHi = 0u;
		[[unroll]] for (uint r = 0; r < RA; r++) ra[r] = dyRaw(at + aOff[r], kin && aOff[r] != ~0u, raHi, r);
		return;
	}
	raHi = 0u;
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uint k = kBeg + kt * BK + gemmPosA(t, r).y;
		ra[r] = dyRaw(pc.dyBase + k * pc.dyBatch + aRow, k < kEnd && aRow != ~0u, raHi, r);
	}
}

void gemmFetchB(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (MODE == 0) {
		uint k = kBeg + kt * BK + t % BK;
		bool kin = k < kEnd;
		rbHi = 0u;
		[[unroll]] for (uint r = 0; r < RB; r++) rb[r] = xFetch(curPx, bOff[r], bTap[r], kin && bOff[r] != ~0u, r);
		return;
	}
	rbHi = 0u;
	[[unroll]] for (uint r = 0; r < RB; r++) {
		uint k = kBeg + kt * BK + gemmPosB(t, r).x;
		rb[r] = xRaw(pc.xBase + k * pc.xBatch + bCol, k < kEnd && bCol != ~0u, rbHi, r);
	}
}

float loadA(uint g, uint m, uint k) {
	if (MODE == 1) return LOAD(dy[pc.dyBase + k * pc.dyBatch + m]);
	return LOAD(dy[dyIndex(dyPixel(k)) + (g * pc.M + m) * pc.dyPlane]);
}

float loadB(uint g, uint k, uint n) {
	if (MODE == 1) return LOAD(x[pc.xBase + k * pc.xBatch + n]);
	return xAt(dyPixel(k), (g * pc.cinG + n / KHW) * pc.xPlane, convTap(n % KHW));
}

#ifdef WEIGHTS_COOP
uint storeZ; // the workgroup's z (group and split)

void gemmStoreC(uint m, uint n, float v) {
	m += tileM0;
	n += tileN0;
	if (m < pc.M && n < pc.N) part[pc.partBase + (storeZ * pc.M + m) * pc.N + n] = v;
}
#endif

void main() {
#ifndef WEIGHTS_COOP
	if (DIRECT) {
		uint g = gl_WorkGroupID.z;
		uint n = gl_GlobalInvocationID.x, m = gl_GlobalInvocationID.y;
		if (n >= pc.N || m >= pc.M) return;
		float s = 0.0;
		for (uint k = 0; k < pc.K; k++) s = fma(loadA(g, m, k), loadB(g, k, n), s);
		part[pc.partBase + (g * pc.M + m) * pc.N + n] = s;
		return;
	}
#endif
	uint t = gl_LocalInvocationID.x;
	uint z = gl_WorkGroupID.z;
	grp = z % pc.groups;
	kBeg = (z / pc.groups) * pc.kChunk;
	kEnd = min(pc.K, kBeg + pc.kChunk);
	tileM0 = gl_WorkGroupID.y * BM;
	tileN0 = gl_WorkGroupID.x * BN;
	if (MODE == 0) {
		[[unroll]] for (uint r = 0; r < RA; r++) {
			uint m = tileM0 + gemmPosA(t, r).x;
			aOff[r] = m < pc.M ? (grp * pc.M + m) * pc.dyPlane : ~0u;
		}
		[[unroll]] for (uint r = 0; r < RB; r++) {
			uint n = tileN0 + gemmPosB(t, r).y;
			bOff[r] = n < pc.N ? (grp * pc.cinG + n / KHW) * pc.xPlane : ~0u;
			bTap[r] = convTap(n % KHW);
		}
	} else {
		uint m = tileM0 + gemmPosA(t, 0).x, n = tileN0 + gemmPosB(t, 0).y;
		aRow = m < pc.M ? m : ~0u;
		bCol = n < pc.N ? n : ~0u;
	}
	uint tiles = kEnd > kBeg ? (kEnd - kBeg + BK - 1) / BK : 1u;
	gemmRun(tiles);
#ifdef WEIGHTS_COOP
	storeZ = z;
	gemmEpilogue();
#else
	if (BIASGRAD && gl_WorkGroupID.x == 0) {
		float s = gemmRowSum();
		if (t < BM && tileM0 + t < pc.M) biasPart[pc.biasBase + z * pc.M + tileM0 + t] = s;
	}
	[[unroll]] for (uint i = 0; i < TM; i++) {
		uint m = tileM0 + gemmRow(t, i);
		if (m >= pc.M) continue;
		uint row = pc.partBase + (z * pc.M + m) * pc.N;
		[[unroll]] for (uint j = 0; j < TN; j++) {
			uint n = tileN0 + gemmCol(t, j);
			if (n < pc.N) part[row + n] = acc[i * (TN / 4) + j / 4][j % 4];
		}
	}
#endif
}
