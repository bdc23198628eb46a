#version 450
// The tiled variant, for windows of more than 64 taps (see pooling_tiled.glsl;
// the "global" builds read taps directly, for tiles over shared memory).
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
// codes, the first pixel in the low bits. Codes go through shared memory so
// that one invocation writes each word (no atomics, no 8/16-bit storage);
// TW is a multiple of PER, so tiles never share a word.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant global -DPOOL_GLOBAL
// vkmps:variant globalf16 -DPOOL_GLOBAL -DVKMPS_F16
#include "pooling_tiled.glsl"

layout(constant_id = 11) const int AMBITS = 8;
layout(constant_id = 12) const bool WRITE_VALUES = true;

layout(std430, binding = 2) writeonly buffer Argmax { uint am[]; };

shared uint codes[TW * TH];

void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	Tile t;
	if (!tileOf(t)) return;
	loadTile(t, 0.0);
	for (uint i = gl_LocalInvocationIndex; i < uint(TW * TH); i += gl_WorkGroupSize.x) {
		int ox = int(i % uint(TW)), oy = int(i / uint(TW));
		uint code = MASK;
		if (pixelInClip(t, ox, oy)) {
			ivec2 s = windowStart(t, ox, oy);
			float m = 0.0;
			bool have = false;
			for (int ky = 0; ky < KH; ky++) {
				int y = s.y + ky * DY;
				bool yin = y >= 0 && y < pc.srcSize.y;
				for (int kx = 0; kx < KW; kx++) {
					int x = s.x + kx * DX;
					bool in_ = yin && x >= 0 && x < pc.srcSize.x;
					float v = tap(ox, oy, kx, ky); // 0 outside
					bool take = (in_ || !CLAMP) && (!have || (!isnan(m) && (isnan(v) || v > m)));
					m = take ? v : m;
					code = take ? (in_ ? uint(ky * KW + kx) : MASK) : code;
					have = have || take;
				}
			}
			if (WRITE_VALUES) dst[dstIndex(t, ox, oy)] = STORE_DST(m);
		}
		codes[i] = code;
	}
	barrier();
	uint rowWords = (uint(pc.clipSize.x) + uint(PER) - 1u) / uint(PER);
	uint plane = pc.amBase + t.n * pc.amBatch + t.c * pc.amPlane;
	for (uint i = gl_LocalInvocationIndex; i < uint(TH * (TW / PER)); i += gl_WorkGroupSize.x) {
		int oy = int(i / uint(TW / PER)), w = int(i % uint(TW / PER));
		uint col = uint(t.x0 / PER + w);
		if (t.y0 + oy >= pc.clipSize.y || col >= rowWords) continue;
		uint word = 0u;
		for (int p = 0; p < PER; p++) word |= (codes[oy * TW + w * PER + p] & MASK) << uint(p * AMBITS);
		am[plane + uint(t.y0 + oy) * rowWords + col] = word;
	}
}
