#version 450
// The weight (and bias) gradient of a depthwise convolution: for output
// channel c (the workgroup's x) and split s (its y), over the batch images
// [s*bChunk, min(batches, (s+1)*bChunk)) and the pixels (x, y) of the dy
// region:
//   outW[wBase + (s*channels + c)*KHW + tap] = sum dy(b, c, x, y) *
//       in(b, c/MULT, first + (x*SX, y*SY) + tap)         (0 outside the input)
//   outB[bBase + s*channels + c] = sum dy(b, c, x, y)     (BIASGRAD)
// An item is a strip of OX consecutive dy pixels of one row: its
// invocation loads the OX values of dy once and each input row the
// windows touch once, the SEG columns they span (as
// convolution_depthwise.comp does), so that a dy value costs one load and
// an input value about KH / OX * SEG / OX instead of KHW loads and their
// index arithmetic. Each invocation adds its items (t, t + T, ...) in
// order, then a tree adds the invocations per tap: a fixed order, no
// atomics. With one split these are the gradients, else
// convolution_reduce.comp adds the splits.
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 14) const bool BIASGRAD = false;
layout(constant_id = 16) const int MULT = 1;
layout(constant_id = 12) const int OX = 4; // dy pixels per item

const int KEX = (KW - 1) * DX + 1;
const int SEG = (OX - 1) * SX + KEX; // input columns an item spans

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 1) readonly buffer X { ELEM x[]; };
layout(std430, binding = 2) writeonly buffer OutW { float outW[]; };
layout(std430, binding = 3) writeonly buffer OutB { float outB[]; };

layout(push_constant) uniform Push {
	ivec2 xSize, first, dyOrigin, dySize;
	uint dyStride, xStride;
	uint dyBase, dyBatch, dyPlane;
	uint xBase, xBatch, xPlane;
	uint channels, batches, bChunk;
	uint wBase, bBase;
	uint c0; // channel of c = 0 in dy's and the input's channel numbering
} pc;

// One row of partial sums per tap (and one for the bias), reduced
// together: log2(T) barriers in all.
const uint ROWS = KHW + 1;
shared float red[ROWS * gl_WorkGroupSize.x];

void main() {
	uint t = gl_LocalInvocationID.x, c = gl_WorkGroupID.x, s = gl_WorkGroupID.y;
	uint strips = (uint(pc.dySize.x) + uint(OX) - 1u) / uint(OX), rows = uint(pc.dySize.y);
	uint b0 = s * pc.bChunk;
	uint b1 = min(pc.batches, b0 + pc.bChunk);
	uint items = b1 > b0 ? (b1 - b0) * rows * strips : 0u; // an empty split writes 0
	float acc[KHW];
	[[unroll]] for (uint r = 0; r < KHW; r++) acc[r] = 0.0;
	float accB = 0.0;
	uint cc = pc.c0 + c;
	for (uint i = t; i < items; i += gl_WorkGroupSize.x) {
		uint row = i / strips, bi = row / rows;
		uint b = b0 + bi, y = row - bi * rows;
		int x0 = int(i - row * strips) * OX;
		uint dyAt = pc.dyBase + b * pc.dyBatch + cc * pc.dyPlane + uint(pc.dyOrigin.y + int(y)) * pc.dyStride + uint(pc.dyOrigin.x + x0);
		float d[OX];
		[[unroll]] for (int ox = 0; ox < OX; ox++) {
			d[ox] = x0 + ox < pc.dySize.x ? LOAD(dy[dyAt + uint(ox)]) : 0.0;
			accB += d[ox];
		}
		ivec2 s0 = pc.first + ivec2(x0 * SX, int(y) * SY); // input position of the first tap
		uint base = pc.xBase + b * pc.xBatch + (cc / uint(MULT)) * pc.xPlane;
		int col[SEG];
		bool colIn[SEG];
		[[unroll]] for (int e = 0; e < SEG; e++) {
			int q = s0.x + e;
			colIn[e] = uint(q) < uint(pc.xSize.x);
			col[e] = clamp(q, 0, pc.xSize.x - 1);
		}
		[[unroll]] for (int ky = 0; ky < KH; ky++) {
			int q = s0.y + ky * DY;
			if (uint(q) >= uint(pc.xSize.y)) continue;
			uint at = base + uint(q) * pc.xStride;
			float v[SEG];
			[[unroll]] for (int e = 0; e < SEG; e++) v[e] = colIn[e] ? LOAD(x[at + uint(col[e])]) : 0.0;
			[[unroll]] for (int kx = 0; kx < KW; kx++) {
				[[unroll]] for (int ox = 0; ox < OX; ox++) acc[ky * KW + kx] = fma(d[ox], v[ox * SX + kx * DX], acc[ky * KW + kx]);
			}
		}
	}
	const uint T = gl_WorkGroupSize.x;
	[[unroll]] for (uint r = 0; r < KHW; r++) red[r * T + t] = acc[r];
	red[KHW * T + t] = accB;
	barrier();
	for (uint k = T / 2; k > 0; k >>= 1) {
		if (t < k) {
			[[unroll]] for (uint r = 0; r < ROWS; r++) red[r * T + t] += red[r * T + t + k];
		}
		barrier();
	}
	if (t == 0) {
		[[unroll]] for (uint r = 0; r < KHW; r++) outW[pc.wBase + (s * pc.channels + c) * KHW + r] = red[r * T];
		if (BIASGRAD) outB[pc.bBase + s * pc.channels + c] = red[KHW * T];
	}
}
