#version 450
// convolution_gemm.comp on tensor cores (VK_NV_cooperative_matrix, see
// gemm_coopmat.glsl): the same operand modes, bindings and push
// constants, float16 products accumulated in float32. Meant for float16
// images (the "f16" build); ops chooses it only where
// convCoopMatSupported says the device can run it. The "emu" build
// computes the same without cooperative matrices (gemm_coopmat.glsl's
// VKMPS_COOP_EMULATE), so that tests run this shader's logic on any
// device.
//
// Its loads are convolution_gemm_fetch.glsl's: one predicated load per
// value, of floats converted at the load (it defines no raw registers).
// On an H100 the predicated loads (against the branches before) took
// float16 3x3 layers of 128 to 512 channels at 28..7 pixels from 241-497
// to 133-281 us and VGG's 3x3 128@112 data gradient from 2013 to 993,
// but VGG's forward from 1990 to 3009-3522 in three runs of four (1202 in
// the fourth): bench/results/h100-2026-11-27-fetch.
// The "pk" builds (gemm_coopmat.glsl's COOP_PACKED) serve VEC_A with VEC_B.
// SPLITK 1 is convolution_gemm.comp's (the phases of MODE_B 3 included):
// the tiles of a split sum only its range of k and write their raw sums
// to part, and convolution_gemm.comp's SPLITK 2 adds the splits in order
// and finishes the outputs: a GEMM of few tiles over a long K (the 1x1
// data gradients of 2048 channels at 7x7) fills the device.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant emu -DVKMPS_F16 -DVKMPS_COOP_EMULATE
// vkmps:variant f16pk -DVKMPS_F16 -DCOOP_PACKED
// vkmps:variant emupk -DVKMPS_F16 -DVKMPS_COOP_EMULATE -DCOOP_PACKED
// The "khr" builds: gemm_coopmat.glsl through VK_KHR_cooperative_matrix.
// vkmps:variant khr +khr -DVKMPS_F16 -DVKMPS_COOP_KHR
// vkmps:variant khrpk +khr -DVKMPS_F16 -DVKMPS_COOP_KHR -DCOOP_PACKED
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 2;        // subgroups along m
layout(constant_id = 5) const uint WN = 2;        // subgroups along n
layout(constant_id = 24) const uint CM = 16;      // the device's cooperative matrix shape
layout(constant_id = 25) const uint CN = 8;
layout(constant_id = 26) const uint CK = 16;
layout(constant_id = 27) const uint SUBGROUP = 32; // the device's subgroup size
layout(constant_id = 28) const uint SPLITK = 0;
#include "convolution_gemm_head.glsl"
#ifndef VKMPS_COOP_EMULATE
#define GEMM_REG_B4 ELEM4 // image quads stay halves until staged
#endif
// QUADS (ops' convCoopQuads): the destination's rows of columns take
// quads (gemmStoreC4, below); else each value goes out as gemmStoreC
// stores it, a lane's values in one column.
layout(constant_id = 31) const bool QUADS = false;
// STORE_DIRECT (ops' convCoopDirect): the tiles cover the outputs
// exactly, each accumulator's columns neighbouring pixels of one plane
// on 16 bytes (or a row of the partial sums of SPLITK 1), without bias
// or neuron: each accumulator goes straight from the registers
// (gemm_coopmat.glsl's gemmEpilogueDirect) instead of through shared
// memory.
layout(constant_id = 29) const bool STORE_DIRECT = false;
#define GEMM_STORE_QUADS
#define GEMM_QUADS QUADS
#define GEMM_DIRECT // gemmDirectStore, below
#include "gemm_coopmat.glsl"
#include "convolution_gemm_fetch.glsl"

layout(std430, binding = 5) writeonly buffer Part { float part[]; };
layout(std430, binding = 5) writeonly buffer Part4 { vec4 part4[]; };
layout(std430, binding = 4) writeonly buffer Dst4 { ELEM4 dst4[]; };
uint partAt; // SPLITK 1: the split's first partial sum

// The epilogue's store. A lane's column changes only from one of its
// subgroup's accumulators to the next along n (SUBGROUP is a multiple of
// CN: gemm_coopmat.glsl's gemmEpilogue), so its destination index (the
// divisions of pixelOf) is computed once per column, not per value.
uint storeN = ~0u, storeAt;

void gemmStoreC(uint m, uint n, float v) {
	m += tileM0;
	n += tileN0;
	if (m >= pc.M || n >= nAll) return;
	if (n != storeN) {
		storeN = n;
		storeAt = SPLITK == 1 ? partAt + fullColumn(n) : outIndex(n);
	}
	if (SPLITK == 1) part[storeAt + m * pc.N] = v;
	else storeOut(grp, m, storeAt, v);
}

