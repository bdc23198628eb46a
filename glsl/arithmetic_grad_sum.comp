#version 450
// The second pass of the gradient reductions (ArithmeticGradient over
// broadcast axes, NeuronGradient's PReLU slopes): output o < count gets
// sum_{j < terms} partials[pBase + o*strideO + j*strideJ], added in order
// of j (the same bits on every run), and is stored at
// outBase + (o / perBatch)*batchStride + o % perBatch (channel views).
// vkmps:variant f16 -DVKMPS_F16
#include "elem.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Partials { float partials[]; };
layout(std430, binding = 1) writeonly buffer Out { ELEM outv[]; };

layout(push_constant) uniform Push {
	uint count;
	uint terms;
	uint pBase;
	uint strideO;
	uint strideJ;
	uint outBase;
	uint perBatch;
	uint batchStride;
} pc;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint o = gl_GlobalInvocationID.x; o < pc.count; o += stride) {
		float s = 0.0;
		uint p = pc.pBase + o * pc.strideO;
		for (uint j = 0u; j < pc.terms; j++) s += partials[p + j * pc.strideJ];
		uint n = o / pc.perBatch;
		outv[pc.outBase + n * pc.batchStride + (o - n * pc.perBatch)] = STORE(s);
	}
}
