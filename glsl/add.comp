#version 450
// add (MPSCNNAdd with scales): d[i] = alpha*a[i] + beta*b[i] for i < count,
// over one contiguous run of each image.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer D { float d[]; };

layout(push_constant) uniform Push {
	uint count;
	uint aBase;
	uint bBase;
	uint dBase;
	float alpha;
	float beta;
} pc;

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
		d[pc.dBase + i] = pc.alpha * a[pc.aBase + i] + pc.beta * b[pc.bBase + i];
	}
}
