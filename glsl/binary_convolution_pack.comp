#version 450
// vkmps:variant f16 -DVKMPS_F16
// binary_convolution_pack (MPSCNNBinaryConvolution, first pass): binarizes
// the source of a binary convolution. For every pixel p of the dispatch's
// batch images, with x~ = (x + inBias[c]) * inScale[c] over the I input
// channels:
//   packed[p*WORDS + w] bit b = (x~ of channel 32w+b) >= 0   (0 beyond I)
//   packed[aBase + p]         = float bits of sum_c |x~| / I  (BETA only)
// so the convolution reads WORDS contiguous words per tap. x~ is computed
// in float32 (add, then multiply: both correctly rounded), as the CPU
// reference does; a NaN x~ binarizes to 0 (-1).
#include "elem.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint CHANNELS = 1; // I
layout(constant_id = 2) const uint WORDS = 1;    // ceil(I/32)
layout(constant_id = 3) const int BETA = 0;
layout(constant_id = 4) const uint OUT = 1;      // O: the parameter layout

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 1) readonly buffer Params { float params[]; };
layout(std430, binding = 2) writeonly buffer Packed { uint packed[]; };

layout(push_constant) uniform Push {
	uint pixels;   // batch images * H * W of the dispatch
	uint plane;    // H * W
	uint srcBase;  // element of (batch 0, first channel read, 0, 0)
	uint srcBatch; // elements per source batch image
	uint aBase;    // word of A for pixel 0
} pc;

// params: scale[O], bias[O], prelu[O], padA, inBias[I], inScale[I]
const uint IB = 3u * OUT + 1u;
const uint IS = IB + CHANNELS;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint p = gl_GlobalInvocationID.x; p < pc.pixels; p += stride) {
		uint n = p / pc.plane, px = p - n * pc.plane;
		uint base = pc.srcBase + n * pc.srcBatch + px;
		float asum = 0.0;
		for (uint w = 0u; w < WORDS; w++) {
			uint bits = 0u;
			uint c0 = w * 32u, c1 = min(c0 + 32u, CHANNELS);
			for (uint c = c0; c < c1; c++) {
				float v = (LOAD(src[base + c * pc.plane]) + params[IB + c]) * params[IS + c];
				if (v >= 0.0) bits |= 1u << (c - c0);
				if (BETA != 0) asum += abs(v);
			}
			packed[p * WORDS + w] = bits;
		}
		if (BETA != 0) packed[pc.aBase + p] = floatBitsToUint(asum / float(CHANNELS));
	}
}
