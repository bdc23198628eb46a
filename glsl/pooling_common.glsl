// Shared by the forward pooling shaders (pooling_max, pooling_average,
// pooling_l2norm, pooling_max_argmax) and the L2-norm gradient's ratio
// pass.
//
// Images are NCHW float32, or half in the f16 variants (elem.glsl). The
// window of destination pixel (clipOrigin + (i, j)) is centred on
// offset + (SX*i, SY*j) in the source, its first tap at
// centre - floor(KE/2) with KE = (K-1)*D + 1 (MPS: even windows lean to the
// top left), taps D apart.
//
// One invocation computes a strip of OX destination pixels of one row, on
// PZ planes one after the other: gl_GlobalInvocationID.x is the strip
// (clip columns OX*x ... OX*x+OX-1), .y the clip row (rows y*OY ...
// y*OY+OY-1 where OY > 1), .z the planes
// (batch image n, channel c) z*PZ ... z*PZ+PZ-1 of the dispatch. The
// shader defines poolStrip, the work of one strip on one plane; main
// (below) works out the strip's columns once and runs it on each plane.
// Per window row it loads the SEG source columns its OX windows span once
// (neighbouring windows share columns), then every window takes its taps
// from registers. Many bytes in flight per invocation and few
// waves of invocations: these kernels are bound by memory latency, not by
// arithmetic. Reads outside the image use a clamped index (always valid
// memory) and a validity flag: no branch per tap.
//
// VW is the width of the loads: 1, or aligned pairs (2), quads (4) or, for
// float16, octets (8: 16 bytes, unpacked from uvec4) when
// the source's rows and planes start on multiples of VW and every strip's
// first column has the same remainder PAR mod VW (OX*SX a multiple of VW).
// VSTORE stores the OX results as vectors of VSTORE values: one vector of
// OX (2 or 4), or for OX = 8 two quads, the second only where the strip
// has 8 pixels in the clip (the destination rows, planes and clip are
// aligned to VSTORE); 0 stores value by value.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"
#include "pooling_geometry.glsl"

layout(local_size_x_id = 0, local_size_y_id = 10, local_size_z_id = 17) in;

layout(constant_id = 7) const bool CLAMP = false; // edge mode: taps outside are skipped (else read 0)
layout(constant_id = 8) const int VW = 1;         // load width: 1, 2 or 4 elements
layout(constant_id = 9) const int PAR = 0;        // a strip's first column mod VW
layout(constant_id = 15) const int OX = 1;        // destination pixels per invocation
layout(constant_id = 16) const int VSTORE = 0; // vector store width: 0 (value by value), 2 or 4
layout(constant_id = 22) const int PZ = 1;     // planes per invocation
// OY: destination rows per invocation, from row gl_GlobalInvocationID.y *
// OY (the strip's o and s are its first row's). main runs poolStrip on
// each row in turn, unless the shader defines POOL_STRIP_ROWS: then its
// poolStrip computes the OY rows itself (pooling_max.comp, whose pass on
// halves reduces the source rows neighbouring rows share once).
layout(constant_id = 23) const int OY = 1;

const int SEG = (OX - 1) * SX + KEX; // source columns a strip's windows span
const int NV = (PAR + SEG + VW - 1) / VW; // loads per row (VW > 1)

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 0) readonly buffer Src2 { ELEM2 src2[]; };
layout(std430, binding = 0) readonly buffer Src4 { ELEM4 src4[]; };
#ifdef VKMPS_F16
// Eight halves in one 16-byte load (VW = 8, float16 only).
layout(std430, binding = 0) readonly buffer Src8 { uvec4 src8[]; };
#endif
layout(std430, binding = 1) writeonly buffer Dst { DST_ELEM dst[]; };
layout(std430, binding = 1) writeonly buffer Dst2 { DST_ELEM2 dst2[]; };
layout(std430, binding = 1) writeonly buffer Dst4 { DST_ELEM4 dst4[]; };

#include "pooling_push.glsl"

// Strip is one invocation's destination pixels.
struct Strip {
	ivec2 o;      // clip position of its first pixel
	ivec2 s;      // source position of its first window's first tap
	int count;    // its pixels inside the clip, 1..OX
	uint n, c;    // batch image and channel within the dispatch
	uint srcOff;  // element offset of the source plane
	uint dstIdx;  // element index of the first destination pixel
};

