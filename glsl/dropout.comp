#version 450
// Dropout (MPSCNNDropout), training: y = keep ? x * scale : 0 per element,
// with the mask of dropout_common.glsl for draw = counter[0] (the
// kernel's draw counter, advanced by dropout_advance.comp after this
// dispatch). A dropped element is +0 whatever x holds. With MASK_OUT the
// mask bits are written too, one word per 32-column group by its first
// lane (lanes pool their 4 bits in shared memory); with a broadcast mask
// only the group that owns the word (channel 0, row 0 or column group 0
// on the broadcast axes) writes it.
// vkmps:variant f16 -DVKMPS_F16
#include "dropout_common.glsl"

layout(constant_id = 5) const bool MASK_OUT = true;

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 0) readonly buffer Src4 { ELEM4 src4[]; };
layout(std430, binding = 1) writeonly buffer Dst { ELEM dst[]; };
layout(std430, binding = 1) writeonly buffer Dst4 { ELEM4 dst4[]; };
layout(std430, binding = 2) writeonly buffer Mask { uint mask[]; };
layout(std430, binding = 3) readonly buffer Counter { uint counter[]; };

shared uint bitsOf[gl_WorkGroupSize.x];

void main() {
	Lane l = laneOf();
	uint bits = 0u;
	if (l.live) {
		uvec4 r = philox(uvec4(SX * (l.x0 >> 2), l.my, l.plane, counter[0]), uvec2(pc.seedLo, pc.seedHi));
		bvec4 keep = SX == 1u ? lessThan(r, uvec4(pc.threshold)) : bvec4(r.x < pc.threshold);
		if (l.x0 < pc.w) {
			if (VEC) {
				vec4 v = LOAD4(src4[(l.src + l.x0) / 4u]);
				dst4[(l.dst + l.x0) / 4u] = STORE4(mix(vec4(0.0), v * pc.scale, keep));
			} else {
				[[unroll]] for (uint t = 0u; t < 4u; t++) {
					if (l.x0 + t < pc.w) {
						dst[l.dst + l.x0 + t] = STORE(keep[t] ? LOAD(src[l.src + l.x0 + t]) * pc.scale : 0.0);
					}
				}
			}
		}
		if (SX == 0u) {
			bits = keep.x ? 1u : 0u;
		} else {
			[[unroll]] for (uint t = 0u; t < 4u; t++) {
				if (keep[t] && l.x0 + t < pc.w) bits |= 1u << (4u * l.lane + t);
			}
		}
	}
	if (!MASK_OUT) return;
	bitsOf[gl_LocalInvocationID.x] = bits;
	barrier();
	if (l.live && l.lane == 0u && l.writer) {
		uint word = bits;
		if (SX == 1u) {
			[[unroll]] for (uint k = 1u; k < 8u; k++) word |= bitsOf[gl_LocalInvocationID.x + k];
		}
		mask[l.word] = word;
	}
}
