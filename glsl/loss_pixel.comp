#version 450
// loss (MPSCNNLoss), the per-pixel types: softmax cross-entropy,
// categorical cross-entropy and cosine distance (TYPE, ops.LossType), whose
// items are pixels, each reducing over its C channels pc.plane values apart
// (NCHW). Formulas: ops/loss.go's LossType doc; y is the prediction, t the
// label, w the pixel's weight (1 without WEIGHTS).
//
// Work: SLICES invocations share a pixel, slice j taking channels j,
// j+SLICES, ...; neighbouring invocations take neighbouring pixels, so
// each channel's loads coalesce (CFAST: neighbouring slices of one pixel,
// for planes of 1 or 2 values, whose pixels lie C apart). A workgroup takes
// local/SLICES pixels at a time and strides over the pixels of the
// dispatch. An invocation loads CPT of its channels at once (all loads in
// flight before any math): with CACHED, CPT*SLICES >= C and its channels
// stay in registers, so the softmax gradient reads pred and labels once;
// otherwise it walks its channels CPT at a time, and the softmax gradient
// reads them again. The slices' partial results are combined in shared
// memory in a fixed tree: results repeat bit for bit.
//
// Softmax cross-entropy keeps per slice the maximum m of its predictions,
// s = sum exp(y - m) (each chunk's maximum first, chunks merged online),
// ts = sum of the smoothed labels t' = t*smoothA + smoothB and ty = sum
// t'*y; loss = ts*(m + log s) - ty, gradient exp(y - m)/s * ts - t'.
// Categorical cross-entropy and cosine distance sum -t log y (0 where
// t = 0) or y*t; their gradients (-t/y, 0 where t = 0; -t) need no
// reduction.
//
// MODE 0: out[outBase + pixel] = scale * w * loss (reduction none).
// MODE 1: partial[outBase + workgroup] = sum of w * loss over the
//         workgroup's pixels in a fixed order; with COUNT also
//         counts[countBase + workgroup] = its pixels with w != 0.
// MODE 2: out[outBase + value] = scale * w * dLoss/dy, scale = factor[0]
//         when FACTOR.
// vkmps:variant f16 -DVKMPS_F16
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int TYPE = 1;
layout(constant_id = 2) const int MODE = 0;
layout(constant_id = 4) const bool WEIGHTS = false;
layout(constant_id = 5) const bool COUNT = false;
layout(constant_id = 6) const bool FACTOR = false;
layout(constant_id = 7) const uint SLICES = 1;
layout(constant_id = 8) const uint CPT = 1; // channels loaded at once per invocation
layout(constant_id = 9) const bool CACHED = false;
layout(constant_id = 10) const bool CFAST = false;

const int SOFTMAX_CE = 1, CATEGORICAL_CE = 4, COSINE = 7;
// The gradient of categorical cross-entropy and cosine distance is
// value by value: no reduction over the channels.
const bool REDUCE = MODE != 2 || TYPE == SOFTMAX_CE;
const float NEG_INF = -1.0 / 0.0;

layout(std430, binding = 0) readonly buffer Pred { ELEM pred[]; };
layout(std430, binding = 1) readonly buffer Labels { ELEM labels[]; };
layout(std430, binding = 2) readonly buffer Weights { ELEM weights[]; };
layout(std430, binding = 3) writeonly buffer Out { ELEM outv[]; };
layout(std430, binding = 3) writeonly buffer Partials { float partial[]; };
layout(std430, binding = 3) writeonly buffer Counts { uint counts[]; };
layout(std430, binding = 4) readonly buffer Factor { float factor[]; };

layout(push_constant) uniform Push {
	uint count;    // pixels
	uint channels; // C
	uint plane;    // H*W
	uint predBase;
	uint labelBase;
	uint weightBase;
	uint outBase;
	uint countBase;
	float scale;   // MODE 0 and 2 (without FACTOR)
	float smoothA; // label smoothing: t' = t*smoothA + smoothB
	float smoothB;
	float delta;   // unused here
	float epsilon; // unused here
} pc;

