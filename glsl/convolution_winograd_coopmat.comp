#version 450
// The Winograd products (see convolution_winograd_common.glsl) of a
// convolution or data gradient (convolution_winograd_gemm.comp's MODE 0)
// on tensor cores (gemm_coopmat.glsl, VK_NV_cooperative_matrix): per
// transformed position xi (the workgroup's z),
//   X[xi][m][t] = sum over c of U[xi][c][m] * V[xi][c][t]
// with A[m][k] = U[xi][k][m] (m fastest in memory: staged column-major)
// and B[k][n] = V[xi][k][n] (n fastest; quads along n with VEC_B, T a
// multiple of 4). U and V are the half builds' (WINO_HALF: halves, U
// scaled up and V down by the same power of two), read as halves; the
// products accumulate in float32 and X is stored as float32 for the
// output transform. For float16 images, where the device has cooperative
// matrices (ops' convCoopTileFor); the "emu" build computes the same
// without them (gemm_coopmat.glsl's VKMPS_COOP_EMULATE), for tests on
// any device.
// vkmps:variant emu -DVKMPS_COOP_EMULATE
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
layout(constant_id = 19) const bool VEC_B = false; // quads of V along n
layout(constant_id = 24) const uint CM = 16;       // the device's cooperative matrix shape
layout(constant_id = 25) const uint CN = 8;
layout(constant_id = 26) const uint CK = 16;
layout(constant_id = 27) const uint SUBGROUP = 32; // the device's subgroup size
const bool A_KFAST = false;
const bool B_KFAST = false;
const bool VEC_A = false;

#include "gemm_coopmat.glsl"

uint tileM0, tileN0, uRow, vRow, xRow; // uRow, vRow in halves, xRow in floats

void gemmFetchA(uint kt) {
	uint t = gl_LocalInvocationID.x;
	[[unroll]] for (uint r = 0; r < RA; r++) {
		uvec2 p = gemmPosA(t, r);
		uint m = tileM0 + p.x, k = kt * BK + p.y;
		ra[r] = m < pc.M && k < pc.C ? float(scrh[uRow + k * pc.M + m]) : 0.0;
	}
}

void gemmFetchB(uint kt) {
	uint t = gl_LocalInvocationID.x;
	if (VEC_B) {
		[[unroll]] for (uint r = 0; r < RB4; r++) {
			if (r * GEMM_T + t >= QB) break;
			uvec2 p = gemmPosB4(t, r);
			uint k = kt * BK + p.x, n = tileN0 + p.y;
			// n and T are multiples of 4: a quad is wholly in or out.
			rb4[r] = k < pc.C && n < pc.T ? vec4(scrh4[(vRow + k * pc.T + n) / 4u]) : vec4(0.0);
		}
		return;
	}
	[[unroll]] for (uint r = 0; r < RB; r++) {
		uvec2 p = gemmPosB(t, r);
		uint k = kt * BK + p.x, n = tileN0 + p.y;
		rb[r] = k < pc.C && n < pc.T ? float(scrh[vRow + k * pc.T + n]) : 0.0;
	}
}

void gemmStoreC(uint m, uint n, float v) {
	m += tileM0;
	n += tileN0;
	if (m < pc.M && n < pc.T) scr[xRow + m * pc.T + n] = v;
}

void main() {
	uint xi = gl_WorkGroupID.z;
	tileM0 = gl_WorkGroupID.y * BM;
	tileN0 = gl_WorkGroupID.x * BN;
	uRow = SCR_PER_SLOT * pc.uBase + xi * pc.C * pc.M;
	vRow = SCR_PER_SLOT * pc.vBase + xi * pc.C * pc.T;
	xRow = pc.xBase + xi * pc.M * pc.T;
	gemmRun(max((pc.C + BK - 1u) / BK, 1u));
	gemmEpilogue();
}
