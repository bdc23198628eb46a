#version 450
// SoftMaxGradient and LogSoftMaxGradient (MPSCNNSoftMaxGradient,
// MPSCNNLogSoftMaxGradient): from dy and the forward's result y, per pixel
// over its channels,
//   softmax:     dx_c = y_c * (dy_c - t),     t = sum_k dy_k * y_k
//   log-softmax: dx_c = dy_c - exp(y_c) * t,  t = sum_k dy_k
// Work as softmax.comp: SLICES invocations per pixel, their partial sums
// added in a fixed tree in shared memory, then a second read writes dx.
// vkmps:variant f16 -DVKMPS_F16
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SLICES = 1;
layout(constant_id = 2) const bool LOG = false;
// CFAST: neighbouring invocations take neighbouring channels of one pixel
// (planes of 1 or 2 values, where neighbouring pixels are C apart)
// rather than neighbouring pixels.
layout(constant_id = 3) const bool CFAST = false;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 1) readonly buffer Y { ELEM y[]; };
layout(std430, binding = 2) writeonly buffer Dx { ELEM dx[]; };

layout(push_constant) uniform Push {
	uint pixels;
	uint plane;
	uint channels;
	uint dyBase;
	uint yBase;
	uint dxBase;
	uint dyBatch;
	uint yBatch;
	uint dxBatch;
} pc;

shared float shT[gl_WorkGroupSize.x];

void main() {
	uint px_n = gl_WorkGroupSize.x / SLICES;
	uint lid = gl_LocalInvocationID.x;
	uint px = CFAST ? lid / SLICES : lid % px_n, sl = CFAST ? lid % SLICES : lid / px_n;
	uint slStride = CFAST ? 1u : px_n; // shared-memory distance between slices of a pixel
	uint first = CFAST ? px * SLICES : px; // the pixel's slice 0
	uint blocks = (pc.pixels + px_n - 1u) / px_n;
	for (uint blk = gl_WorkGroupID.x; blk < blocks; blk += gl_NumWorkGroups.x) {
		uint pix = blk * px_n + px;
		bool ok = pix < pc.pixels;
		uint n = pix / pc.plane, p = pix - n * pc.plane;
		uint g0 = pc.dyBase + n * pc.dyBatch + p, y0 = pc.yBase + n * pc.yBatch + p, x0 = pc.dxBase + n * pc.dxBatch + p;
		float t = 0.0;
		if (ok) {
			// Four channels' loads in flight, then the sum in channel order.
			uint c = sl;
			for (; c + 3u * SLICES < pc.channels; c += 4u * SLICES) {
				float g[4], v[4];
				[[unroll]] for (uint k = 0u; k < 4u; k++) {
					g[k] = LOAD(dy[g0 + (c + k * SLICES) * pc.plane]);
					v[k] = LOG ? 1.0 : LOAD(y[y0 + (c + k * SLICES) * pc.plane]);
				}
				[[unroll]] for (uint k = 0u; k < 4u; k++) t += LOG ? g[k] : g[k] * v[k];
			}
			for (; c < pc.channels; c += SLICES) {
				float g = LOAD(dy[g0 + c * pc.plane]);
				t += LOG ? g : g * LOAD(y[y0 + c * pc.plane]);
			}
		}
		if (SLICES > 1u) {
			shT[lid] = t;
			barrier();
			for (uint h = SLICES / 2u; h > 0u; h >>= 1) {
				if (sl < h) {
					t += shT[lid + h * slStride];
					shT[lid] = t;
				}
				barrier();
			}
			t = shT[first];
			barrier();
		}
		if (ok) {
			uint c = sl;
			for (; c + 3u * SLICES < pc.channels; c += 4u * SLICES) {
				float g[4], v[4];
				[[unroll]] for (uint k = 0u; k < 4u; k++) {
					g[k] = LOAD(dy[g0 + (c + k * SLICES) * pc.plane]);
					v[k] = LOAD(y[y0 + (c + k * SLICES) * pc.plane]);
				}
				[[unroll]] for (uint k = 0u; k < 4u; k++) dx[x0 + (c + k * SLICES) * pc.plane] = STORE(LOG ? g[k] - exp(v[k]) * t : v[k] * (g[k] - t));
			}
			for (; c < pc.channels; c += SLICES) {
				float g = LOAD(dy[g0 + c * pc.plane]), v = LOAD(y[y0 + c * pc.plane]);
				dx[x0 + c * pc.plane] = STORE(LOG ? g - exp(v) * t : v * (g - t));
			}
		}
	}
}
