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
// codes, the first pixel in the low bits. An invocation computes the PER
// pixels of one word (gl_GlobalInvocationID.x is the word's column), so it
// alone writes that word: no atomics, no 8/16-bit storage.
#include "pooling_common.glsl"

layout(constant_id = 11) const int AMBITS = 8;
layout(constant_id = 12) const bool WRITE_VALUES = true;

layout(std430, binding = 2) writeonly buffer Argmax { uint am[]; };

void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	uint col = gl_GlobalInvocationID.x;
	uint rowWords = (uint(pc.clipSize.x) + uint(PER) - 1u) / uint(PER);
	if (col >= rowWords || gl_GlobalInvocationID.y >= uint(pc.clipSize.y)) return;
	uint word = 0u;
	Pixel p;
	for (int q = 0; q < PER; q++) {
		uint code = MASK;
		int ox = int(col) * PER + q;
		if (ox < pc.clipSize.x) {
			uint plane = gl_GlobalInvocationID.z;
			p.o = ivec2(ox, int(gl_GlobalInvocationID.y));
			p.n = plane / pc.channels;
			p.c = plane % pc.channels;
			p.srcOff = pc.srcBase + p.n * pc.srcBatch + p.c * pc.srcPlane;
			ivec2 d = pc.clipOrigin + p.o;
			p.dstIdx = pc.dstBase + p.n * pc.dstBatch + p.c * pc.dstPlane + uint(d.y) * pc.dstWidth + uint(d.x);
			p.s = pc.offset + ivec2(SX, SY) * p.o - ivec2(KEX / 2, KEY / 2);
			columns(p);
			float m = 0.0;
			bool have = false;
			for (int ky = 0; ky < KH; ky++) {
				loadRow(p, ky);
				for (int kx = 0; kx < KW; kx++) {
					float v = rowV[kx]; // 0 outside
					bool take = (rowIn[kx] || !CLAMP) && (!have || (!isnan(m) && (isnan(v) || v > m)));
					m = take ? v : m;
					code = take ? (rowIn[kx] ? uint(ky * KW + kx) : MASK) : code;
					have = have || take;
				}
			}
			if (WRITE_VALUES) dst[p.dstIdx] = m;
		}
		word |= (code & MASK) << uint(q * AMBITS);
	}
	uint plane = gl_GlobalInvocationID.z;
	uint n = plane / pc.channels, c = plane % pc.channels;
	am[pc.amBase + n * pc.amBatch + c * pc.amPlane + gl_GlobalInvocationID.y * rowWords + col] = word;
}
