#version 450
// vkmps:variant f16 -DVKMPS_F16
// batch_normalization_grad (MPSCNNBatchNormalizationGradient and
// ...StatisticsGradient): per channel c, with mean, var, gamma, beta as the
// forward used them (state arrays 0..3), invstd = 1/sqrt(var + epsilon),
// xhat = (x - mean)*invstd and g = dy * f'(gamma*xhat + beta) (f the fused
// neuron):
//   dbeta = sum g,  dgamma = sum g*xhat                 (over N, H, W)
//   dx = gamma*invstd*(g - dbeta/M - xhat*dgamma/M)     (training)
//   dx = gamma*invstd*g                                 (inference)
// T_STATS: one workgroup per chunk writes the chunk's sums of g and
// g*(x - mean); T_MERGE: one workgroup per channel adds them (chunk order)
// into state arrays 4 (dbeta) and 5 (dgamma), setting them when
// pc.countBefore is 0 and adding to them otherwise (and, with T_DGAMMA and
// T_DBETA, writes the images); T_APPLY: one workgroup per chunk writes dx
// from the state; T_FUSED (T_STATS | T_APPLY): the three in one workgroup
// per channel (batch_normalization_common.glsl), with T_DGAMMA and T_DBETA
// as the merge's.
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(push_constant) uniform Push {
	uint channels, batches, plane, segs, seg, group, chunks, tasks;
	uint xBase, xBatch;
	uint dyBase, dyBatch;
	uint dxBase, dxBatch;
	uint stBase, stStride;
	uint dgBase, dbBase; // element of channel c0 in dgamma and dbeta
	float epsilon;
	float count;       // M: values per channel of the batch
	float countBefore; // values per channel already summed in the state (T_MERGE)
} pc;

#define SCRATCH_BINDING 4
#include "batch_normalization_common.glsl"
#include "neuron.glsl"

layout(std430, binding = 0) restrict readonly buffer X { ELEM x[]; };
layout(std430, binding = 0) restrict readonly buffer X4 { ELEM4 x4[]; };
layout(std430, binding = 1) restrict readonly buffer DY { ELEM dy[]; };
layout(std430, binding = 1) restrict readonly buffer DY4 { ELEM4 dy4[]; };
layout(std430, binding = 2) restrict writeonly buffer DX { ELEM dx[]; };
layout(std430, binding = 2) restrict writeonly buffer DX4 { ELEM4 dx4[]; };
layout(std430, binding = 3) buffer State { float st[]; };
layout(std430, binding = 5) writeonly buffer DGamma { float dgamma[]; };
layout(std430, binding = 6) writeonly buffer DBeta { float dbeta[]; };

float stat(uint a, uint c) { return st[pc.stBase + a * pc.stStride + c]; }
void setStat(uint a, uint c, float v) { st[pc.stBase + a * pc.stStride + c] = v; }

// Channel holds a channel's forward values.
struct Channel {
	float mean, invstd, gamma, beta;
};

Channel channelOf(uint c) {
	Channel k;
	k.mean = stat(0u, c);
	k.invstd = 1.0 / sqrt(stat(1u, c) + pc.epsilon);
	k.gamma = stat(2u, c);
	k.beta = stat(3u, c);
	return k;
}

// grad returns g = dy * f'(z) for the values v of x and d of dy.
vec4 grad(Channel k, vec4 v, vec4 d, uint c) {
	if (NEURON == NEURON_NONE) return d;
	vec4 z = k.gamma * (v - k.mean) * k.invstd + k.beta;
	if (VEC == 4) {
		return d * vec4(neuronDerivative(z.x, c), neuronDerivative(z.y, c), neuronDerivative(z.z, c), neuronDerivative(z.w, c));
	}
	return vec4(d.x * neuronDerivative(z.x, c), 0.0, 0.0, 0.0);
}

// Unit is a load unit's x and dy (VEC == 1: in .x).
struct Unit {
	vec4 v, d;
};

Unit loadUnit(uint c, Chunk ch, uint u) {
	uint n, p;
	unitAt(ch, u, n, p);
	uint e = pc.xBase + n * pc.xBatch + c * pc.plane + p;
	uint f = pc.dyBase + n * pc.dyBatch + c * pc.plane + p;
	Unit r;
	if (VEC == 4) {
		r.v = LOAD4(x4[e / 4u]);
		r.d = LOAD4(dy4[f / 4u]);
	} else {
		r.v = vec4(LOAD(x[e]), 0.0, 0.0, 0.0);
		r.d = vec4(LOAD(dy[f]), 0.0, 0.0, 0.0);
	}
	return r;
}

