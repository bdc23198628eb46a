#version 450
// UpsamplingBilinearGradient (MPSCNNUpsamplingBilinearGradient; PyTorch's
// autograd of F.interpolate, integer scales SX, SY): dx[p] = the sum over
// the upsampled pixels d that blend source pixel p of weight(d, p) * dy[d]
// (the transpose of upsampling.comp's bilinear modes; positions as in
// upsampling_common.glsl), gathered without atomics: the same bits on
// every run and every split of the work.
//
// An invocation takes one dx pixel x of a segment of pc.rowsPer dx rows of
// one plane; neighbouring invocations take neighbouring pixels of a row,
// so their dy loads (about SX values apart) and dx stores coalesce. Its
// column weights come first: the dy columns whose i0 or i1 is x, at most
// MAXC of them from lo(x), weight (1 - lambda where i0 = x) + (lambda
// where i1 = x). Then it walks down the dy rows of its segment in order,
// once each: a row's weighted sum h of those columns goes to the dx rows
// i0 (1 - lambda) and i1 (lambda) of the row's position, which only grow,
// so two accumulators suffice (rows a and a+1); row a is complete, and
// stored, when the position moves past it. Per dx value: per dy row
// (ascending) the sum of its columns (ascending) times their weights,
// times the row's weight. Positions are integer quotients and remainders
// (constant divisors for MODE 1; multiply-high divisions once per
// invocation and one step per column or row for MODE 2), weights
// remainder * inv. Zero weights are skipped: a NaN in dy reaches only the
// pixels that read it with a nonzero weight.
//   MODE 1 align_corners false: src = max(0, (2d + 1 - s) / (2s)).
//   MODE 2 align_corners true:  src = d (n-1) / (out-1).
// vkmps:variant f16 -DVKMPS_F16
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int MODE = 1;
layout(constant_id = 2) const int SX = 1;
layout(constant_id = 3) const int SY = 1;

// The most dy columns a dx pixel reads: the window 2s + (s odd) of MODE 1;
// 4s - 2 for MODE 2 (sources of 2 pixels; fewer for wider ones).
const int MAXC = MODE == 2 ? 4 * SX - 2 : 2 * SX + (SX & 1);
// Up to 32 columns, their weights are held in registers (the loops over
// them unrolled); wider scales recompute them for every row.
const bool CACHE = MAXC <= 32;
const int NC = CACHE ? MAXC : 1;

layout(std430, binding = 0) readonly buffer Dy { ELEM dy[]; };
layout(std430, binding = 1) writeonly buffer Dx { ELEM dx[]; };

layout(push_constant) uniform Push {
	int w, h;         // dx plane
	int wo, ho;       // dy plane: w*SX, h*SY
	uint segs;        // row segments per plane
	uint rowsPer;     // dx rows per segment
	uint channels;    // channels of the dispatch
	uint items;       // w * segs * planes of the dispatch
	uint inBase;      // element of the dispatch's first dy plane
	uint outBase;     // ... dx plane
	uint inBatch;     // elements per batch image of dy (channel views: all its channels)
	uint outBatch;    // ... of dx
	uint inPlane;     // elements per plane of dy
	uint outPlane;    // ... of dx
	float invX, invY; // lambda = remainder * inv: 1/(2s), or 1/(out-1) (0 for out = 1)
	uint wM, wS, segsM, segsS, chM, chS; // fdiv magic numbers of w, segs and channels
	uint denXM, denXS, denYM, denYS;     // MODE 2: of wo-1 and ho-1 (1 where 0)
	uint nXM, nXS, nYM, nYS;             // MODE 2: of w-1 and h-1 (1 where 0)
	uint exact;       // MODE 2: 1 where a numerator may reach 2^31 (true divisions)
} pc;

// fdiv returns n / d for n < 2^31 given d's magic number m and shift s
// (the host's upMagic).
uint fdiv(uint n, uint m, uint s) {
	uint hi, lo;
	umulExtended(n, m, hi, lo);
	return (hi + n) >> s;
}

uint udiv(uint n, uint d, uint m, uint s) {
	return pc.exact != 0u ? n / d : fdiv(n, m, s);
}

// Axis is what the position arithmetic of one axis needs: n source
// pixels, out = n*s upsampled ones, the weight factor and MODE 2's magic
// numbers of out-1 (den) and n-1.
struct Axis {
	int n, out_, s;
	float inv;
	uint denM, denS, nM, nS;
};

// lo and hi bound the upsampled indices whose i0 or i1 can be source
// pixel p: i0(d) in [p-1, p].
int lo(Axis ax, int p) {
	if (MODE == 1) return max(0, (p - 1) * ax.s + ax.s / 2);
	if (ax.n == 1 || p == 0) return 0;
	return int(udiv(uint(p - 1) * uint(ax.out_ - 1) + uint(ax.n - 2), uint(ax.n - 1), ax.nM, ax.nS));
}
int hi(Axis ax, int p) {
	if (MODE == 1) return min(ax.out_ - 1, (p + 1) * ax.s + (ax.s + 1) / 2 - 1);
	if (ax.n == 1) return ax.out_ - 1;
	return min(ax.out_ - 1, int(udiv(uint(p + 1) * uint(ax.out_ - 1) - 1u, uint(ax.n - 1), ax.nM, ax.nS)));
}

