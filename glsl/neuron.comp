#version 450
// Neuron (MPSCNNNeuron): dst[i] = f(src[i]) for i < count, over one run of
// values of each image (whole batch images, or channels of one batch
// image), f the neuron of neuron.glsl fixed by its specialization constants
// (IDs 20..23). PReLU reads channel c's slope from Slopes (float32).
// Where every base is a multiple of 4 (vec4s) the run moves in quads and
// the last count % 4 values one by one. A grid-stride loop covers any count.
// vkmps:variant f16 -DVKMPS_F16
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 0) readonly buffer Src4 { ELEM4 src4[]; };
layout(std430, binding = 1) writeonly buffer Dst { ELEM dst[]; };
layout(std430, binding = 1) writeonly buffer Dst4 { ELEM4 dst4[]; };
layout(std430, binding = 2) readonly buffer Slopes { float slopes[]; };

layout(push_constant) uniform Push {
	uint count;     // values in the run
	uint srcBase;   // element index of the run's first value in the bound range
	uint dstBase;
	uint slopeBase; // element index of channel 0's slope
	uint plane;     // H*W
	uint channels;  // C: channels per batch image of the run's images
	uint chan0;     // channel of the run's first value
	uint vec4s;     // 1: bases are multiples of 4
} pc;

#define NEURON_PRELU(c) slopes[pc.slopeBase + (c)]
#include "neuron.glsl"

// channelOf is the channel of the run's value i (PReLU only; 0 otherwise,
// so the division folds away once NEURON is specialised).
uint channelOf(uint i) {
	return NEURON == NEURON_PRELU_TYPE ? (pc.chan0 + i / pc.plane) % pc.channels : 0u;
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	uint g = gl_GlobalInvocationID.x;
	uint done = 0u;
	if (pc.vec4s != 0u) {
		uint quads = pc.count / 4u, s = pc.srcBase / 4u, d = pc.dstBase / 4u;
		for (uint q = g; q < quads; q += stride) {
			vec4 x = LOAD4(src4[s + q]);
			vec4 y;
			[[unroll]] for (uint k = 0u; k < 4u; k++) y[k] = neuronForward(x[k], channelOf(4u * q + k));
			dst4[d + q] = STORE4(y);
		}
		done = quads * 4u;
	}
	for (uint i = done + g; i < pc.count; i += stride) {
		dst[pc.dstBase + i] = STORE(neuronForward(LOAD(src[pc.srcBase + i]), channelOf(i)));
	}
}
