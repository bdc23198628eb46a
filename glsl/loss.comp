#version 450
// loss (MPSCNNLoss), the element-wise types (ops.LossType, the TYPE
// constant: every type but softmax and categorical cross-entropy and cosine
// distance, which loss_pixel.comp takes) over the batch images of one
// dispatch: per-item losses, their partial sums or the gradient. Formulas:
// ops/loss.go's LossType doc; y is the prediction, t the label, w the
// item's weight (1 without WEIGHTS).
//
// Items are values, taken in quads (four values; one vector load when
// VEC4: every base is then a multiple of 4). Each invocation takes Q quads
// local-size apart (loads coalesce), all its loads issued before any math
// (memory-level parallelism: the bandwidth of a copy whatever the loss's
// arithmetic), and strides over the grid when the quads outnumber it. The
// math is vectorised and branch-free (selects), float32 throughout.
//
// MODE 0: out[outBase + item] = scale * w * loss (reduction none).
// MODE 1: partial[outBase + workgroup] = sum of w * loss over the
//         workgroup's items, in a fixed order (each invocation's quads in
//         turn, a quad's values left to right, then a tree), so runs repeat
//         bit for bit; with COUNT also counts[countBase + workgroup] = its
//         items with w != 0.
// MODE 2: out[outBase + value] = scale * w * dLoss/dy, scale = factor[0]
//         when FACTOR (the sum-by-nonzero-weights divisor computed on the
//         GPU by reduce_sum.comp).
// MODE 3: counts[countBase + workgroup] = the workgroup's nonzero weights
//         among pc.count weights (any TYPE; per-pixel losses count their
//         per-pixel weights here too).
// vkmps:variant f16 -DVKMPS_F16
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int TYPE = 0;
layout(constant_id = 2) const int MODE = 0;
layout(constant_id = 3) const bool VEC4 = false;
layout(constant_id = 4) const bool WEIGHTS = false;
layout(constant_id = 5) const bool COUNT = false;
layout(constant_id = 6) const bool FACTOR = false;

// Quads per invocation per grid step.
const uint Q = 2u;

// ops.LossType values.
const int MSE = 0, MAE = 2, SIGMOID_CE = 3, HINGE = 5, HUBER = 6, LOG = 8, KL = 9;
#define COUNTING (MODE == 3 || (MODE == 1 && COUNT))

