#version 450
// view_range: the least and greatest finite values of src[0, count), as
// order-preserving keys, folded into range[slot] (atomicMin) and
// range[4 + slot] (atomicMax). The caller fills range[0..3] with
// 0xFFFFFFFF and range[4..7] with 0 first; a slot where no value is finite
// keeps them. `vkmps view` normalises its panels with it.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) buffer Range { uint range[]; };

layout(push_constant) uniform Push {
	uint count;
	uint slot; // 0..3
} pc;

shared uint lo[64];
shared uint hi[64];

// key maps floats to uints of the same order: negative values bit-flipped,
// others with the sign bit set.
uint key(float f) {
	uint b = floatBitsToUint(f);
	return (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
}

void main() {
	uint l = 0xFFFFFFFFu, h = 0u;
	uint stride = gl_NumWorkGroups.x * 64u;
	for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
		float v = src[i];
		if (isnan(v) || isinf(v)) {
			continue;
		}
		uint k = key(v);
		l = min(l, k);
		h = max(h, k);
	}
	uint t = gl_LocalInvocationID.x;
	lo[t] = l;
	hi[t] = h;
	barrier();
	for (uint s = 32u; s > 0u; s >>= 1) {
		if (t < s) {
			lo[t] = min(lo[t], lo[t + s]);
			hi[t] = max(hi[t], hi[t + s]);
		}
		barrier();
	}
	if (t == 0u) {
		atomicMin(range[pc.slot], lo[0]);
		atomicMax(range[4u + pc.slot], hi[0]);
	}
}
