#version 450
// vkmps:variant f16 -DVKMPS_F16
// binary_convolution_float (MPSCNNBinaryConvolution, type BinaryWeights):
// the input is not binarized; per destination pixel and output channel o
//   S = sum over taps and input channels c of x~ * sgn(w),
//   x~ = (x + inBias[c]) * inScale[c]   (x = 0 at taps outside the source)
//   y = neuron(scale[o] * beta * S + bias[o])
// summed in float32, taps in row-major order, channels ascending within a
// tap. beta = 1, or (BETA) the mean of A over the taps from the pack pass.
// One invocation per destination pixel (x) and output channel (workgroup y).
#include "binary_convolution_common.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 1) readonly buffer Weights { uint weights[]; };
layout(std430, binding = 2) readonly buffer Params { float params[]; };
layout(std430, binding = 3) readonly buffer Packed { uint packed[]; };
layout(std430, binding = 4) writeonly buffer Dst { ELEM dst[]; };

#include "neuron.glsl"

void main() {
	uint o = gl_WorkGroupID.y;
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	uint per = uint(pc.clipW * pc.clipH);
	for (uint q = gl_GlobalInvocationID.x; q < pc.pixels; q += stride) {
		uint z = q / per, r = q - z * per;
		int oy = int(r / uint(pc.clipW)), ox = int(r % uint(pc.clipW));
		ivec2 org = ivec2(pc.firstX + ox * SX, pc.firstY + oy * SY);
		float s = 0.0, asum = 0.0;
		for (int ky = 0; ky < KH; ky++) {
			for (int kx = 0; kx < KW; kx++) {
				ivec2 p = org + ivec2(kx * DX, ky * DY);
				bool inside = p.x >= 0 && p.x < pc.srcW && p.y >= 0 && p.y < pc.srcH;
				uint sbase = pc.srcBase + z * pc.srcBatch + uint(inside ? p.y * pc.srcW + p.x : 0);
				uint wbase = (o * uint(KH * KW) + uint(ky * KW + kx)) * WORDS;
				for (uint c = 0u; c < CHANNELS; c++) {
					float x = inside ? LOAD(src[sbase + c * pc.srcPlane]) : 0.0;
					float v = (x + params[INBIAS + c]) * params[INSCALE + c];
					bool plus = ((weights[wbase + (c >> 5u)] >> (c & 31u)) & 1u) != 0u;
					s += plus ? v : -v;
				}
				if (BETA != 0) {
					asum += inside ? uintBitsToFloat(packed[pc.aBase + z * uint(pc.srcW * pc.srcH) + uint(p.y * pc.srcW + p.x)]) : params[PADA];
				}
			}
		}
		float beta = BETA != 0 ? asum / float(KH * KW) : 1.0;
		float y = params[SCALE + o] * beta * s + params[OUT + o];
		uint d = pc.dstBase + z * pc.dstBatch + o * pc.dstPlane + uint(pc.dstY0 + oy) * pc.dstW + uint(pc.dstX0 + ox);
		dst[d] = STORE(neuronForward(y, o));
	}
}