layout(std430, binding = 0) readonly buffer Pred { ELEM pred[]; };
layout(std430, binding = 0) readonly buffer Pred4 { ELEM4 pred4[]; };
layout(std430, binding = 1) readonly buffer Labels { ELEM labels[]; };
layout(std430, binding = 1) readonly buffer Labels4 { ELEM4 labels4[]; };
layout(std430, binding = 2) readonly buffer Weights { ELEM weights[]; };
layout(std430, binding = 2) readonly buffer Weights4 { ELEM4 weights4[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM outv[]; };
layout(std430, binding = 3) writeonly buffer Out4 { ELEM4 out4[]; };
layout(std430, binding = 3) writeonly buffer Partials { float partial[]; };
layout(std430, binding = 3) writeonly buffer Counts { uint counts[]; };
layout(std430, binding = 4) readonly buffer Factor { float factor[]; };

layout(push_constant) uniform Push {
	uint count;    // values (MODE 3: weights)
	uint channels; // C (unused here; loss_pixel.comp's block)
	uint plane;    // H*W (unused here)
	uint predBase;
	uint labelBase;
	uint weightBase;
	uint outBase;
	uint countBase;
	float scale;   // MODE 0 and 2 (without FACTOR)
	float smoothA; // label smoothing: t' = t*smoothA + smoothB
	float smoothB;
	float delta;   // Huber
	float epsilon; // log loss
} pc;

shared float sums[gl_WorkGroupSize.x];
shared uint nonzero[gl_WorkGroupSize.x];

// log(1 + x) without losing x when it is below float32's epsilon
// (Goldberg's trick: u - 1 is exact), as selects.
vec4 log1pV(vec4 x) {
	vec4 u = 1.0 + x;
	return mix(log(u) * (x / (u - 1.0)), x, equal(u, vec4(1.0)));
}

// The losses of four values. NaN propagates: where a select could become
// a minimum or maximum (NVIDIA's compiler turns such selects into min and
// max, which drop NaN), isnan picks the NaN explicitly.
vec4 lossV(vec4 y, vec4 t) {
	if (TYPE == MSE) {
		vec4 d = y - t;
		return d * d;
	} else if (TYPE == MAE) {
		return abs(y - t);
	} else if (TYPE == SIGMOID_CE) {
		t = t * pc.smoothA + pc.smoothB;
		// max(y, 0) may drop a NaN y; y*t keeps it.
		return max(y, vec4(0.0)) - y * t + log1pV(exp(-abs(y)));
	} else if (TYPE == HINGE) {
		vec4 v = 1.0 - (2.0 * t - 1.0) * y;
		return mix(mix(v, vec4(0.0), lessThanEqual(v, vec4(0.0))), v, isnan(v));
	} else if (TYPE == HUBER) {
		vec4 d = y - t, a = abs(d);
		return mix(pc.delta * (a - 0.5 * pc.delta), 0.5 * d * d, lessThanEqual(a, vec4(pc.delta)));
	} else if (TYPE == LOG) {
		return -t * log(y + pc.epsilon) - (1.0 - t) * log(1.0 - y + pc.epsilon);
	} else if (TYPE == KL) {
		// t log t is 0 at t = 0 (and NaN below, from log).
		return mix(t * (log(t) - y), vec4(0.0), equal(t, vec4(0.0)));
	}
	return vec4(0.0);
}

// The gradients of four values.
vec4 gradV(vec4 y, vec4 t) {
	if (TYPE == MSE) {
		return 2.0 * (y - t);
	} else if (TYPE == MAE) {
		vec4 d = y - t; // sign, 0 at d = 0, NaN for NaN
		return mix(sign(d), d, isnan(d));
	} else if (TYPE == SIGMOID_CE) {
		return 1.0 / (1.0 + exp(-y)) - (t * pc.smoothA + pc.smoothB);
	} else if (TYPE == HINGE) {
		vec4 s = 2.0 * t - 1.0, v = 1.0 - s * y;
		return mix(mix(-s, vec4(0.0), lessThanEqual(v, vec4(0.0))), v, isnan(v));
	} else if (TYPE == HUBER) {
		vec4 d = y - t; // d where |d| <= delta, else delta * sign(d)
		return mix(mix(pc.delta * sign(d), d, lessThanEqual(abs(d), vec4(pc.delta))), d, isnan(d));
	} else if (TYPE == LOG) {
		float e = pc.epsilon;
		return (y + e - t - 2.0 * e * t) / ((y + e) * (1.0 - y + e));
	} else if (TYPE == KL) {
		return -t;
	}
	return vec4(0.0);
}

// process adds the weighted losses of the whole quad at value i (MODE 1)
// or stores its losses or gradients (MODE 0, 2).
void process(uint i, vec4 y, vec4 t, vec4 w, float scale, inout float s, inout uint nz) {
	if (COUNTING) nz += uint(w.x != 0.0) + uint(w.y != 0.0) + uint(w.z != 0.0) + uint(w.w != 0.0);
	if (MODE == 1) {
		vec4 r = w * lossV(y, t);
		s += ((r.x + r.y) + r.z) + r.w;
	} else if (MODE == 0 || MODE == 2) {
		out4[(pc.outBase + i) / 4u] = STORE4(scale * w * (MODE == 2 ? gradV(y, t) : lossV(y, t)));
	}
}

void main() {
	uint lid = gl_LocalInvocationID.x;
	uint quads = (pc.count + 3u) / 4u, full = pc.count / 4u;
	uint span = gl_WorkGroupSize.x * Q;
	float scale = MODE == 2 && FACTOR ? factor[0] : pc.scale;
	bool vals = MODE != 3;
	float s = 0.0;
	uint nz = 0u;
	for (uint base = gl_WorkGroupID.x * span; base < quads; base += gl_NumWorkGroups.x * span) {
		if (VEC4 && base + span <= full) {
			// Every quad of the step exists and is complete (uniform across
			// the workgroup): Q vector loads of each image at once.
			vec4 y[Q], t[Q], w[Q];
			[[unroll]] for (uint k = 0u; k < Q; k++) {
				uint q = base + k * gl_WorkGroupSize.x + lid;
				y[k] = vals ? LOAD4(pred4[pc.predBase / 4u + q]) : vec4(0.0);
				t[k] = vals ? LOAD4(labels4[pc.labelBase / 4u + q]) : vec4(0.0);
				w[k] = WEIGHTS ? LOAD4(weights4[pc.weightBase / 4u + q]) : vec4(1.0);
			}
			[[unroll]] for (uint k = 0u; k < Q; k++) {
				process(4u * (base + k * gl_WorkGroupSize.x + lid), y[k], t[k], w[k], scale, s, nz);
			}
		} else {
			// The last step, or bases off the vector boundary: value by
			// value (the quads' values in turn, so the sums keep their order).
			for (uint k = 0u; k < Q; k++) {
				uint i = 4u * (base + k * gl_WorkGroupSize.x + lid);
				float qs = 0.0;
				for (uint j = 0u; j < 4u && i + j < pc.count; j++) {
					uint v = i + j;
					float y = vals ? LOAD(pred[pc.predBase + v]) : 0.0;
					float t = vals ? LOAD(labels[pc.labelBase + v]) : 0.0;
					float w = WEIGHTS ? LOAD(weights[pc.weightBase + v]) : 1.0;
					if (COUNTING) nz += uint(w != 0.0);
					if (MODE == 1) {
						qs += w * lossV(vec4(y), vec4(t)).x;
					} else if (MODE == 0 || MODE == 2) {
						float r = MODE == 2 ? gradV(vec4(y), vec4(t)).x : lossV(vec4(y), vec4(t)).x;
						outv[pc.outBase + v] = STORE(scale * w * r);
					}
				}
				s += qs;
			}
		}
	}
	if (MODE == 0 || MODE == 2) return;
	if (MODE == 1) sums[lid] = s;
	if (COUNTING) nonzero[lid] = nz;
	barrier();
	for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1) {
		if (lid < h) {
			if (MODE == 1) sums[lid] += sums[lid + h];
			if (COUNTING) nonzero[lid] += nonzero[lid + h];
		}
		barrier();
	}
	if (lid != 0u) return;
	if (MODE == 1) partial[pc.outBase + gl_WorkGroupID.x] = sums[0];
	if (COUNTING) counts[pc.countBase + gl_WorkGroupID.x] = nonzero[0];
}
