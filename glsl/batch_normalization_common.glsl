// Shared by batch_normalization.comp (forward) and
// batch_normalization_grad.comp (gradient): how a channel's N*H*W values
// are cut into chunks, and the fixed-order reductions that make every
// result repeat bit for bit.
//
// A dispatch covers `channels` channels of `batches` batch images. Channel
// c's values are cut into `chunks` chunks: a chunk is `group` whole planes
// (small planes) or one `seg`-long segment of one plane (large planes,
// `segs` segments a plane). Workgroup w does chunk w % chunks of channel
// w / chunks (statistics and apply dispatches), or merges channel w
// (merge dispatches).
//
// Every pass is a plain data-parallel dispatch; the ops side orders them
// (statistics, then merge, then apply) with the pipeline barriers the
// runtime records between dependent dispatches. No workgroup waits on
// another and no sum depends on the order in which workgroups run:
// a chunk's partial sums are added in a fixed order inside its workgroup
// (per invocation in a fixed stride, then a fixed tree), and a channel's
// partials the same way by one workgroup of the merge.
//
// The includer declares the push constants `pc` (with the chunk fields
// used below) before including this file.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
// VEC: values per load, 1 or 4 (planes, segments and bases multiples of 4).
layout(constant_id = 1) const int VEC = 1;

#define LOCAL gl_WorkGroupSize.x

// Task bits of pc.tasks (ops/batch_normalization.go's bnTask*).
#define T_STATS 1u        // partial sums of each chunk into the scratch buffer
#define T_APPLY 2u        // normalize (forward) or dx (gradient), chunk by chunk
#define T_MERGE 4u        // one workgroup per channel adds its partials into the state
#define T_RUNNING 8u      // update the running statistics from the state
#define S_STATE 16u       // apply: the statistics (gradient sums) come from the state
#define S_RUNNING 32u     // apply: the running mean and variance (inference)
#define T_WRITE_STATE 64u // apply (forward): chunk 0 records gamma and beta (and the running statistics) in the state
#define T_UPDATE 128u     // merge (forward): also update the running statistics
#define T_TRAINING 256u   // gradient: training-mode dx (the statistics depend on x)
#define T_DGAMMA 512u     // gradient merge: also write dgamma
#define T_DBETA 1024u     // gradient merge: also write dbeta
// T_STATS with T_APPLY: the fused pass, one workgroup per channel whose
// values are one chunk, over a batch that is one dispatch: the chunk's
// sums, the merge (no earlier values) and the apply in one workgroup,
// with the same arithmetic in the same order as the three passes, so
// the same results.
#define T_FUSED (T_STATS | T_APPLY)

shared float redA[gl_WorkGroupSize.x];
shared float redB[gl_WorkGroupSize.x];

// reduce2 returns the workgroup's sum of v, in a fixed order, to every
// invocation. Called in uniform control flow.
vec2 reduce2(vec2 v) {
	uint lid = gl_LocalInvocationID.x;
	redA[lid] = v.x;
	redB[lid] = v.y;
	barrier();
	for (uint s = LOCAL / 2u; s > 0u; s >>= 1) {
		if (lid < s) {
			redA[lid] += redA[lid + s];
			redB[lid] += redB[lid + s];
		}
		barrier();
	}
	vec2 r = vec2(redA[0], redB[0]);
	barrier();
	return r;
}

// Chunk is a chunk's planes [n0, n1) and first pixel p0; su is its load
// units (VEC values) per plane, total its units in all.
struct Chunk {
	uint n0, n1, p0, su, total;
};

Chunk chunkOf(uint i) {
	Chunk ch;
	uint ng = i / pc.segs, s = i % pc.segs;
	ch.n0 = ng * pc.group;
	ch.n1 = min(pc.batches, ch.n0 + pc.group);
	ch.p0 = s * pc.seg;
	ch.su = (min(pc.plane, ch.p0 + pc.seg) - ch.p0) / uint(VEC);
	ch.total = (ch.n1 - ch.n0) * ch.su;
	return ch;
}

// unitAt returns the batch image and first pixel of unit u of ch.
void unitAt(Chunk ch, uint u, out uint n, out uint p) {
	if (pc.group == 1u) {
		n = ch.n0;
		p = ch.p0 + u * uint(VEC);
	} else {
		n = ch.n0 + u / ch.su;
		p = ch.p0 + (u % ch.su) * uint(VEC);
	}
}

// workgroup is the flat index of this workgroup (dispatches wider than
// the device's x count are 2-D).
uint workgroup() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }

// The scratch buffer: the two partial sums of chunk i of channel c at
// c*chunks + i.
layout(std430, binding = SCRATCH_BINDING) buffer Scratch { vec2 part[]; };

// sumPartials returns the sum of channel c's partials, in a fixed order,
// to every invocation.
vec2 sumPartials(uint c) {
	vec2 acc = vec2(0.0);
	for (uint i = gl_LocalInvocationID.x; i < pc.chunks; i += LOCAL) acc += part[c * pc.chunks + i];
	return reduce2(acc);
}
