// Shared by upsampling.comp and upsampling_grad.comp (MPSCNNUpsampling*,
// PyTorch F.interpolate with integer scale factors SX, SY).
//
// Images are NCHW float32, or half in the f16 variants (elem.glsl). One
// invocation writes a quad: 4 consecutive pixels of one row of the image
// it writes (the forward's destination, the gradient's dx), as one vector
// store when VOUT (rows and the first plane start on multiples of 4),
// else as scalars. Work items (quad, row, plane) are numbered row-major
// and flattened over a 2D grid of workgroups.
//
// Source positions along an axis of n source pixels and out = n*s
// upsampled ones, for upsampled index d (taps):
//   MODE 0 nearest:                  i0 = d / s
//   MODE 1 bilinear, align_corners false: src = max(0, (2d + 1 - s) / (2s))
//   MODE 2 bilinear, align_corners true:  src = d (n-1) / (out-1)
// i0 = floor(src), i1 = min(i0 + 1, n-1), lambda = src - i0, computed as
// integers (the quotient and remainder of the fraction) and
// lambda = remainder * inv with inv = 1/(2s) or 1/(out-1) from the host:
// exact integer positions, one correctly rounded product for the weight.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int MODE = 0;      // 0 nearest, 1 bilinear, 2 bilinear with aligned corners
layout(constant_id = 2) const int SX = 1;        // integer scale factors
layout(constant_id = 3) const int SY = 1;
layout(constant_id = 4) const bool VIN = false;  // vector loads of the image read (the gradient's dy rows)
layout(constant_id = 5) const bool VOUT = false; // vector stores

layout(push_constant) uniform Push {
	int w, h;         // source plane: the forward's source, the gradient's dx
	int wo, ho;       // upsampled plane: w*SX, h*SY
	uint quads;       // quads per row of the written image
	uint rows;        // item rows per plane
	uint channels;    // channels of the dispatch
	uint items;       // quads * rows * planes of the dispatch
	uint inBase;      // element of the first plane of the dispatch in the read binding
	uint outBase;     // ... in the written binding
	uint inBatch;     // elements per batch image of the image read (channel views: all its channels)
	uint outBatch;    // ... of the image written
	uint inPlane;     // elements per plane of the image read
	uint outPlane;    // ... of the image written
	float invX, invY; // lambda = remainder * inv
	uint quadsM, quadsS, rowsM, rowsS, chM, chS; // fast division by quads, rows and channels (fdiv)
	uint denXM, denXS, denYM, denYS; // MODE 2: fast division by wo-1 and ho-1 (1 where 0)
	uint exact;       // MODE 2: 1 where a position's numerator may reach 2^31 (true divisions)
} pc;

// fdiv returns n / d for n < 2^31 given d's magic number m and shift s
// (the host's upMagic: s = ceil(log2 d), m = 2^32 (2^s - d) / d + 1):
// a multiply-high, an add and a shift instead of a division.
uint fdiv(uint n, uint m, uint s) {
	uint hi, lo;
	umulExtended(n, m, hi, lo);
	return (hi + n) >> s;
}

// udiv returns n / d: fdiv with d's magic numbers, or a true division
// where pc.exact says n may reach 2^31.
uint udiv(uint n, uint d, uint m, uint s) {
	return pc.exact != 0u ? n / d : fdiv(n, m, s);
}

// workItem decodes the invocation's item: quad q, row, and the first
// element of its plane in the read and the written binding; false past the
// end.
bool workItem(out int q, out int row, out uint inP, out uint outP) {
	uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
	if (i >= pc.items) return false;
	uint r = fdiv(i, pc.quadsM, pc.quadsS);
	q = int(i - r * pc.quads);
	uint plane = fdiv(r, pc.rowsM, pc.rowsS);
	row = int(r - plane * pc.rows);
	uint b = fdiv(plane, pc.chM, pc.chS);
	uint c = plane - b * pc.channels;
	inP = pc.inBase + b * pc.inBatch + c * pc.inPlane;
	outP = pc.outBase + b * pc.outBatch + c * pc.outPlane;
	return true;
}

// taps returns the source indices and weight of upsampled index d along an
// axis of n source pixels scaled by s (MODE 1, 2; see above); m and sh are
// the magic numbers of out-1 (MODE 2).
void taps(int d, int n, int s, float inv, uint m, uint sh, out int i0, out int i1, out float l) {
	i0 = 0;
	l = 0.0;
	if (MODE == 1) {
		int num = 2 * d + 1 - s;
		if (num > 0) {
			i0 = num / (2 * s);
			l = float(num - i0 * 2 * s) * inv;
		}
	} else if (MODE == 2) {
		uint den = uint(n * s - 1);
		if (den > 0u) {
			uint num = uint(d) * uint(n - 1); // < 2^32: the host checks out*(n-1)
			uint qt = udiv(num, den, m, sh);
			i0 = int(qt);
			l = float(num - qt * den) * inv;
		}
	} else {
		i0 = d / s;
	}
	i1 = i0 < n - 1 ? i0 + 1 : i0;
}