// unitSums returns sum(g) and sum(g*(x - mean)) over a unit's values.
vec2 unitSums(Channel k, Unit r, uint c) {
	vec4 g = grad(k, r.v, r.d, c);
	if (VEC == 4) {
		vec4 gx = g * (r.v - k.mean);
		return vec2((g.x + g.y) + (g.z + g.w), (gx.x + gx.y) + (gx.z + gx.w));
	}
	return vec2(g.x, g.x * (r.v.x - k.mean));
}

// chunkSums returns the sums of chunk i of channel c to every
// invocation. Two units (four loads) are in flight per invocation and
// round.
vec2 chunkSums(Channel k, uint c, uint i) {
	Chunk ch = chunkOf(i);
	vec2 acc = vec2(0.0);
	uint u = gl_LocalInvocationID.x;
	for (; u + LOCAL < ch.total; u += 2u * LOCAL) {
		Unit r0 = loadUnit(c, ch, u);
		Unit r1 = loadUnit(c, ch, u + LOCAL);
		acc += unitSums(k, r0, c) + unitSums(k, r1, c);
	}
	if (u < ch.total) acc += unitSums(k, loadUnit(c, ch, u), c);
	return reduce2(acc);
}

// stats writes the sums of chunk i of channel c.
void stats(uint c, uint i) {
	vec2 s = chunkSums(channelOf(c), c, i);
	if (gl_LocalInvocationID.x == 0u) part[c * pc.chunks + i] = s;
}

void storeUnit(uint c, Chunk ch, uint u, vec4 v) {
	uint n, p;
	unitAt(ch, u, n, p);
	uint o = pc.dxBase + n * pc.dxBatch + c * pc.plane + p;
	if (VEC == 4) {
		dx4[o / 4u] = STORE4(v);
	} else {
		dx[o] = STORE(v.x);
	}
}

// apply writes dx over chunk i of channel c from its sums sg (dbeta)
// and sgx (dgamma).
void apply(Channel k, uint c, uint i, float sg, float sgx) {
	// dx = a*g + b1*x + b0 (training), a*g (inference).
	float a = k.gamma * k.invstd, b1 = 0.0, b0 = 0.0;
	if ((pc.tasks & T_TRAINING) != 0u) {
		float m = sgx / pc.count * k.invstd;
		b1 = -a * m;
		b0 = -a * sg / pc.count + a * m * k.mean;
	}
	Chunk ch = chunkOf(i);
	uint u = gl_LocalInvocationID.x;
	for (; u + LOCAL < ch.total; u += 2u * LOCAL) {
		Unit r0 = loadUnit(c, ch, u);
		Unit r1 = loadUnit(c, ch, u + LOCAL);
		storeUnit(c, ch, u, a * grad(k, r0.v, r0.d, c) + (b1 * r0.v + b0));
		storeUnit(c, ch, u + LOCAL, a * grad(k, r1.v, r1.d, c) + (b1 * r1.v + b0));
	}
	if (u < ch.total) {
		Unit r = loadUnit(c, ch, u);
		storeUnit(c, ch, u, a * grad(k, r.v, r.d, c) + (b1 * r.v + b0));
	}
}

// setSums records channel c's merged sums in the state (and in dgamma
// and dbeta with T_DGAMMA, T_DBETA).
void setSums(uint c, float sg, float sgx) {
	setStat(4u, c, sg);
	setStat(5u, c, sgx);
	if ((pc.tasks & T_DGAMMA) != 0u) dgamma[pc.dgBase + c] = sgx;
	if ((pc.tasks & T_DBETA) != 0u) dbeta[pc.dbBase + c] = sg;
}

// merge adds this dispatch's sums of channel c to the state's.
void merge(uint c) {
	vec2 s = sumPartials(c);
	if (gl_LocalInvocationID.x != 0u) return;
	float sg = s.x, sgx = s.y * (1.0 / sqrt(stat(1u, c) + pc.epsilon));
	if (pc.countBefore != 0.0) {
		sg += stat(4u, c);
		sgx += stat(5u, c);
	}
	setSums(c, sg, sgx);
}

void main() {
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
		// One chunk per channel (i = 0), no sums before: the merge's
		// arithmetic on the one partial, every invocation alike.
		Channel k = channelOf(c);
		vec2 s = chunkSums(k, c, 0u);
		float sg = s.x, sgx = s.y * (1.0 / sqrt(stat(1u, c) + pc.epsilon));
		if (gl_LocalInvocationID.x == 0u) setSums(c, sg, sgx);
		apply(k, c, 0u, sg, sgx);
	} else if ((pc.tasks & T_STATS) != 0u) {
		stats(c, i);
	} else {
		apply(channelOf(c), c, i, stat(4u, c), stat(5u, c));
	}
}
