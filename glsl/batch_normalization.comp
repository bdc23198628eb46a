#version 450
// vkmps:variant f16 -DVKMPS_F16
// batch_normalization (MPSCNNBatchNormalization, ...Statistics): per
// channel c over its N*H*W values,
//   y = f(gamma[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + beta[c])
// with f the fused neuron (neuron.glsl). See batch_normalization_common.glsl
// for the chunks and ops/batch_normalization.go for the passes:
//   T_STATS    one workgroup per chunk writes the chunk's partial sums
//   T_MERGE    one workgroup per channel adds them (chunk order) into the
//              state's mean and variance (and, with T_UPDATE, the running
//              statistics)
//   T_APPLY    one workgroup per chunk writes y
//   T_RUNNING  the running-statistics update alone
//   T_FUSED    (T_STATS | T_APPLY) the three in one workgroup per channel
//              (batch_normalization_common.glsl)
//
// Statistics: a chunk's partial sums are sum(d) and sum(d*d) with
// d = x - shift, shift the channel's first value in the dispatch (so that
// large means do not cancel); mean = shift + S1/M, M2 = S2 - S1*S1/M.
// A merge folds a dispatch's mean and M2 into the state's by Chan's
// parallel formula when the state already holds pc.countBefore values.
//
// State arrays (pc.stStride floats each, channel c at pc.stBase + c):
// 0 mean, 1 biased variance, 2 gamma, 3 beta (as used), 4 sum of g,
// 5 sum of g*xhat (the gradient's).
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(push_constant) uniform Push {
	uint channels; // channels in this dispatch
	uint batches;  // batch images in this dispatch
	uint plane;    // H*W
	uint segs;     // segments per plane
	uint seg;      // values per segment
	uint group;    // planes per chunk
	uint chunks;   // chunks per channel
	uint tasks;    // T_* and S_* bits
	uint xBase, xBatch; // element of (n0, c0, 0) and values per batch image
	uint yBase, yBatch;
	uint gBase, bBase, rmBase, rvBase; // element of channel c0 in each
	uint stBase, stStride;
	float epsilon;
	float momentum;
	float countBefore; // values per channel already in the state (T_MERGE)
	float count;       // values per channel in this dispatch (T_UPDATE, T_RUNNING: in the batch)
} pc;

#define SCRATCH_BINDING 7
#include "batch_normalization_common.glsl"
#include "neuron.glsl"

layout(std430, binding = 0) restrict readonly buffer X { ELEM x[]; };
layout(std430, binding = 0) restrict readonly buffer X4 { ELEM4 x4[]; };
layout(std430, binding = 1) restrict writeonly buffer Y { ELEM y[]; };
layout(std430, binding = 1) restrict writeonly buffer Y4 { ELEM4 y4[]; };
layout(std430, binding = 2) readonly buffer Gamma { float gammaV[]; };
layout(std430, binding = 3) readonly buffer Beta { float betaV[]; };
layout(std430, binding = 4) buffer RunMean { float runMean[]; };
layout(std430, binding = 5) buffer RunVar { float runVar[]; };
layout(std430, binding = 6) buffer State { float st[]; };

uint xIndex(uint n, uint c, uint p) { return pc.xBase + n * pc.xBatch + c * pc.plane + p; }
uint yIndex(uint n, uint c, uint p) { return pc.yBase + n * pc.yBatch + c * pc.plane + p; }

float shiftOf(uint c) { return LOAD(x[xIndex(0u, c, 0u)]); }

// loadUnit returns unit u of chunk ch of channel c (VEC == 1: in .x).
vec4 loadUnit(uint c, Chunk ch, uint u) {
	uint n, p;
	unitAt(ch, u, n, p);
	uint e = xIndex(n, c, p);
	if (VEC == 4) return LOAD4(x4[e / 4u]);
	return vec4(LOAD(x[e]), 0.0, 0.0, 0.0);
}

// unitSums returns sum(d) and sum(d*d) over a unit's values, d = v - shift.
vec2 unitSums(vec4 v, float shift) {
	if (VEC == 4) {
		vec4 d = v - shift;
		return vec2((d.x + d.y) + (d.z + d.w), (d.x * d.x + d.y * d.y) + (d.z * d.z + d.w * d.w));
	}
	float d = v.x - shift;
	return vec2(d, d * d);
}

// chunkSums returns the partial sums of chunk i of channel c, with
// shift, to every invocation. Four loads are in flight per invocation and
// round.
vec2 chunkSums(uint c, uint i, float shift) {
	Chunk ch = chunkOf(i);
	vec2 acc = vec2(0.0);
	uint u = gl_LocalInvocationID.x;
	for (; u + 3u * LOCAL < ch.total; u += 4u * LOCAL) {
		vec4 v0 = loadUnit(c, ch, u);
		vec4 v1 = loadUnit(c, ch, u + LOCAL);
		vec4 v2 = loadUnit(c, ch, u + 2u * LOCAL);
		vec4 v3 = loadUnit(c, ch, u + 3u * LOCAL);
		acc += (unitSums(v0, shift) + unitSums(v1, shift)) + (unitSums(v2, shift) + unitSums(v3, shift));
	}
	for (; u < ch.total; u += LOCAL) acc += unitSums(loadUnit(c, ch, u), shift);
	return reduce2(acc);
}

// stats writes the partial sums of chunk i of channel c.
void stats(uint c, uint i) {
	vec2 s = chunkSums(c, i, shiftOf(c));
	if (gl_LocalInvocationID.x == 0u) part[c * pc.chunks + i] = s;
}

