#version 450
// DropoutGradient (MPSCNNDropoutGradient): dx = keep ? dy * scale : 0 per
// element, keep read from the mask bits the forward stored in the gradient
// state (dropout_common.glsl's layout). A dropped element is +0.
// vkmps:variant f16 -DVKMPS_F16
#include "dropout_common.glsl"

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 0) readonly buffer Dy4 { ELEM4 dy4[]; };
layout(std430, binding = 1) writeonly buffer Dx { ELEM dx[]; };
layout(std430, binding = 1) writeonly buffer Dx4 { ELEM4 dx4[]; };
layout(std430, binding = 2) readonly buffer Mask { uint mask[]; };

void main() {
	Lane l = laneOf();
	if (!l.live || l.x0 >= pc.w) return;
	uint word = mask[l.word];
	bvec4 keep;
	if (SX == 0u) {
		keep = bvec4((word & 1u) != 0u);
	} else {
		uvec4 b = (uvec4(word) >> (uvec4(4u * l.lane) + uvec4(0u, 1u, 2u, 3u))) & 1u;
		keep = notEqual(b, uvec4(0u));
	}
	if (VEC) {
		vec4 g = LOAD4(dy4[(l.src + l.x0) / 4u]);
		dx4[(l.dst + l.x0) / 4u] = STORE4(mix(vec4(0.0), g * pc.scale, keep));
		return;
	}
	[[unroll]] for (uint t = 0u; t < 4u; t++) {
		if (l.x0 + t < pc.w) dx[l.dst + l.x0 + t] = STORE(keep[t] ? LOAD(dy[l.src + l.x0 + t]) * pc.scale : 0.0);
	}
}
