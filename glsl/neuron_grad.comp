#version 450
// NeuronGradient (MPSCNNNeuronGradient): dx[i] = dy[i] * f'(src[i]) for
// i < count, src the forward's source, f' neuronDerivative of neuron.glsl
// (specialization constants 20..23; PReLU reads Slopes). With SUM_DY,
// dx[i] = (dy[i] + dy2[i]) * f'(src[i]): the sum of two contributions to
// the result's gradient, added in float32 and not stored. Runs, quads
// and the grid-stride loop as neuron.comp.
// vkmps:variant f16 -DVKMPS_F16
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 0) readonly buffer Dy4 { ELEM4 dy4[]; };
layout(std430, binding = 1) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 1) readonly buffer Src4 { ELEM4 src4[]; };
layout(std430, binding = 2) writeonly buffer Dx { ELEM dx[]; };
layout(std430, binding = 2) writeonly buffer Dx4 { ELEM4 dx4[]; };
layout(std430, binding = 3) readonly buffer Slopes { float slopes[]; };
layout(std430, binding = 4) readonly buffer Dy2 { ELEM dy2[]; };
layout(std430, binding = 4) readonly buffer Dy24 { ELEM4 dy24[]; };
layout(constant_id = 1) const bool SUM_DY = false;

layout(push_constant) uniform Push {
	uint count;
	uint dyBase;
	uint srcBase;
	uint dxBase;
	uint slopeBase;
	uint plane;
	uint channels;
	uint chan0;
	uint vec4s;
	uint dy2Base;
} pc;

#define NEURON_PRELU(c) slopes[pc.slopeBase + (c)]
#include "neuron.glsl"

uint channelOf(uint i) {
	return NEURON == NEURON_PRELU_TYPE ? (pc.chan0 + i / pc.plane) % pc.channels : 0u;
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	uint g = gl_GlobalInvocationID.x;
	uint done = 0u;
	if (pc.vec4s != 0u) {
		uint quads = pc.count / 4u, a = pc.dyBase / 4u, s = pc.srcBase / 4u, d = pc.dxBase / 4u, a2 = pc.dy2Base / 4u;
		for (uint q = g; q < quads; q += stride) {
			vec4 gy = LOAD4(dy4[a + q]);
			if (SUM_DY) gy += LOAD4(dy24[a2 + q]);
			vec4 x = LOAD4(src4[s + q]);
			vec4 r;
			[[unroll]] for (uint k = 0u; k < 4u; k++) r[k] = gy[k] * neuronDerivative(x[k], channelOf(4u * q + k));
			dx4[d + q] = STORE4(r);
		}
		done = quads * 4u;
	}
	for (uint i = done + g; i < pc.count; i += stride) {
		float gy = LOAD(dy[pc.dyBase + i]);
		if (SUM_DY) gy += LOAD(dy2[pc.dy2Base + i]);
		dx[pc.dxBase + i] = STORE(gy * neuronDerivative(LOAD(src[pc.srcBase + i]), channelOf(i)));
	}
}
