// Shared by the forward pooling shaders (pooling_max, pooling_average,
// pooling_l2norm) and the L2-norm gradient's ratio pass.
//
// Images are NCHW float32, or half in the f16 variants (elem.glsl). The window of destination pixel
// (clipOrigin + (i, j)) is centred on offset + (SX*i, SY*j) in the source,
// its first tap at centre - floor(KE/2) with KE = (K-1)*D + 1 (MPS: even
// windows lean to the top left), taps D apart.
//
// One invocation computes one destination pixel: gl_GlobalInvocationID.x is
// its clip column, .y its clip row, .z the plane (batch image n, channel c)
// of the dispatch, so neighbouring invocations read neighbouring columns and
// nothing is divided per pixel. Reads outside the image use a clamped index
// (always valid memory) and a validity flag: no branch per tap.
//
// With VEC2 (stride 2, dilation 1, even source width and plane offset),
// taps are loaded as aligned pairs: one 8-byte load serves two taps, which
// halves the memory requests of a warp. PAR is the parity of a window's
// first column (the same for every window of a dispatch).
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"

layout(local_size_x_id = 0, local_size_y_id = 10) in;

layout(constant_id = 1) const int KW = 2;  // kernel width
layout(constant_id = 2) const int KH = 2;  // kernel height
layout(constant_id = 3) const int SX = 1;  // stride x
layout(constant_id = 4) const int SY = 1;  // stride y
layout(constant_id = 5) const int DX = 1;  // dilation x
layout(constant_id = 6) const int DY = 1;  // dilation y
layout(constant_id = 7) const bool CLAMP = false; // edge mode: taps outside are skipped (else read 0)
layout(constant_id = 8) const bool VEC2 = false;  // pairwise loads (SX == 2, DX == 1)
layout(constant_id = 9) const int PAR = 0;        // parity of a window's first column (VEC2)

const int KEX = (KW - 1) * DX + 1;   // window extent
const int KEY = (KH - 1) * DY + 1;
const int NP = (PAR + KEX + 1) / 2;  // pairs a window row spans (VEC2)

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 0) readonly buffer Src2 { ELEM2 src2[]; };
layout(std430, binding = 1) writeonly buffer Dst { DST_ELEM dst[]; };

layout(push_constant) uniform Push {
	ivec2 srcSize;    // source W, H
	ivec2 clipOrigin; // destination x, y of the first pixel written
	ivec2 clipSize;   // pixels written per axis
	ivec2 offset;     // source position of the window centre of clipOrigin
	ivec4 region;     // average: taps counted in N lie in [x0, x1) x [y0, y1)
	uint srcBase;     // element offset of plane (0, 0) in the bound source range
	uint dstBase;     // element offset of plane (0, 0) in the bound destination range
	uint srcBatch;    // elements between consecutive batch images, source
	uint dstBatch;    // elements between consecutive batch images, destination
	uint channels;    // channels per batch image in this dispatch
	uint srcPlane;    // source H*W
	uint dstPlane;    // destination H*W
	uint dstWidth;    // destination W
	uint amBase;      // argmax: word offset of plane (0, 0) in the argmax range
	uint amBatch;     // words between consecutive batch images of the argmax buffer
	uint amPlane;     // words per argmax plane
	uint dyBase;      // L2 ratio pass: element offset of plane (0, 0) of dy
	uint dyBatch;     // elements between consecutive batch images of dy
	uint dyPlane;     // dy H*W
} pc;

// Pixel is one invocation's destination pixel.
struct Pixel {
	ivec2 o;      // clip position
	ivec2 s;      // source position of its window's first tap
	uint n, c;    // batch image and channel within the dispatch
	uint srcOff;  // element offset of the source plane
	uint dstIdx;  // element index of the destination pixel
};

bool pixelOf(out Pixel p) {
	p.o = ivec2(gl_GlobalInvocationID.xy);
	if (p.o.x >= pc.clipSize.x || p.o.y >= pc.clipSize.y) return false;
	uint plane = gl_GlobalInvocationID.z;
	p.n = plane / pc.channels;
	p.c = plane % pc.channels;
	p.srcOff = pc.srcBase + p.n * pc.srcBatch + p.c * pc.srcPlane;
	ivec2 d = pc.clipOrigin + p.o;
	p.dstIdx = pc.dstBase + p.n * pc.dstBatch + p.c * pc.dstPlane + uint(d.y) * pc.dstWidth + uint(d.x);
	p.s = pc.offset + ivec2(SX, SY) * p.o - ivec2(KEX / 2, KEY / 2);
	return true;
}

// The taps of one window row: values (0 outside the image) and validity.
float rowV[KW];
bool rowIn[KW];

// Column of tap kx, clamped, and whether it lies in the image.
int colX[KW];
bool colIn[KW];

void columns(Pixel p) {
	for (int kx = 0; kx < KW; kx++) {
		int x = p.s.x + kx * DX;
		colIn[kx] = x >= 0 && x < pc.srcSize.x;
		colX[kx] = clamp(x, 0, pc.srcSize.x - 1);
	}
}

// loadRow fills rowV and rowIn with tap row ky of p's window, rowV holding
// outside where a tap is outside the image; returns whether the row lies in
// the image.
bool loadRowOutside(Pixel p, int ky, float outside) {
	int y = p.s.y + ky * DY;
	bool yin = y >= 0 && y < pc.srcSize.y;
	uint row = p.srcOff + uint(clamp(y, 0, pc.srcSize.y - 1) * pc.srcSize.x);
	if (VEC2) {
		// Pairs start at the even column at or before the first tap.
		int a = p.s.x - PAR;
		int pairs = pc.srcSize.x / 2;
		vec2 v[NP];
		for (int t = 0; t < NP; t++) {
			v[t] = LOAD2(src2[(row >> 1) + uint(clamp(a / 2 + t, 0, pairs - 1))]);
		}
		for (int kx = 0; kx < KW; kx++) {
			int e = PAR + kx; // element of the pair sequence
			float x = (e & 1) == 0 ? v[e / 2].x : v[e / 2].y;
			rowIn[kx] = yin && colIn[kx];
			rowV[kx] = rowIn[kx] ? x : outside;
		}
	} else {
		for (int kx = 0; kx < KW; kx++) {
			rowIn[kx] = yin && colIn[kx];
			float x = LOAD(src[row + uint(colX[kx])]);
			rowV[kx] = rowIn[kx] ? x : outside;
		}
	}
	return yin;
}

bool loadRow(Pixel p, int ky) { return loadRowOutside(p, ky, 0.0); }

// floor(a / b) for b > 0.
int floorDiv(int a, int b) {
	return a >= 0 ? a / b : -((b - 1 - a) / b);
}

// Taps of a window starting at s (k taps d apart) inside [lo, hi), in
// closed form.
int counted(int s, int k, int d, int lo, int hi) {
	int t0 = max(0, -floorDiv(s - lo, d));
	int t1 = min(k - 1, floorDiv(hi - 1 - s, d));
	return max(0, t1 - t0 + 1);
}

// Whether p's window has a tap inside the image.
bool anyTap(Pixel p) {
	return counted(p.s.x, KW, DX, 0, pc.srcSize.x) > 0 && counted(p.s.y, KH, DY, 0, pc.srcSize.y) > 0;
}

const float NEG_INF = -1.0 / 0.0;

float quietNaN() { return uintBitsToFloat(0x7fc00000u); }