// The slices' partials: softmax (m, s, ts, ty); the others' sum in shA.
shared float shA[gl_WorkGroupSize.x];
shared float shB[gl_WorkGroupSize.x];
shared float shC[gl_WorkGroupSize.x];
shared float shD[gl_WorkGroupSize.x];
shared uint shK[gl_WorkGroupSize.x];

// One chunk of an invocation's channels: y and t (smoothed for softmax);
// lanes past the last channel hold y = -inf, t = 0 and ok false.
float cy[CPT], ct[CPT];
bool cok[CPT];

// loadChunk loads the channels c0, c0+SLICES, ... (CPT of them) of the
// pixel whose channel 0 is value v0.
void loadChunk(uint v0, uint c0, bool labelsOnly) {
	[[unroll]] for (uint k = 0u; k < CPT; k++) {
		uint c = c0 + k * SLICES;
		cok[k] = c < pc.channels;
		uint v = v0 + c * pc.plane;
		cy[k] = cok[k] && !labelsOnly ? LOAD(pred[pc.predBase + v]) : NEG_INF;
		float t = cok[k] ? LOAD(labels[pc.labelBase + v]) : 0.0;
		ct[k] = TYPE == SOFTMAX_CE ? (cok[k] ? t * pc.smoothA + pc.smoothB : 0.0) : t;
	}
}

// combine merges the softmax pair (m2, s2) into (m, s).
void combine(inout float m, inout float s, float m2, float s2) {
	float mm = max(m, m2);
	s = (m == mm ? s : s * exp(m - mm)) + (m2 == mm ? s2 : s2 * exp(m2 - mm));
	m = mm;
}

// accumulate adds the loaded chunk to the slice's partials: softmax's
// (m, s, ts, ty), or the sum a.
void accumulate(inout float m, inout float s, inout float ts, inout float ty, inout float a) {
	if (TYPE == SOFTMAX_CE) {
		float cm = NEG_INF;
		[[unroll]] for (uint k = 0u; k < CPT; k++) cm = max(cm, cy[k]);
		float cs = 0.0;
		// -inf adds nothing (exp(-inf - -inf) is NaN); a NaN adds NaN.
		[[unroll]] for (uint k = 0u; k < CPT; k++) cs += cy[k] == NEG_INF ? 0.0 : exp(cy[k] - cm);
		if (CACHED) { // one chunk: nothing to merge
			m = cm;
			s = cs;
		} else {
			combine(m, s, cm, cs);
		}
		[[unroll]] for (uint k = 0u; k < CPT; k++) {
			ts += ct[k];
			ty += cok[k] ? ct[k] * cy[k] : 0.0;
		}
	} else if (TYPE == CATEGORICAL_CE) {
		// Terms with t = 0 are 0 (no 0*log 0 NaN).
		[[unroll]] for (uint k = 0u; k < CPT; k++) a -= ct[k] != 0.0 ? ct[k] * log(cy[k]) : 0.0;
	} else {
		[[unroll]] for (uint k = 0u; k < CPT; k++) a += cok[k] ? cy[k] * ct[k] : 0.0;
	}
}

// storeGrad writes the loaded chunk's gradients (k = scale * w; for
// softmax, p = ts / s and the pixel's maximum m).
void storeGrad(uint v0, uint c0, float kw, float m, float p) {
	[[unroll]] for (uint k = 0u; k < CPT; k++) {
		float g;
		if (TYPE == SOFTMAX_CE) {
			g = kw * (exp(cy[k] - m) * p - ct[k]);
		} else if (TYPE == CATEGORICAL_CE) {
			g = ct[k] == 0.0 ? 0.0 : -kw * ct[k] / cy[k];
		} else {
			g = -kw * ct[k];
		}
		if (cok[k]) outv[pc.outBase + v0 + (c0 + k * SLICES) * pc.plane] = STORE(g);
	}
}

