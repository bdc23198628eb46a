#version 450
// SoftMax and LogSoftMax (MPSCNNSoftMax, MPSCNNLogSoftMax) over the
// feature channels of each pixel, numerically stable:
//   softmax:     dst_c = exp(x_c - m) / s
//   log-softmax: dst_c = x_c - m - log(s),   m = max_k x_k, s = sum_k exp(x_k - m)
// A pixel's channels lie plane values apart (NCHW), so neighbouring
// invocations take neighbouring pixels (coalesced; CFAST: neighbouring
// channels, for planes of 1 or 2 values) and SLICES invocations share a
// pixel: slice j takes channels j, j+SLICES, ... and keeps a
// running (m, s) (online softmax: one read of the channels for both);
// the slices' pairs are combined in shared memory in a fixed tree, so
// results repeat bit for bit. A second read writes the results. A
// workgroup takes PX = local/SLICES pixels at a time, grid-stride.
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

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 1) writeonly buffer Dst { ELEM dst[]; };

layout(push_constant) uniform Push {
	uint pixels;   // batch images * plane in this dispatch
	uint plane;    // H*W
	uint channels; // C
	uint srcBase;  // element index of the first batch image's channel 0
	uint dstBase;
	uint srcBatch; // elements between batch images
	uint dstBatch;
} pc;

shared float shM[gl_WorkGroupSize.x];
shared float shS[gl_WorkGroupSize.x];

const float NEG_INF = -1.0 / 0.0;

// combine merges the running pair (m2, s2) into (m, s).
void combine(inout float m, inout float s, float m2, float s2) {
	float mm = max(m, m2);
	s = (m == mm ? s : s * exp(m - mm)) + (m2 == mm ? s2 : s2 * exp(m2 - mm));
	m = mm;
}

// update adds x to the running pair (m, s): s = sum exp(x_k - m) over
// the values so far, m their maximum.
void update(inout float m, inout float s, float x) {
	if (x > m) {
		s = s * exp(m - x) + 1.0;
		m = x;
	} else {
		// -inf next to -inf adds nothing (exp(-inf - -inf) is NaN); a NaN adds NaN
		s += x == NEG_INF ? 0.0 : exp(x - m);
	}
}

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
		uint s0 = pc.srcBase + n * pc.srcBatch + p, d0 = pc.dstBase + n * pc.dstBatch + p;
		float m = NEG_INF, s = 0.0;
		if (ok) {
			// Four loads in flight, then the updates in channel order.
			uint c = sl;
			for (; c + 3u * SLICES < pc.channels; c += 4u * SLICES) {
				float x[4];
				[[unroll]] for (uint k = 0u; k < 4u; k++) x[k] = LOAD(src[s0 + (c + k * SLICES) * pc.plane]);
				[[unroll]] for (uint k = 0u; k < 4u; k++) update(m, s, x[k]);
			}
			for (; c < pc.channels; c += SLICES) update(m, s, LOAD(src[s0 + c * pc.plane]));
		}
		if (SLICES > 1u) {
			shM[lid] = m;
			shS[lid] = s;
			barrier();
			for (uint h = SLICES / 2u; h > 0u; h >>= 1) {
				if (sl < h) {
					combine(m, s, shM[lid + h * slStride], shS[lid + h * slStride]);
					shM[lid] = m;
					shS[lid] = s;
				}
				barrier();
			}
			m = shM[first];
			s = shS[first];
			barrier();
		}
		if (ok) {
			float ls = log(s), inv = 1.0 / s;
			uint c = sl;
			for (; c + 3u * SLICES < pc.channels; c += 4u * SLICES) {
				float v[4];
				[[unroll]] for (uint k = 0u; k < 4u; k++) v[k] = LOAD(src[s0 + (c + k * SLICES) * pc.plane]) - m;
				[[unroll]] for (uint k = 0u; k < 4u; k++) dst[d0 + (c + k * SLICES) * pc.plane] = STORE(LOG ? v[k] - ls : exp(v[k]) * inv);
			}
			for (; c < pc.channels; c += SLICES) {
				float v = LOAD(src[s0 + c * pc.plane]) - m;
				dst[d0 + c * pc.plane] = STORE(LOG ? v - ls : exp(v) * inv);
			}
		}
	}
}
