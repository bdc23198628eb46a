#version 450
// PoolingMax and DilatedPoolingMax that also record each window's argmax in
// a gradient state (vkmps's addition to MPS, foreseen by the
// MPSCNNPoolingMaxGradient notes). Values are pooling_max.comp's.
//
// The argmax buffer holds, per plane (batch image n, channel c of the
// dispatch), the clip's pixels in row-major order, 32/AMBITS per uint32 word
// (the first pixel in the low bits), each the winning tap ky*KW + kx or
// all ones (the AMBITS-bit sentinel) when an outside tap wins or there is
// none. Planes start on a word. One invocation computes the pixels of one
// word, so no two invocations write the same word: no atomics, and no 8- or
// 16-bit storage feature is needed.
#include "pooling_common.glsl"

layout(constant_id = 8) const int AMBITS = 8; // bits per index: 8, 16 or 32

layout(std430, binding = 2) writeonly buffer Argmax { uint am[]; };

void main() {
	const int PER = 32 / AMBITS;
	const uint MASK = 0xffffffffu >> (32 - AMBITS);
	uint j = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
	if (j >= pc.amPlane) return;
	uint plane = gl_GlobalInvocationID.z;
	uint n = plane / pc.channels, c = plane % pc.channels;
	uint so = pc.srcBase + n * pc.srcBatch + c * pc.srcPlane;
	uint db = pc.dstBase + n * pc.dstBatch + c * pc.dstPlane;
	uint w = uint(pc.clipSize.x);
	uint count = w * uint(pc.clipSize.y);
	uint word = 0u;
	for (int i = 0; i < PER; i++) {
		uint e = j * uint(PER) + uint(i);
		uint code = MASK;
		if (e < count) {
			ivec2 ij = ivec2(int(e % w), int(e / w));
			int tap;
			float m = windowMax(so, windowStart(ij), tap);
			ivec2 d = pc.clipOrigin + ij;
			dst[db + uint(d.y) * pc.dstWidth + uint(d.x)] = m;
			if (tap >= 0) code = uint(tap);
		}
		word |= (code & MASK) << uint(i * AMBITS);
	}
	am[pc.amBase + n * pc.amBatch + c * pc.amPlane + j] = word;
}