// stripPlane points p at plane z of its invocation's PZ planes
// (gl_GlobalInvocationID.z * PZ + z); false past the dispatch's planes.
bool stripPlane(inout Strip p, int z) {
	uint plane = gl_GlobalInvocationID.z * uint(PZ) + uint(z);
	if (plane >= pc.planes) return false;
	uint ch = pc.channels;
	uvec2 nc = planeSplit(plane, ch, pc.srcBatch == ch * pc.srcPlane && pc.dstBatch == ch * pc.dstPlane &&
	                                     pc.amBatch == ch * pc.amPlane && pc.dyBatch == ch * pc.dyPlane);
	p.n = nc.x;
	p.c = nc.y;
	p.srcOff = pc.srcBase + p.n * pc.srcBatch + p.c * pc.srcPlane;
	ivec2 d = pc.clipOrigin + p.o;
	p.dstIdx = pc.dstBase + p.n * pc.dstBatch + p.c * pc.dstPlane + uint(d.y) * pc.dstWidth + uint(d.x);
	return true;
}

// rowOf returns strip p moved j destination rows down (its windows SY*j
// source rows down), on the same plane.
Strip rowOf(Strip p, int j) {
	p.o.y += j;
	p.s.y += j * SY;
	p.dstIdx += uint(j) * pc.dstWidth;
	return p;
}

// stripOf sets up the invocation's strip on its first plane; false when it
// has none.
bool stripOf(out Strip p) {
	p.o = ivec2(int(gl_GlobalInvocationID.x) * OX, int(gl_GlobalInvocationID.y) * OY);
	if (p.o.x >= pc.clipSize.x || p.o.y >= pc.clipSize.y) return false;
	p.count = min(OX, pc.clipSize.x - p.o.x);
	p.s = pc.offset + ivec2(SX, SY) * p.o - ivec2(KEX / 2, KEY / 2);
	return stripPlane(p, 0);
}

// The strip's source columns s.x + e, 0 <= e < SEG: clamped index and
// whether it lies in the image.
int colX[SEG];
bool colIn[SEG];

void columns(Strip p) {
	[[unroll]] for (int e = 0; e < SEG; e++) {
		int x = p.s.x + e;
		colIn[e] = x >= 0 && x < pc.srcSize.x;
		colX[e] = clamp(x, 0, pc.srcSize.x - 1);
	}
}

// One window row of the strip: segV[e] the value of column s.x + e
// (outside where it lies outside the image), segIn[e] its validity.
float segV[SEG];
bool segIn[SEG];

// loadRow fills segV and segIn with the strip's tap row ky, outside
// standing for taps outside the image; returns whether the row lies in
// the image.
bool loadRowOutside(Strip p, int ky, float outside) {
	int y = p.s.y + ky * DY;
	bool yin = y >= 0 && y < pc.srcSize.y;
	uint row = p.srcOff + uint(clamp(y, 0, pc.srcSize.y - 1) * pc.srcSize.x);
#ifdef VKMPS_F16
	if (VW == 8) {
		int a = (p.s.x - PAR) / 8;
		int octs = pc.srcSize.x / 8;
		vec2 v[NV * 4];
		[[unroll]] for (int t = 0; t < NV; t++) {
			uvec4 u = src8[(row >> 3) + uint(clamp(a + t, 0, octs - 1))];
			v[4 * t] = unpackHalf2x16(u.x);
			v[4 * t + 1] = unpackHalf2x16(u.y);
			v[4 * t + 2] = unpackHalf2x16(u.z);
			v[4 * t + 3] = unpackHalf2x16(u.w);
		}
		[[unroll]] for (int e = 0; e < SEG; e++) {
			segIn[e] = yin && colIn[e];
			segV[e] = segIn[e] ? v[(PAR + e) / 2][(PAR + e) % 2] : outside;
		}
		return yin;
	}
#endif
	if (VW == 4) {
		// Quads start at the multiple of 4 at or before the first column.
		int a = (p.s.x - PAR) / 4;
		int quads = pc.srcSize.x / 4;
		vec4 v[NV];
		[[unroll]] for (int t = 0; t < NV; t++) v[t] = LOAD4(src4[(row >> 2) + uint(clamp(a + t, 0, quads - 1))]);
		[[unroll]] for (int e = 0; e < SEG; e++) {
			segIn[e] = yin && colIn[e];
			segV[e] = segIn[e] ? v[(PAR + e) / 4][(PAR + e) % 4] : outside;
		}
	} else if (VW == 2) {
		int a = (p.s.x - PAR) / 2;
		int pairs = pc.srcSize.x / 2;
		vec2 v[NV];
		[[unroll]] for (int t = 0; t < NV; t++) v[t] = LOAD2(src2[(row >> 1) + uint(clamp(a + t, 0, pairs - 1))]);
		[[unroll]] for (int e = 0; e < SEG; e++) {
			segIn[e] = yin && colIn[e];
			segV[e] = segIn[e] ? v[(PAR + e) / 2][(PAR + e) % 2] : outside;
		}
	} else {
		[[unroll]] for (int e = 0; e < SEG; e++) {
			segIn[e] = yin && colIn[e];
			// Columns no window uses are never read (the compiler drops them).
			float x = LOAD(src[row + uint(colX[e])]);
			segV[e] = segIn[e] ? x : outside;
		}
	}
	return yin;
}