// stat returns state array a of channel c.
float stat(uint a, uint c) { return st[pc.stBase + a * pc.stStride + c]; }
void setStat(uint a, uint c, float v) { st[pc.stBase + a * pc.stStride + c] = v; }

void storeUnit(uint c, Chunk ch, uint u, vec4 v) {
	uint n, p;
	unitAt(ch, u, n, p);
	uint o = yIndex(n, c, p);
	if (VEC == 4) {
		if (NEURON != NEURON_NONE) {
			v = vec4(neuronForward(v.x, c), neuronForward(v.y, c), neuronForward(v.z, c), neuronForward(v.w, c));
		}
		y4[o / 4u] = STORE4(v);
	} else {
		float s = v.x;
		if (NEURON != NEURON_NONE) s = neuronForward(s, c);
		y[o] = STORE(s);
	}
}

// apply writes y over chunk i of channel c with its mean and variance,
// two units in flight per invocation and round.
void apply(uint c, uint i, float mean, float var) {
	float gamma = gammaV[pc.gBase + c], beta = betaV[pc.bBase + c];
	float a = gamma / sqrt(var + pc.epsilon);
	float b = beta - mean * a;
	Chunk ch = chunkOf(i);
	uint u = gl_LocalInvocationID.x;
	for (; u + LOCAL < ch.total; u += 2u * LOCAL) {
		vec4 v0 = loadUnit(c, ch, u);
		vec4 v1 = loadUnit(c, ch, u + LOCAL);
		storeUnit(c, ch, u, v0 * a + b);
		storeUnit(c, ch, u + LOCAL, v1 * a + b);
	}
	if (u < ch.total) storeUnit(c, ch, u, loadUnit(c, ch, u) * a + b);
	if (i == 0u && gl_LocalInvocationID.x == 0u && (pc.tasks & T_WRITE_STATE) != 0u) {
		if ((pc.tasks & S_STATE) == 0u) {
			setStat(0u, c, mean);
			setStat(1u, c, var);
		}
		setStat(2u, c, gamma);
		setStat(3u, c, beta);
	}
}

// updateRunning folds a batch's mean and biased variance of pc.count
// values into the running statistics of channel c (PyTorch's rule: the
// unbiased variance).
void updateRunning(uint c, float mean, float var) {
	float m = pc.momentum;
	runMean[pc.rmBase + c] = (1.0 - m) * runMean[pc.rmBase + c] + m * mean;
	runVar[pc.rvBase + c] = (1.0 - m) * runVar[pc.rvBase + c] + m * var * (pc.count / (pc.count - 1.0));
}

// batchStats returns the mean and biased variance of a dispatch's nb
// values of channel c from their sums s (shifted by shift).
vec2 batchStats(vec2 s, float shift, float nb) {
	float d = s.x / nb;
	return vec2(shift + d, max(s.y - s.x * d, 0.0) / nb);
}

// merge folds this dispatch's statistics of channel c into the state's.
void merge(uint c) {
	vec2 s = sumPartials(c);
	if (gl_LocalInvocationID.x != 0u) return;
	float nb = pc.count, na = pc.countBefore;
	float d = s.x / nb;
	float meanB = shiftOf(c) + d;
	float m2B = max(s.y - s.x * d, 0.0);
	float mean, var;
	if (na == 0.0) {
		vec2 b = batchStats(s, shiftOf(c), nb);
		mean = b.x;
		var = b.y;
	} else {
		float meanA = stat(0u, c), m2A = stat(1u, c) * na;
		float n = na + nb, delta = meanB - meanA;
		mean = meanA + delta * (nb / n);
		var = (m2A + m2B + delta * delta * (na * (nb / n))) / n;
	}
	setStat(0u, c, mean);
	setStat(1u, c, var);
	if ((pc.tasks & T_UPDATE) != 0u) updateRunning(c, mean, var);
}

void main() {
	if ((pc.tasks & T_RUNNING) != 0u) {
		for (uint c = gl_GlobalInvocationID.x; c < pc.channels; c += LOCAL * gl_NumWorkGroups.x) {
			updateRunning(c, stat(0u, c), stat(1u, c));
		}
		return;
	}
	uint w = workgroup();
	if ((pc.tasks & T_MERGE) != 0u) {
		if (w < pc.channels) merge(w);
		return;
	}
	uint total = pc.channels * pc.chunks;
	if (w >= total) return;
	// Apply workgroups run the chunks backwards: the first to run read
	// what the statistics pass read last, likely still in the L2 cache.
	if ((pc.tasks & T_STATS) == 0u) w = total - 1u - w;
	uint c = w / pc.chunks, i = w % pc.chunks;
	if ((pc.tasks & T_FUSED) == T_FUSED) {
		// One chunk per channel (i = 0), no values before: the merge's
		// arithmetic on the one partial, every invocation alike.
		float shift = shiftOf(c);
		vec2 b = batchStats(chunkSums(c, 0u, shift), shift, pc.count);
		if (gl_LocalInvocationID.x == 0u) {
			setStat(0u, c, b.x);
			setStat(1u, c, b.y);
			if ((pc.tasks & T_UPDATE) != 0u) updateRunning(c, b.x, b.y);
		}
		apply(c, 0u, b.x, b.y);
	} else if ((pc.tasks & T_STATS) != 0u) {
		stats(c, i);
	} else if ((pc.tasks & S_STATE) != 0u) {
		apply(c, i, stat(0u, c), stat(1u, c));
	} else {
		apply(c, i, runMean[pc.rmBase + c], runVar[pc.rvBase + c]);
	}
}
