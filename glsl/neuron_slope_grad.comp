#version 450
// NeuronGradient's PReLU slope gradient, first pass: for channel c of the
// part and slice j < slices, the sum over the slice's values t in
// [j*chunk, min((j+1)*chunk, total)) of dy * (x < 0 ? x : 0), where t runs
// over the part's batch images and pixels of channel c (t = n*plane + p).
// One workgroup (x = j, y = c) per slice: each invocation adds a strided
// subset in order, then a tree in shared memory, so the sum is the same
// bits on every run. arithmetic_grad_sum.comp adds the slices.
// vkmps:variant f16 -DVKMPS_F16
#include "elem.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 1) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 2) writeonly buffer Partials { float partials[]; };

layout(push_constant) uniform Push {
	uint total;      // values per channel in the part: batches * plane
	uint chunk;      // values per slice
	uint plane;
	uint dyBase;     // element index of the part's first plane
	uint srcBase;
	uint dyBatch;    // elements between batch images
	uint srcBatch;
	uint outBase;    // partials index of the part's channel 0, slice 0
	uint outChannel; // partials between channels
} pc;

shared float part[gl_WorkGroupSize.x];

void main() {
	uint lid = gl_LocalInvocationID.x, j = gl_WorkGroupID.x, c = gl_WorkGroupID.y;
	uint start = j * pc.chunk, end = min(start + pc.chunk, pc.total);
	float s = 0.0;
	for (uint t = start + lid; t < end; t += gl_WorkGroupSize.x) {
		uint n = t / pc.plane, p = t - n * pc.plane;
		float x = LOAD(src[pc.srcBase + n * pc.srcBatch + c * pc.plane + p]);
		float g = LOAD(dy[pc.dyBase + n * pc.dyBatch + c * pc.plane + p]);
		s += x < 0.0 ? g * x : 0.0;
	}
	part[lid] = s;
	barrier();
	for (uint k = gl_WorkGroupSize.x / 2u; k > 0u; k >>= 1) {
		if (lid < k) part[lid] += part[lid + k];
		barrier();
	}
	if (lid == 0u) partials[pc.outBase + c * pc.outChannel + j] = part[0];
}