bool loadRow(Strip p, int ky) { return loadRowOutside(p, ky, 0.0); }

// fetchRows and unpackRow split loadRowOutside in two, for passes that
// issue the loads of all KH window rows before using any (more bytes in
// flight per invocation, whatever the compiler's scheduling): fetchRows
// loads the rows into raw, unpackRow(p, ky, outside) then fills segV and
// segIn from row ky as loadRowOutside does and returns the same. Built
// where the shader defines POOL_FETCH_ROWS.
#ifdef POOL_FETCH_ROWS
#ifdef VKMPS_F16
// Halves stay packed until unpackRow uses them: half the registers of
// the values in flight.
layout(std430, binding = 0) readonly buffer Src2h { uint src2h[]; };
layout(std430, binding = 0) readonly buffer Src4h { uvec2 src4h[]; };
uvec4 raw8[KH * NV];
uvec2 raw4h[KH * NV];
uint raw2h[KH * NV];
#endif
vec4 raw4[KH * NV];
vec2 raw2[KH * NV];
float raw1[KH * SEG];

void fetchRows(Strip p) {
	[[unroll]] for (int ky = 0; ky < KH; ky++) {
		uint row = p.srcOff + uint(clamp(p.s.y + ky * DY, 0, pc.srcSize.y - 1) * pc.srcSize.x);
#ifdef VKMPS_F16
		if (VW == 8) {
			int a = (p.s.x - PAR) / 8;
			[[unroll]] for (int t = 0; t < NV; t++) raw8[ky * NV + t] = src8[(row >> 3) + uint(clamp(a + t, 0, pc.srcSize.x / 8 - 1))];
			continue;
		}
#endif
		if (VW == 4) {
			int a = (p.s.x - PAR) / 4;
#ifdef VKMPS_F16
			[[unroll]] for (int t = 0; t < NV; t++) raw4h[ky * NV + t] = src4h[(row >> 2) + uint(clamp(a + t, 0, pc.srcSize.x / 4 - 1))];
#else
			[[unroll]] for (int t = 0; t < NV; t++) raw4[ky * NV + t] = LOAD4(src4[(row >> 2) + uint(clamp(a + t, 0, pc.srcSize.x / 4 - 1))]);
#endif
		} else if (VW == 2) {
			int a = (p.s.x - PAR) / 2;
#ifdef VKMPS_F16
			[[unroll]] for (int t = 0; t < NV; t++) raw2h[ky * NV + t] = src2h[(row >> 1) + uint(clamp(a + t, 0, pc.srcSize.x / 2 - 1))];
#else
			[[unroll]] for (int t = 0; t < NV; t++) raw2[ky * NV + t] = LOAD2(src2[(row >> 1) + uint(clamp(a + t, 0, pc.srcSize.x / 2 - 1))]);
#endif
		} else {
			[[unroll]] for (int e = 0; e < SEG; e++) raw1[ky * SEG + e] = LOAD(src[row + uint(colX[e])]);
		}
	}
}

bool unpackRow(Strip p, int ky, float outside) {
	int y = p.s.y + ky * DY;
	bool yin = y >= 0 && y < pc.srcSize.y;
	[[unroll]] for (int e = 0; e < SEG; e++) {
		int i = PAR + e;
		float x;
#ifdef VKMPS_F16
		if (VW == 8) {
			uvec4 u = raw8[ky * NV + i / 8];
			uint w = (i % 8) < 2 ? u.x : (i % 8) < 4 ? u.y : (i % 8) < 6 ? u.z : u.w;
			x = unpackHalf2x16(w)[i % 2];
		} else if (VW == 4) {
			uvec2 u = raw4h[ky * NV + i / 4];
			x = unpackHalf2x16((i % 4) < 2 ? u.x : u.y)[i % 2];
		} else if (VW == 2) {
			x = unpackHalf2x16(raw2h[ky * NV + i / 2])[i % 2];
		} else
#endif
		if (VW == 4) {
			x = raw4[ky * NV + i / 4][i % 4];
		} else if (VW == 2) {
			x = raw2[ky * NV + i / 2][i % 2];
		} else {
			x = raw1[ky * SEG + e];
		}
		segIn[e] = yin && colIn[e];
		segV[e] = segIn[e] ? x : outside;
	}
	return yin;
}
#endif

