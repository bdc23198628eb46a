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
// The "t0" builds fix the tile to ops's tile 0 (128x128x8, 8x8 per
// invocation) at compile time, so that the compiler unrolls the tile's
// loops and keeps its accumulators in registers itself rather than
// leaving that to the driver after specialization (the 8x8 block of the
// plain build ran ten times slower than the 4x8 on an H100).
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant t0 -DGEMM_TILE0
// vkmps:variant t0f16 -DGEMM_TILE0 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
#ifdef GEMM_TILE0
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
const bool VEC_A = false; // gemm.glsl's quad loads: not used here
const bool VEC_B = false;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 1) readonly buffer X { ELEM x[]; };
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

#define GEMM_ROWSUM
#include "gemm.glsl"

// dyPixel returns (x, y, b) of k (MODE 0).
uvec3 dyPixel(uint k) {
	uint pixels = uint(pc.dySize.x * pc.dySize.y);
	uint b = k / pixels, p = k % pixels;
	return uvec3(p % uint(pc.dySize.x), p / uint(pc.dySize.x), b);
}

uint dyIndex(uvec3 px) {
	return pc.dyBase + px.z * pc.dyBatch + uint(pc.dyOrigin.y + int(px.y)) * pc.dyStride + uint(pc.dyOrigin.x + int(px.x));
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
		[[unroll]] for (uint r = 0; r < RA; r++) ra[r] = kin && aOff[r] != ~0u ? LOAD(dy[at + aOff[r]]) : 0.0;
		return;
	}
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uint k = kBeg + kt * BK + gemmPosA(t, r).y;
		ra[r] = k < kEnd && aRow != ~0u ? LOAD(dy[pc.dyBase + k * pc.dyBatch + aRow]) : 0.0;
	}
}

void gemmFetchB(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (MODE == 0) {
		uint k = kBeg + kt * BK + t % BK;
		bool kin = k < kEnd;
		[[unroll]] for (uint r = 0; r < RB; r++) rb[r] = kin && bOff[r] != ~0u ? xAt(curPx, bOff[r], bTap[r]) : 0.0;
		return;
	}
	[[unroll]] for (uint r = 0; r < RB; r++) {
		uint k = kBeg + kt * BK + gemmPosB(t, r).x;
		rb[r] = k < kEnd && bCol != ~0u ? LOAD(x[pc.xBase + k * pc.xBatch + bCol]) : 0.0;
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

void main() {
	if (DIRECT) {
		uint g = gl_WorkGroupID.z;
		uint n = gl_GlobalInvocationID.x, m = gl_GlobalInvocationID.y;
		if (n >= pc.N || m >= pc.M) return;
		float s = 0.0;
		for (uint k = 0; k < pc.K; k++) s = fma(loadA(g, m, k), loadB(g, k, n), s);
		part[pc.partBase + (g * pc.M + m) * pc.N + n] = s;
		return;
	}
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
}
