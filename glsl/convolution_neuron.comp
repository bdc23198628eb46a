#version 450
// The fused neuron of a convolution-family forward that keeps its
// pre-activation z for the gradient (EncodeWithState with a neuron), and
// the first step of that gradient:
//   MODE 0: out = neuron(a)          (a = z, out = the destination region)
//   MODE 1: out = a * neuron'(z)     (a = dy region, out = dz)
// Every operand is a region of an image or a dense scratch: element
// (b, c, x, y), b < batches, c < channels, (x, y) < size, of region R lies
// at R.base + b*R.batch + c*R.plane + (R.origin.y + y)*R.stride + R.origin.x + x.
// vkmps:variant f16 -DVKMPS_F16
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int MODE = 0;

layout(std430, binding = 0) readonly buffer A { ELEM a[]; };
layout(std430, binding = 1) readonly buffer Z { ELEM z[]; };
layout(std430, binding = 2) readonly buffer Prelu { float prelu[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM outv[]; };

layout(push_constant) uniform Push {
	ivec2 size;       // W x H of every region
	ivec2 aOrigin, outOrigin;
	uint aStride, aBase, aBatch, aPlane;
	uint outStride, outBase, outBatch, outPlane;
	uint zBase;       // z: dense batches x channels x H x W
	uint channels, batches;
	uint preluBase;
	uint chanBase;    // neuron channel of c = 0 (PReLU slope index)
} pc;

#define NEURON_PRELU(c) prelu[pc.preluBase + (c)]
#include "neuron.glsl"

void main() {
	uint plane = uint(pc.size.x * pc.size.y);
	uint total = pc.batches * pc.channels * plane;
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
		uint p = i % plane, c = (i / plane) % pc.channels, b = i / plane / pc.channels;
		uint x = p % uint(pc.size.x), y = p / uint(pc.size.x);
		float v = LOAD(a[pc.aBase + b * pc.aBatch + c * pc.aPlane + uint(pc.aOrigin.y + int(y)) * pc.aStride + uint(pc.aOrigin.x + int(x))]);
		uint ch = pc.chanBase + c;
		float r = MODE == 0 ? neuronForward(v, ch) : v * neuronDerivative(LOAD(z[pc.zBase + i]), ch);
		outv[pc.outBase + b * pc.outBatch + c * pc.outPlane + uint(pc.outOrigin.y + int(y)) * pc.outStride + uint(pc.outOrigin.x + int(x))] = STORE(r);
	}
}
