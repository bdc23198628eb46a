#version 450
// vkmps:variant f16 -DVKMPS_F16
// cross_channel_normalization (MPSCNNCrossChannelNormalization and its
// gradient; PyTorch's local_response_norm with k = delta): per pixel,
//   y_c = x_c * T_c^-beta,  T_c = delta + alpha/size * sum over q in
//   [c - size/2, c + (size-1)/2] (inside [0, C)) of x_q^2.
// MODE 0 writes y to Out. MODE 1 writes dx to Out:
//   dx_c = dy_c T_c^-beta - 2 alpha beta/size * x_c * sum over r in
//   [c - (size-1)/2, c + size/2] of dy_r x_r T_r^(-beta-1)
// computing each T_r again (no scratch; size^2 loads per value, from the
// cache). One invocation per pixel walks the channels: x is the pixel of
// the plane, y the batch image of the dispatch.
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int MODE = 0;

layout(push_constant) uniform Push {
	uint channels, plane, batches;
	uint xBase, xBatch, dyBase, dyBatch, oBase, oBatch;
	int size;
	float alphaOverSize, beta, delta;
} pc;

layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) readonly buffer DY { ELEM dy[]; };
layout(std430, binding = 2) writeonly buffer Out { ELEM outv[]; };

// denominator returns T_c of the pixel whose channel 0 is element base.
float denominator(uint base, int c) {
	int lo = max(c - pc.size / 2, 0), hi = min(c + (pc.size - 1) / 2, int(pc.channels) - 1);
	float s = 0.0;
	for (int q = lo; q <= hi; q++) {
		float v = LOAD(x[base + uint(q) * pc.plane]);
		s += v * v;
	}
	return pc.delta + pc.alphaOverSize * s;
}

void main() {
	uint p = gl_GlobalInvocationID.x, n = gl_GlobalInvocationID.y;
	if (p >= pc.plane || n >= pc.batches) return;
	uint xb = pc.xBase + n * pc.xBatch + p;
	uint yb = pc.dyBase + n * pc.dyBatch + p;
	uint ob = pc.oBase + n * pc.oBatch + p;
	int nc = int(pc.channels);
	for (int c = 0; c < nc; c++) {
		float t = denominator(xb, c);
		float xc = LOAD(x[xb + uint(c) * pc.plane]);
		if (MODE == 0) {
			outv[ob + uint(c) * pc.plane] = STORE(xc * pow(t, -pc.beta));
			continue;
		}
		int lo = max(c - (pc.size - 1) / 2, 0), hi = min(c + pc.size / 2, nc - 1);
		float acc = 0.0;
		for (int r = lo; r <= hi; r++) {
			float tr = denominator(xb, r);
			acc += LOAD(dy[yb + uint(r) * pc.plane]) * LOAD(x[xb + uint(r) * pc.plane]) * pow(tr, -pc.beta - 1.0);
		}
		float g = LOAD(dy[yb + uint(c) * pc.plane]);
		outv[ob + uint(c) * pc.plane] = STORE(g * pow(t, -pc.beta) - 2.0 * pc.alphaOverSize * pc.beta * xc * acc);
	}
}