#ifdef VKMPS_F16A
// The "packedf16" builds' passes on halves (pooling_max.comp,
// pooling_max_argmax.comp) reduce the fetched 32-bit words themselves,
// two neighbouring columns a word (the lower in its low bits). They need
// the POOL_FETCH_ROWS views of the source.
#ifndef POOL_FETCH_ROWS
#error VKMPS_F16A needs POOL_FETCH_ROWS
#endif
const int NW = (NV * VW + 1) / 2; // words fetched per source row

// The words of the source row being reduced.
uint rw[NW];

// loadWords fetches the strip's words of source row p.s.y + r (clamped to
// the image) into rw.
void loadWords(Strip p, int r) {
	uint row = p.srcOff + uint(clamp(p.s.y + r, 0, pc.srcSize.y - 1) * pc.srcSize.x);
	int a = (p.s.x - PAR) / VW;
	[[unroll]] for (int t = 0; t < NV; t++) {
		int q = clamp(a + t, 0, pc.srcSize.x / VW - 1);
		if (VW == 8) {
			uvec4 u = src8[(row >> 3) + uint(q)];
			rw[4 * t] = u.x;
			rw[4 * t + 1] = u.y;
			rw[4 * t + 2] = u.z;
			rw[4 * t + 3] = u.w;
		} else if (VW == 4) {
			uvec2 u = src4h[(row >> 2) + uint(q)];
			rw[2 * t] = u.x;
			rw[2 * t + 1] = u.y;
		} else {
			rw[t] = src2h[(row >> 1) + uint(q)];
		}
	}
}
#endif

// Segment column of tap kx of the strip's window o.
int tapCol(int o, int kx) { return o * SX + kx * DX; }

// The strip's results, stored by storeResults.
float res[OX];

// storeResults writes res[0 .. count) to the destination.
void storeResults(Strip p) {
	if (VSTORE == 4) {
		[[unroll]] for (int q = 0; q < OX / 4; q++) {
			if (q == 0 || 4 * q < p.count)
				dst4[(p.dstIdx >> 2) + uint(q)] = STORE_DST4(vec4(res[4 * q], res[min(4 * q + 1, OX - 1)], res[min(4 * q + 2, OX - 1)],
				                                                  res[min(4 * q + 3, OX - 1)]));
		}
	} else if (VSTORE == 2) {
		[[unroll]] for (int q = 0; q < OX / 2; q++) {
			if (q == 0 || 2 * q < p.count) dst2[(p.dstIdx >> 1) + uint(q)] = STORE_DST2(vec2(res[2 * q], res[min(2 * q + 1, OX - 1)]));
		}
	} else {
		[[unroll]] for (int o = 0; o < OX; o++) {
			if (o < p.count) dst[p.dstIdx + uint(o)] = STORE_DST(res[o]);
		}
	}
}

// Whether the strip's window o has a tap inside the image.
bool anyTap(Strip p, int o) {
	return counted(p.s.x + o * SX, KW, DX, 0, pc.srcSize.x) > 0 && counted(p.s.y, KH, DY, 0, pc.srcSize.y) > 0;
}

const float NEG_INF = -1.0 / 0.0;

float quietNaN() { return uintBitsToFloat(0x7fc00000u); }

// poolStrip computes strip p on its current plane, its row p.o.y (or its
// OY rows from p.o.y under POOL_STRIP_ROWS; the including shader defines
// it).
void poolStrip(Strip p);

void main() {
	Strip p;
	if (!stripOf(p)) return;
	columns(p);
	[[unroll]] for (int z = 0; z < PZ; z++) {
		if (z > 0 && !stripPlane(p, z)) break;
#ifndef POOL_STRIP_ROWS
		// (One row is the plain call: on an H200 the loop's form of it took
		// the float16 argmax passes 8-19% longer.)
		if (OY > 1) {
			[[unroll]] for (int j = 0; j < OY; j++) {
				Strip q = rowOf(p, j);
				if (q.o.y >= pc.clipSize.y) break;
				poolStrip(q);
			}
			continue;
		}
#endif
		poolStrip(p);
	}
}
