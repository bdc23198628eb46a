#version 450
// The weight (and bias) gradient of a depthwise convolution: for output
// channel c (the workgroup's x) and split s (its y), over the batch images
// [s*bChunk, min(batches, (s+1)*bChunk)) and the pixels (x, y) of the dy
// region:
//   outW[wBase + (s*channels + c)*KHW + tap] = sum dy(b, c, x, y) *
//       in(b, c/MULT, first + (x*SX, y*SY) + tap)         (0 outside the input)
//   outB[bBase + s*channels + c] = sum dy(b, c, x, y)     (BIASGRAD)
// Each invocation adds its items (t, t + T, ...) in order, then a tree
// adds the invocations per tap: a fixed order, no atomics. With one split
// these are the gradients, else convolution_reduce.comp adds the splits.
// vkmps:variant f16 -DVKMPS_F16
#include "convolution_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 14) const bool BIASGRAD = false;
layout(constant_id = 16) const int MULT = 1;

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
	uint pixels = uint(pc.dySize.x * pc.dySize.y);
	uint b0 = s * pc.bChunk;
	uint b1 = min(pc.batches, b0 + pc.bChunk);
	uint items = b1 > b0 ? (b1 - b0) * pixels : 0u; // an empty split writes 0
	float acc[KHW];
	[[unroll]] for (uint r = 0; r < KHW; r++) acc[r] = 0.0;
	float accB = 0.0;
	uint cc = pc.c0 + c;
	for (uint i = t; i < items; i += gl_WorkGroupSize.x) {
		uint b = b0 + i / pixels, p = i % pixels;
		ivec2 q = ivec2(p % uint(pc.dySize.x), p / uint(pc.dySize.x));
		float d = LOAD(dy[pc.dyBase + b * pc.dyBatch + cc * pc.dyPlane + uint(pc.dyOrigin.y + q.y) * pc.dyStride + uint(pc.dyOrigin.x + q.x)]);
		accB += d;
		ivec2 s0 = pc.first + q * ivec2(SX, SY);
		uint base = pc.xBase + b * pc.xBatch + (cc / uint(MULT)) * pc.xPlane;
		[[unroll]] for (uint r = 0; r < KHW; r++) {
			ivec2 e = s0 + convTap(r);
			bool ok = uint(e.x) < uint(pc.xSize.x) && uint(e.y) < uint(pc.xSize.y);
			float v = ok ? LOAD(x[base + uint(clamp(e.y, 0, pc.xSize.y - 1)) * pc.xStride + uint(clamp(e.x, 0, pc.xSize.x - 1))]) : 0.0;
			acc[r] = fma(d, v, acc[r]);
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
