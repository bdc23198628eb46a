// Shared by dropout.comp (MPSCNNDropout) and dropout_grad.comp
// (MPSCNNDropoutGradient).
//
// Images are NCHW float32, or half in the f16 variants (elem.glsl). Work is
// split into groups of 32 columns of one row (row-major over the planes of
// the dispatch), each done by 8 consecutive invocations ("lanes") of 4
// columns: one Philox call per lane, and one 32-bit mask word per group.
// The invocations are flattened over a 2D grid of workgroups (the
// workgroup size is a multiple of 8).
//
// The mask has its own shape: N x (C or 1) x (H or 1) x (W or 1) for mask
// strides (SX, SY, SC) of 1 or 0 (a stride of 0 broadcasts). It is stored
// as bits, 32 to a word, each mask row starting a new word:
// word ((n*maskC + c)*maskH + y)*maskRowWords + x/32, bit x%32, for mask
// element (n, c, y, x); image element (n, c, y, x) uses mask element
// (n, SC*c, SY*y, SX*x). Mask element (n, c, y, x) is kept when
//   philox4x32_10((x>>2, y, n*maskC + c, draw), (seedLo, seedHi))[x&3] < threshold
// (integer arithmetic only: every device computes the same mask).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SX = 1; // mask strides: 1, or 0 to broadcast
layout(constant_id = 2) const uint SY = 1;
layout(constant_id = 3) const uint SC = 1;
layout(constant_id = 4) const bool VEC = false; // vector loads and stores (rows and the first plane on multiples of 4)

layout(push_constant) uniform Push {
	uint w, h;          // image plane
	uint channels;      // channels of the dispatch
	uint items;         // 32-column groups of the dispatch: planes * h * groups
	uint groups;        // groups per row: ceil(w / 32)
	uint srcBase;       // element of the dispatch's first plane in the read binding
	uint dstBase;       // ... in the written binding
	uint srcBatch;      // elements per batch image of the image read (channel views: all its channels)
	uint dstBatch;      // ... of the image written
	uint n0, c0;        // batch image and channel of the dispatch's first plane
	uint maskC, maskH;  // mask channels (C or 1) and rows (H or 1)
	uint maskRowWords;  // words per mask row
	uint seedLo, seedHi;
	uint threshold;     // keep when the random word is below it: floor(keep * 2^32)
	float scale;        // 1/keep rounded to float32
	uint groupsM, groupsS, hM, hS, chM, chS; // fast division by groups, h and channels (fdiv)
} pc;

// fdiv returns n / d for n < 2^31 given d's magic number m and shift s
// (the host's upMagic: s = ceil(log2 d), m = 2^32 (2^s - d) / d + 1):
// a multiply-high, an add and a shift instead of a division.
uint fdiv(uint n, uint m, uint s) {
	uint hi, lo;
	umulExtended(n, m, hi, lo);
	return (hi + n) >> s;
}

// Lane is one invocation's share: 4 columns of one row.
struct Lane {
	uint lane;   // 0..7 within its group
	bool live;   // inside the dispatch
	uint x0;     // its first column
	uint y;
	uint src;    // element (x0, y) of its plane in the read binding
	uint dst;    // ... in the written binding
	uint word;   // its mask word
	uint plane;  // mask plane n*maskC + c: the Philox counter's third word
	uint my;     // mask row
	bool writer; // its group's mask word is written by it (the forward): the
	             // first of the image elements sharing a broadcast mask word
};

Lane laneOf() {
	Lane l;
	uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	l.lane = i & 7u;
	uint item = i >> 3;
	l.live = item < pc.items;
	if (!l.live) item = 0u;
	uint r = fdiv(item, pc.groupsM, pc.groupsS);
	uint g = item - r * pc.groups;
	uint plane = fdiv(r, pc.hM, pc.hS);
	l.y = r - plane * pc.h;
	uint b = fdiv(plane, pc.chM, pc.chS);
	uint c = plane - b * pc.channels;
	l.x0 = g * 32u + l.lane * 4u;
	uint rowOff = l.y * pc.w;
	l.src = pc.srcBase + b * pc.srcBatch + c * pc.w * pc.h + rowOff;
	l.dst = pc.dstBase + b * pc.dstBatch + c * pc.w * pc.h + rowOff;
	uint n = pc.n0 + b, ch = pc.c0 + c;
	l.plane = n * pc.maskC + SC * ch;
	l.my = SY * l.y;
	l.word = (l.plane * pc.maskH + l.my) * pc.maskRowWords + SX * g;
	l.writer = (SC == 1u || ch == 0u) && (SY == 1u || l.y == 0u) && (SX == 1u || g == 0u);
	return l;
}

uvec4 philox(uvec4 ctr, uvec2 key) {
	[[unroll]] for (int r = 0; r < 10; r++) {
		if (r > 0) key += uvec2(0x9E3779B9u, 0xBB67AE85u);
		uint hi0, lo0, hi1, lo1;
		umulExtended(0xD2511F53u, ctr.x, hi0, lo0);
		umulExtended(0xCD9E8D57u, ctr.z, hi1, lo1);
		ctr = uvec4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
	}
	return ctr;
}
