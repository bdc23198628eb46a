#version 450
// The bias gradient of the convolution family: for channel c (the
// workgroup's x) and split s (its y), the sum of dy over channel c of the
// batch images [s*bChunk, min(batches, (s+1)*bChunk)) and the pixels of
// the dy region, written to out[outBase + s*channels + c]. With one split
// out is the bias gradient, else convolution_reduce.comp adds the splits.
//
// The items of a split are its values in order (batch image, row,
// column), or with QUADS its aligned quads of 4 values (ops sets QUADS
// where the region is whole rows, so that a plane's region is contiguous,
// and it, dyBase, dyBatch and dyPlane are multiples of 4 values; a quad
// adds as (v.x + v.y) + (v.z + v.w)). Invocation t adds items t, t + T,
// ... (T invocations) in order, stepping its (image, row, column) or
// (image, quad) position by T items without divisions; then a tree adds
// the invocations: a fixed order, no atomics, the same sums on every run.
// vkmps:variant f16 -DVKMPS_F16
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 31) const bool QUADS = false;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 0) readonly buffer Dy4 { ELEM4 dy4[]; };
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
	const uint T = gl_WorkGroupSize.x;
	uint t = gl_LocalInvocationID.x, c = gl_WorkGroupID.x, s = gl_WorkGroupID.y;
	uint w = uint(pc.dySize.x), h = uint(pc.dySize.y), pixels = w * h;
	uint b0 = s * pc.bChunk;
	uint b1 = min(pc.batches, b0 + pc.bChunk); // an empty split writes 0
	// The region's first value of batch image 0.
	uint first = pc.dyBase + c * pc.dyPlane + uint(pc.dyOrigin.y) * pc.dyStride + uint(pc.dyOrigin.x);
	float sum = 0.0;
	if (QUADS) {
		uint q4 = pixels / 4u; // quads per image
		uint db = T / q4, dq = T % q4;
		uint b = b0 + t / q4, q = t % q4;
		while (b < b1) {
			vec4 v = LOAD4(dy4[(first + b * pc.dyBatch) / 4u + q]);
			sum += (v.x + v.y) + (v.z + v.w);
			q += dq;
			b += db;
			if (q >= q4) {
				q -= q4;
				b++;
			}
		}
	} else if (pixels > 0u) {
		uint dp = T % pixels, sy = dp / w, sx = dp % w, db = T / pixels;
		uint b = b0 + t / pixels, p = t % pixels, y = p / w, x = p % w;
		while (b < b1) {
			sum += LOAD(dy[first + b * pc.dyBatch + y * pc.dyStride + x]);
			x += sx;
			y += sy;
			b += db;
			if (x >= w) {
				x -= w;
				y++;
			}
			if (y >= h) {
				y -= h;
				b++;
			}
		}
	}
	red[t] = sum;
	barrier();
	for (uint k = T / 2; k > 0; k >>= 1) {
		if (t < k) red[t] += red[t + k];
		barrier();
	}
	if (t == 0) outv[pc.outBase + s * pc.channels + c] = red[0];
}
