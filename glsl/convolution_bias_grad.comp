#version 450
// The bias gradient of the convolution family: for channel c (the
// workgroup's x) and split s (its y), the sum of dy over channel c of the
// batch images [s*bChunk, min(batches, (s+1)*bChunk)) and the pixels of
// the dy region, written to out[outBase + s*channels + c]. Each invocation
// adds its items (i = t, t + T, ...) in order, then a tree adds the
// invocations: a fixed order, no atomics. With one split out is the bias
// gradient, else convolution_reduce.comp adds the splits.
// vkmps:variant f16 -DVKMPS_F16
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 1) writeonly buffer Out { float outv[]; };

layout(push_constant) uniform Push {
	ivec2 dyOrigin; // first pixel of the dy region
	ivec2 dySize;   // its W x H
	uint dyStride, dyBase, dyBatch, dyPlane;
	uint channels, batches, bChunk;
	uint outBase;
} pc;

shared float red[gl_WorkGroupSize.x];

void main() {
	uint t = gl_LocalInvocationID.x, c = gl_WorkGroupID.x, s = gl_WorkGroupID.y;
	uint pixels = uint(pc.dySize.x * pc.dySize.y);
	uint b0 = s * pc.bChunk;
	uint b1 = min(pc.batches, b0 + pc.bChunk);
	uint items = b1 > b0 ? (b1 - b0) * pixels : 0u; // an empty split writes 0
	float sum = 0.0;
	for (uint i = t; i < items; i += gl_WorkGroupSize.x) {
		uint b = b0 + i / pixels, p = i % pixels;
		uint x = p % uint(pc.dySize.x), y = p / uint(pc.dySize.x);
		sum += LOAD(dy[pc.dyBase + b * pc.dyBatch + c * pc.dyPlane + uint(pc.dyOrigin.y + int(y)) * pc.dyStride + uint(pc.dyOrigin.x + int(x))]);
	}
	red[t] = sum;
	barrier();
	for (uint k = gl_WorkGroupSize.x / 2; k > 0; k >>= 1) {
		if (t < k) red[t] += red[t + k];
		barrier();
	}
	if (t == 0) outv[pc.outBase + s * pc.channels + c] = red[0];
}
