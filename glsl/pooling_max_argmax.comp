#version 450
// PoolingMax and DilatedPoolingMax that also record each window's argmax:
// in a gradient state (RecordArgmax, vkmps's addition foreseen by the
// MPSCNNPoolingMaxGradient notes), or, with WRITE_VALUES off, as the first
// pass of a max gradient that has no recorded argmax.
//
// The winner follows SPEC.md's rule, the same on every device: taps in
// row-major order, the first maximum wins, the first NaN beats everything;
// under EdgeZero outside taps read 0 and may win, under EdgeClamp they are
// skipped. Its code is the tap ky*KW + kx, or all ones (the AMBITS-bit
// sentinel) when an outside tap wins or the window has no tap.
//
// Layout: per plane, clip row j holds ceil(W/PER) words of PER = 32/AMBITS
// codes, the first pixel in the low bits. Each invocation computes one
// pixel (neighbouring invocations, neighbouring columns); the codes of a
// workgroup row meet in shared memory, where one invocation per word packs
// and writes it (no atomics, no 8/16-bit storage). Workgroups are 16 wide,
// a multiple of PER, so no word straddles two.
// vkmps:variant f16 -DVKMPS_F16
#include "pooling_common.glsl"

layout(constant_id = 11) const int AMBITS = 8;
layout(constant_id = 12) const bool WRITE_VALUES = true;

layout(std430, binding = 2) writeonly buffer Argmax { uint am[]; };

shared uint codes[gl_WorkGroupSize.x * gl_WorkGroupSize.y];

void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	uint code = MASK;
	Pixel p;
	if (pixelOf(p)) {
		// The maximum first (NaN aside), then the first tap equal to it, or
		// the first NaN: the same winner as comparing tap by tap with a
		// strict >, at one select per tap. Outside taps hold the edge mode's
		// value (0, or -inf under EdgeClamp, which then never wins).
		columns(p);
		float v[KH * KW];
		bool in_[KH * KW];
		float m = NEG_INF;
		bool nan = false;
		for (int ky = 0; ky < KH; ky++) {
			loadRowOutside(p, ky, CLAMP ? NEG_INF : 0.0);
			for (int kx = 0; kx < KW; kx++) {
				v[ky * KW + kx] = rowV[kx];
				in_[ky * KW + kx] = rowIn[kx];
				m = max(m, rowV[kx]);
				nan = nan || isnan(rowV[kx]);
			}
		}
		bool any = !CLAMP || anyTap(p);
		for (int t = KH * KW - 1; t >= 0; t--) {
			bool hit = nan ? isnan(v[t]) : (v[t] == m && (in_[t] || !CLAMP));
			code = hit ? (in_[t] ? uint(t) : MASK) : code;
		}
		code = any ? code : MASK;
		if (WRITE_VALUES) dst[p.dstIdx] = STORE_DST(any ? (nan ? quietNaN() : m) : 0.0);
	}
	uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
	codes[ly * gl_WorkGroupSize.x + lx] = code;
	barrier();
	uint wordsPerRow = gl_WorkGroupSize.x / uint(PER);
	uint rowWords = (uint(pc.clipSize.x) + uint(PER) - 1u) / uint(PER);
	uint col = gl_WorkGroupID.x * wordsPerRow + lx;
	uint y = gl_GlobalInvocationID.y;
	if (lx >= wordsPerRow || col >= rowWords || y >= uint(pc.clipSize.y)) return;
	uint word = 0u;
	for (int q = 0; q < PER; q++) word |= (codes[ly * gl_WorkGroupSize.x + lx * uint(PER) + uint(q)] & MASK) << uint(q * AMBITS);
	uint plane = gl_GlobalInvocationID.z;
	uint n = plane / pc.channels, c = plane % pc.channels;
	am[pc.amBase + n * pc.amBatch + c * pc.amPlane + y * rowWords + col] = word;
}