// The epilogue's quads (gemm_coopmat.glsl's gemmStoreC4, under QUADS).
// Outside MODE_B 3 (whose columns are a phase's strided pixels: value by
// value, as gemmStoreC), columns n..n+3 of row m go out as one store
// where they are four neighbouring values starting on a quad: in the
// partial sums of SPLITK 1, or in the image where the four pixels are
// neighbours in one row and the channel's plane keeps them on a quad;
// else value by value. A lane's four columns change only from one of its
// subgroup's accumulators to the next along n: their destinations are
// worked out once per accumulator (pixelOf's divisions for the first,
// the others stepped from it). On an H200 (bench/results/
// h200-2026-11-28-xhalf, runs 4 and 8) the float16 3x3 stride-2 forwards
// of 64 -> 128 channels at 56x56 took 88.2 -> 81.4 us, 128 -> 256 at 28x28
// 78.5 -> 76.2. Where quads are rarely possible (7x7 planes: ops leaves
// QUADS off) the quads' lanes, each on four columns of one row, stored
// worse than one column's four rows: the 1x1 512 -> 2048 forward at 7x7
// took 93 us against 76 (run 5).
uint quadN = ~0u, quadAt[4]; // quadAt[i]: outIndex(quadN + i)
bool quadWhole;              // quadAt are neighbours: quadAt[i] = quadAt[0] + i
void gemmStoreC4(uint m, uint n, vec4 v) {
	if (MODE_B == 3) {
		[[unroll]] for (uint i = 0u; i < 4u; i++) gemmStoreC(m, n + i, v[i]);
		return;
	}
	uint mm = m + tileM0, nn = n + tileN0;
	if (mm >= pc.M || nn >= nAll) return;
	if (SPLITK == 1) {
		uint at = partAt + nn + mm * pc.N;
		if (nn + 3u < nAll && at % 4u == 0u) part4[at / 4u] = v;
		else {
			[[unroll]] for (uint i = 0u; i < 4u; i++) {
				if (nn + i < nAll) part[at + i] = v[i];
			}
		}
		return;
	}
	if (nn != quadN) {
		quadN = nn;
		uvec3 px = pixelOf(nn);
		quadWhole = nn + 3u < nAll && px.x + 3u < uint(pc.outSize.x);
		[[unroll]] for (uint i = 0u; i < 4u; i++) {
			quadAt[i] = outIndexAt(px);
			if (++px.x == uint(pc.outSize.x)) {
				px.x = 0u;
				if (++px.y == uint(pc.outSize.y)) {
					px.y = 0u;
					px.z++;
				}
			}
		}
	}
	uint c = grp * pc.M + mm;
	uint off = c * pc.dstPlane;
	float b = BIAS ? bias[pc.biasBase + c] : 0.0;
	if (quadWhole && (quadAt[0] + off) % 4u == 0u) {
		dst4[(quadAt[0] + off) / 4u] = STORE4(vec4(neuronForward(v.x + b, c), neuronForward(v.y + b, c), neuronForward(v.z + b, c), neuronForward(v.w + b, c)));
		return;
	}
	[[unroll]] for (uint i = 0u; i < 4u; i++) {
		if (nn + i < nAll) dst[quadAt[i] + off] = STORE(neuronForward(v[i] + b, c));
	}
}

// gemmDirectStore stores accumulator q (rows m.., columns n.. of the
// tile) into the partial sums (SPLITK 1: rows of pc.N values) or the
// image (its CN columns one row of CN pixels of a channel's plane:
// STORE_DIRECT).
void gemmDirectStore(uint q, uint m, uint n) {
	uint mm = tileM0 + m, nn = tileN0 + n;
	if (SPLITK == 1) {
		COOP_STORE_F32(q, part, partAt + nn + mm * pc.N, pc.N);
	} else {
		COOP_STORE_F16(q, dst, outIndex(nn) + (grp * pc.M + mm) * pc.dstPlane, pc.dstPlane, 1.0);
	}
}

void main() {
	uvec2 gs = setWorkgroup();
	uint g = gs.x;
	if (SPLITK == 1) {
		if (!splitRange(gs.y)) return;
		partAt = pc.partBase + (gs.y * pc.groups + g) * pc.M * pc.N;
	}
	uint t = gl_LocalInvocationID.x;
	if (!gemmSetup(g, t)) return; // a phase with fewer outputs than the largest
	gemmRun(kLim > kOff ? (kLim - kOff + BK - 1) / BK : 1u); // an empty split writes 0
	if (STORE_DIRECT) gemmEpilogueDirect();
	else gemmEpilogue();
}