// Pos is a position along an axis: i0 and the remainder giving lambda.
struct Pos {
	int i0;
	uint rem;
};

// at returns the position of upsampled index d.
Pos at(Axis ax, int d) {
	Pos q = Pos(0, 0u);
	if (MODE == 1) {
		int num = 2 * d + 1 - ax.s;
		if (num > 0) {
			q.i0 = num / (2 * ax.s);
			q.rem = uint(num - q.i0 * 2 * ax.s);
		}
	} else {
		uint den = uint(ax.out_ - 1);
		if (den > 0u) {
			uint num = uint(d) * uint(ax.n - 1); // < 2^32: the host checks out*(n-1)
			q.i0 = int(udiv(num, den, ax.denM, ax.denS));
			q.rem = num - uint(q.i0) * den;
		}
	}
	return q;
}

// next returns the position of index d+1 from that of d (MODE 2: the step
// n-1 is below the divisor out-1, at most one carry).
Pos next(Axis ax, Pos q, int d) {
	if (MODE == 1) return at(ax, d + 1);
	uint den = uint(ax.out_ - 1);
	if (den == 0u) return q;
	q.rem += uint(ax.n - 1);
	if (q.rem >= den) {
		q.rem -= den;
		q.i0++;
	}
	return q;
}

// weight returns source pixel x's weight for an upsampled column at
// position q: 1 - lambda where i0 = x, plus lambda where i1 = x.
float weight(Pos q, int x) {
	int i1 = min(q.i0 + 1, pc.w - 1);
	float l = float(q.rem) * pc.invX;
	return (q.i0 == x ? 1.0 - l : 0.0) + (i1 == x ? l : 0.0);
}

void main() {
	uint item = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (item >= pc.items) return;
	uint t = fdiv(item, pc.wM, pc.wS);
	int x = int(item - t * uint(pc.w));
	uint plane = fdiv(t, pc.segsM, pc.segsS);
	uint seg = t - plane * pc.segs;
	uint b = fdiv(plane, pc.chM, pc.chS);
	uint c = plane - b * pc.channels;
	uint ip = pc.inBase + b * pc.inBatch + c * pc.inPlane;
	uint op = pc.outBase + b * pc.outBatch + c * pc.outPlane + uint(x);
	int py0 = int(seg * pc.rowsPer), py1 = min(py0 + int(pc.rowsPer), pc.h);
	Axis ax = Axis(pc.w, pc.wo, SX, pc.invX, pc.denXM, pc.denXS, pc.nXM, pc.nXS);
	Axis ay = Axis(pc.h, pc.ho, SY, pc.invY, pc.denYM, pc.denYS, pc.nYM, pc.nYS);

	// Pixel x's weight for each of its columns clo + k (0 past chi).
	int clo = lo(ax, x), chi = hi(ax, x);
	Pos q0 = at(ax, clo);
	float wx[NC];
	if (CACHE) {
		Pos q = q0;
		[[unroll]] for (int k = 0; k < NC; k++) {
			if (k > 0) q = next(ax, q, clo + k - 1);
			wx[k] = clo + k <= chi ? weight(q, x) : 0.0;
		}
	}

	// The dy rows of the segment's dx rows, in order; rows a and a+1
	// accumulate.
	int r0 = lo(ay, py0), r1 = hi(ay, py1 - 1);
	Pos p = at(ay, r0);
	int a = p.i0;
	float accA = 0.0, accB = 0.0;
	uint rb = ip + uint(r0 * pc.wo + clo);
	for (int r = r0; r <= r1; r++) {
		if (r > r0) p = next(ay, p, r - 1);
		if (p.i0 != a) { // moved on by one: row a is complete
			if (a >= py0 && a < py1) dx[op + uint(a * pc.w)] = STORE(accA);
			accA = accB;
			accB = 0.0;
			a = p.i0;
		}
		float hs = 0.0;
		if (CACHE) {
			[[unroll]] for (int k = 0; k < NC; k++) {
				if (wx[k] != 0.0) hs += wx[k] * LOAD(dy[rb + uint(k)]);
			}
		} else {
			Pos q = q0;
			for (int k = 0; clo + k <= chi; k++) {
				if (k > 0) q = next(ax, q, clo + k - 1);
				float wk = weight(q, x);
				if (wk != 0.0) hs += wk * LOAD(dy[rb + uint(k)]);
			}
		}
		rb += uint(pc.wo);
		float l = float(p.rem) * pc.invY;
		accA += (1.0 - l) * hs;
		if (l != 0.0) {
			if (a < pc.h - 1) {
				accB += l * hs;
			} else {
				accA += l * hs; // i1 clamped to i0
			}
		}
	}
	if (a >= py0 && a < py1) dx[op + uint(a * pc.w)] = STORE(accA);
	if (a + 1 >= py0 && a + 1 < py1) dx[op + uint((a + 1) * pc.w)] = STORE(accB);
}