// combineSlices merges the partials of a pixel's slices in a fixed tree
// (slice j takes j + h for h = SLICES/2, ..., 1) and gives every slice the
// pixel's totals.
void combineSlices(uint lid, uint sl, uint slStride, uint first, inout float m, inout float s, inout float ts, inout float ty, inout float a) {
	bool sm = TYPE == SOFTMAX_CE;
	if (sm) {
		shA[lid] = m;
		shB[lid] = s;
		shC[lid] = ts;
		shD[lid] = ty;
	} else {
		shA[lid] = a;
	}
	barrier();
	for (uint h = SLICES / 2u; h > 0u; h >>= 1) {
		if (sl < h) {
			uint o = lid + h * slStride;
			if (sm) {
				combine(m, s, shA[o], shB[o]);
				ts += shC[o];
				ty += shD[o];
				shA[lid] = m;
				shB[lid] = s;
				shC[lid] = ts;
				shD[lid] = ty;
			} else {
				a += shA[o];
				shA[lid] = a;
			}
		}
		barrier();
	}
	if (sm) {
		m = shA[first];
		s = shB[first];
		ts = shC[first];
		ty = shD[first];
	} else {
		a = shA[first];
	}
	barrier();
}

void main() {
	uint lid = gl_LocalInvocationID.x;
	uint pxN = gl_WorkGroupSize.x / SLICES;
	uint px = CFAST ? lid / SLICES : lid % pxN, sl = CFAST ? lid % SLICES : lid / pxN;
	uint slStride = CFAST ? 1u : pxN;  // shared-memory distance between slices of a pixel
	uint first = CFAST ? px * SLICES : px; // the pixel's slice 0
	uint blocks = (pc.count + pxN - 1u) / pxN;
	float scale = MODE == 2 && FACTOR ? factor[0] : pc.scale;
	float acc = 0.0; // MODE 1: the invocation's pixels' weighted losses (slice 0)
	uint nz = 0u;
	for (uint blk = gl_WorkGroupID.x; blk < blocks; blk += gl_NumWorkGroups.x) {
		uint pix = blk * pxN + px;
		bool ok = pix < pc.count;
		uint n = pix / pc.plane, p = pix - n * pc.plane;
		uint v0 = n * pc.channels * pc.plane + p; // channel 0 of the pixel
		float w = WEIGHTS && ok ? LOAD(weights[pc.weightBase + pix]) : 1.0;
		if (!REDUCE) {
			// Categorical cross-entropy and cosine gradients.
			if (ok) {
				for (uint c0 = sl; c0 < pc.channels; c0 += CPT * SLICES) {
					loadChunk(v0, c0, TYPE == COSINE);
					storeGrad(v0, c0, scale * w, 0.0, 0.0);
				}
			}
		} else {
			float m = NEG_INF, s = 0.0, ts = 0.0, ty = 0.0, a = 0.0;
			if (ok) {
				if (CACHED) {
					loadChunk(v0, sl, false);
					accumulate(m, s, ts, ty, a);
				} else {
					for (uint c0 = sl; c0 < pc.channels; c0 += CPT * SLICES) {
						loadChunk(v0, c0, false);
						accumulate(m, s, ts, ty, a);
					}
				}
			}
			if (SLICES > 1u) {
				combineSlices(lid, sl, slStride, first, m, s, ts, ty, a);
			}
			if (MODE == 2 && ok) {
				float pr = ts / s;
				if (CACHED) {
					storeGrad(v0, sl, scale * w, m, pr);
				} else {
					for (uint c0 = sl; c0 < pc.channels; c0 += CPT * SLICES) {
						loadChunk(v0, c0, false);
						storeGrad(v0, c0, scale * w, m, pr);
					}
				}
			} else if (MODE != 2 && ok && sl == 0u) {
				float l = TYPE == SOFTMAX_CE ? ts * (m + log(s)) - ty : (TYPE == COSINE ? 1.0 - a : a);
				l *= w;
				if (MODE == 0) outv[pc.outBase + pix] = STORE(scale * l);
				acc += l;
				if (COUNT) nz += uint(w != 0.0);
			}
		}
	}
	if (MODE != 1) return;
	shA[lid] = acc;
	if (COUNT) shK[lid] = nz;
	barrier();
	for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1) {
		if (lid < h) {
			shA[lid] += shA[lid + h];
			if (COUNT) shK[lid] += shK[lid + h];
		}
		barrier();
	}
	if (lid != 0u) return;
	partial[pc.outBase + gl_WorkGroupID.x] = shA[0];
	if (COUNT) counts[pc.countBase + gl_WorkGroupID.x] = shK[0];
}
