// Shared by the pooling gradient gathers (pooling_*_grad.comp).
//
// A gradient gathers: dx[p] is the sum of the contributions of every
// forward window that holds p, added in ascending window order (row-major
// over dy) in float32. No atomics, so every run on every device adds the
// same values in the same order.
//
// Windows are numbered by their dy pixel w (absolute dy coordinates); only
// w inside the forward clip [winLo, winHi) counts. Window w's first tap lies
// at dx position winBase + (SX, SY)*w and its taps step by (DX, DY):
// winBase = clipOrigin - (Offset*stride + KernelOffset) - floor(ke/2)
// (MPSCNNGradientKernel: the effective offset Offset*stride + KernelOffset is
// the position of the clip origin in the source gradient upsampled by the
// stride with zero insertion).
//
// A cell is the SX x SY dx pixels winBase + (SX*m + fx, SY*n + fy),
// 0 <= fx < SX, 0 <= fy < SY. Cells line up with the window grid, so which
// windows hold which pixel of a cell, and at which tap, is known when the
// shader is specialised: window (m-a, n-b) holds pixel (fx, fy) at tap
// ((SY*b + fy)/DY, (SX*a + fx)/DX) when those offsets are inside the window
// and on a tap. One invocation computes CX neighbouring cells of a row; it
// reads each window that holds one of its pixels once (WX columns, AY
// rows) and adds it to the pixels it holds. gl_GlobalInvocationID.x
// numbers the strips of CX cells covering the dx clip, .y the cell rows,
// .z the planes (batch image n, channel c), PZ of them per invocation.
// Images are float32, or half in the f16 variants (elem.glsl); sums are
// float32 and each dx value is rounded once, when stored.
//
// GV > 0 (vector stores) shifts the strips: one is CX*SX dx pixels of a
// row from a multiple of GV (clip origin rounded down to one), GPAR pixels
// into its first cell (the same for every strip), so it spans CXE cells
// and its pixels are stored as GV-wide vectors (aligned: ops checks that
// dx rows and planes are multiples of GV), value by value where a vector
// would leave the clip. GV = 8 (the "oct" variants, halves on devices
// with shaderFloat16) stores 16 bytes at a time; elsewhere it would be two
// quads. The windows, and the order of each sum, are those
// of the cells; only the pixels an invocation stores differ.
//
// POOL_LOOP (the "loop" variants) is the same sum without unrolling, for
// windows and strides whose unrolled cells would be too large to compile
// or to hold in registers: one invocation per dx pixel of the clip
// (gl_GlobalInvocationID x, y, and z the plane) loops over the windows
// that hold it, in the same ascending order, so the sums are the same.
// Bindings: 0 is dy (or, for L2, the ratio pass's r laid out as dy);
// GRAD_DX_BINDING (defined by the including shader) is dx; the forward
// source or argmax codes are bound at 1 as "aux".
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#ifdef GRAD_OCTETS
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif
#include "elem.glsl"
#include "pooling_geometry.glsl"

layout(local_size_x_id = 0, local_size_y_id = 10, local_size_z_id = 17) in;

layout(constant_id = 15) const int CX = 1; // cells per invocation (with GV, CX*SX pixels)
layout(constant_id = 20) const int GV = 0;   // dx vector store width: 0 (value by value), 2, 4 or 8
layout(constant_id = 21) const int GPAR = 0; // with GV: a strip's first pixel, past its first cell's first
layout(constant_id = 22) const int PZ = 1;   // planes per invocation (not the loop builds)
layout(constant_id = 24) const int GPF = 0;  // planes loaded ahead, 0: the rule below

const int AX = (KEX - 1) / SX + 1;  // windows holding a pixel, at most, per axis
const int AY = (KEY - 1) / SY + 1;
const int CXE = (GPAR + CX * SX - 1) / SX + 1; // cells a strip spans (CX without GV)
const int WX = AX + CXE - 1;        // window columns holding a pixel of a strip

// Loads first: the average and L2-norm gathers load the dy values of the
// window rows of PG planes before adding any of them, so that an
// invocation keeps PG planes' loads in flight rather than one plane's: a
// plane's stores would otherwise hold the next plane's loads behind them
// (dx may alias dy as far as the compiler knows). PG is GPF, or by
// default as many of the PZ planes as keep the loads ahead within
// LOADS_AHEAD values, at least one. (The max gathers, whose windows load
// an argmax word each too, go plane by plane: on an H200 the same form
// took their float16 gradient at 112x112 from 34.4 to 38.1 us.)
const int LOADS_AHEAD = 32;
const int PGR = LOADS_AHEAD / (AY * WX);
const int PG0 = GPF > 0 ? GPF : (PGR < 1 ? 1 : PGR);
const int PG = PG0 > PZ ? PZ : PG0;

layout(std430, binding = 0) readonly buffer Dy { DY_ELEM dy[]; };
layout(std430, binding = GRAD_DX_BINDING) writeonly buffer Dx { ELEM dx[]; };
layout(std430, binding = GRAD_DX_BINDING) writeonly buffer Dx2 { ELEM2 dx2[]; };
layout(std430, binding = GRAD_DX_BINDING) writeonly buffer Dx4 { ELEM4 dx4[]; };
#ifdef GRAD_OCTETS
// GV == 8 on halves: 8 values stored as one 16-byte vector, each the half
// STORE would give (packFloat2x16 only moves the bits), so the results
// are those of the narrower stores. Needs shaderFloat16.
layout(std430, binding = GRAD_DX_BINDING) writeonly buffer Dx8 { uvec4 dx8[]; };
#endif
#ifdef GRAD_AUX_SCALE
// dx[p] = acc[p] * src[p]: the forward source, binding 1.
layout(std430, binding = 1) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 1) readonly buffer Src2 { ELEM2 src2[]; };
layout(std430, binding = 1) readonly buffer Src4 { ELEM4 src4[]; };
#endif

layout(push_constant) uniform Push {
	ivec2 size;       // dx (and forward source) W, H
	ivec2 clipOrigin; // dx position of the first pixel written
	ivec2 clipSize;   // pixels written per axis
	ivec2 winBase;    // dx position of the first tap of window (0, 0)
	ivec2 winLo;      // first dy pixel of the forward clip
	ivec2 winHi;      // one past its last
	ivec4 region;     // average: taps counted in N lie in [x0, x1) x [y0, y1)
	uint dyBase;      // element offset of plane (0, 0) in the bound dy range
	uint auxBase;     // likewise for aux (forward source, or argmax words)
	uint dxBase;      // likewise for dx
	uint dyBatch;     // elements between consecutive batch images of dy
	uint auxBatch;
	uint dxBatch;
	uint dyPlane;     // elements per plane of dy (H*W)
	uint auxPlane;    // of aux (H*W, or argmax words per plane)
	uint dxPlane;     // of dx
	uint channels;    // channels per batch image in this dispatch
	uint dyWidth;     // dy W
	uint planes;      // planes of the dispatch
} pc;

// Cell is one invocation's work: CX cells from index m (with GV, CXE
// cells, of which it stores CX*SX pixels from x).
struct Cell {
	ivec2 m;      // index of its first cell (and of the window based there)
	int x;        // with GV: dx column of its first pixel
	uint dyOff, auxOff, dxOff;
};

bool cellPlane(inout Cell c, int z);

bool cellOf(out Cell c) {
	ivec2 m0 = ivec2(floorDiv(pc.clipOrigin.x - pc.winBase.x, SX), floorDiv(pc.clipOrigin.y - pc.winBase.y, SY));
	ivec2 m1 = ivec2(floorDiv(pc.clipOrigin.x + pc.clipSize.x - 1 - pc.winBase.x, SX),
	                 floorDiv(pc.clipOrigin.y + pc.clipSize.y - 1 - pc.winBase.y, SY));
	c.m = m0 + ivec2(int(gl_GlobalInvocationID.x) * CX, int(gl_GlobalInvocationID.y));
	bool past = c.m.x > m1.x;
	if (GV > 0) {
		c.x = pc.clipOrigin.x - (pc.clipOrigin.x - floorDiv(pc.clipOrigin.x, GV) * GV) + int(gl_GlobalInvocationID.x) * CX * SX;
		c.m.x = floorDiv(c.x - pc.winBase.x, SX);
		past = c.x >= pc.clipOrigin.x + pc.clipSize.x;
	}
	if (past || c.m.y > m1.y) return false;
	return cellPlane(c, 0);
}

// gradDense reports whether dy, aux and dx all hold whole images of the
// dispatch's channels (planeSplit).
bool gradDense() {
	uint ch = pc.channels;
	return pc.dyBatch == ch * pc.dyPlane && pc.auxBatch == ch * pc.auxPlane && pc.dxBatch == ch * pc.dxPlane;
}

// cellPlane points c's offsets at plane z of its invocation's PZ planes
// (gl_GlobalInvocationID.z * PZ + z); false past the dispatch's planes
// (then at its last plane, so that loads ahead stay inside the buffers).
// The windows and pixels of a strip are the same on every plane, so an
// invocation computes them once for all its planes.
bool cellPlane(inout Cell c, int z) {
	uint plane = gl_GlobalInvocationID.z * uint(PZ) + uint(z);
	bool in_ = plane < pc.planes;
	plane = min(plane, pc.planes - 1u);
	uvec2 nc = planeSplit(plane, pc.channels, gradDense());
	uint n = nc.x, ch = nc.y;
	c.dyOff = pc.dyBase + n * pc.dyBatch + ch * pc.dyPlane;
	c.auxOff = pc.auxBase + n * pc.auxBatch + ch * pc.auxPlane;
	c.dxOff = pc.dxBase + n * pc.dxBatch + ch * pc.dxPlane;
	return in_;
}

// planeGroup points cz[z] at plane g + z of the invocation's PZ planes
// for each of the PG planes of the group from g, and reports in live[z]
// whether that plane is one of the invocation's and the dispatch's (the
// others point at the last such plane: their loads are wasted, never out
// of bounds).
void planeGroup(Cell c, int g, out Cell cz[PG], out bool live[PG]) {
	[[unroll]] for (int z = 0; z < PG; z++) {
		cz[z] = c;
		bool in_ = cellPlane(cz[z], min(g + z, PZ - 1));
		live[z] = in_ && g + z < PZ;
	}
}

// Pixel (fx, fy) of cell i of the strip; false when outside the dx clip.
bool cellPixel(Cell c, int i, int fx, int fy, out ivec2 p) {
	p = pc.winBase + ivec2(SX * (c.m.x + i) + fx, SY * c.m.y + fy);
	ivec2 r = p - pc.clipOrigin;
	return r.x >= 0 && r.y >= 0 && r.x < pc.clipSize.x && r.y < pc.clipSize.y;
}

// The strip's sums: acc[fy][i*SX + fx] for pixel (fx, fy) of its cell i.
float acc[SY][CXE * SX];

void clearAcc() {
	[[unroll]] for (int fy = 0; fy < SY; fy++)
		[[unroll]] for (int f = 0; f < CXE * SX; f++) acc[fy][f] = 0.0;
}

// gradOut returns dx at element q (of the plane) for sum a.
float gradOut(Cell c, uint q, float a) {
#ifdef GRAD_AUX_SCALE
	return a * LOAD(src[c.auxOff + q]);
#else
	return a;
#endif
}

// storeCells writes the strip's pixels inside the dx clip.
void storeCells(Cell c) {
	if (GV == 0) {
		[[unroll]] for (int fy = 0; fy < SY; fy++) {
			[[unroll]] for (int i = 0; i < CX; i++) {
				[[unroll]] for (int fx = 0; fx < SX; fx++) {
					ivec2 p;
					if (cellPixel(c, i, fx, fy, p)) {
						uint q = uint(p.y * pc.size.x + p.x);
						dx[c.dxOff + q] = STORE(gradOut(c, q, acc[fy][i * SX + fx]));
					}
				}
			}
		}
		return;
	}
	[[unroll]] for (int fy = 0; fy < SY; fy++) {
		int y = pc.winBase.y + SY * c.m.y + fy;
		if (y < pc.clipOrigin.y || y >= pc.clipOrigin.y + pc.clipSize.y) continue;
		[[unroll]] for (int v = 0; v < CX * SX / max(GV, 1); v++) {
			int x0 = c.x + v * GV;
			uint q = uint(y * pc.size.x + x0);
			int f = GPAR + v * GV;
			if (x0 >= pc.clipOrigin.x && x0 + GV <= pc.clipOrigin.x + pc.clipSize.x) {
				if (GV == 8) {
					const int L = CXE * SX - 1;
					vec4 a = vec4(acc[fy][f], acc[fy][min(f + 1, L)], acc[fy][min(f + 2, L)], acc[fy][min(f + 3, L)]);
					vec4 b = vec4(acc[fy][min(f + 4, L)], acc[fy][min(f + 5, L)], acc[fy][min(f + 6, L)], acc[fy][min(f + 7, L)]);
#ifdef GRAD_AUX_SCALE
					a *= LOAD4(src4[(c.auxOff + q) >> 2]);
					b *= LOAD4(src4[((c.auxOff + q) >> 2) + 1u]);
#endif
#ifdef GRAD_OCTETS
					f16vec4 ha = STORE4(a), hb = STORE4(b);
					dx8[(c.dxOff + q) >> 3] = uvec4(packFloat2x16(ha.xy), packFloat2x16(ha.zw), packFloat2x16(hb.xy), packFloat2x16(hb.zw));
#else
					dx4[(c.dxOff + q) >> 2] = STORE4(a);
					dx4[((c.dxOff + q) >> 2) + 1u] = STORE4(b);
#endif
				} else if (GV == 4) {
					vec4 a = vec4(acc[fy][f], acc[fy][min(f + 1, CXE * SX - 1)], acc[fy][min(f + 2, CXE * SX - 1)], acc[fy][min(f + 3, CXE * SX - 1)]);
#ifdef GRAD_AUX_SCALE
					a *= LOAD4(src4[(c.auxOff + q) >> 2]);
#endif
					dx4[(c.dxOff + q) >> 2] = STORE4(a);
				} else {
					vec2 a = vec2(acc[fy][f], acc[fy][min(f + 1, CXE * SX - 1)]);
#ifdef GRAD_AUX_SCALE
					a *= LOAD2(src2[(c.auxOff + q) >> 1]);
#endif
					dx2[(c.dxOff + q) >> 1] = STORE2(a);
				}
			} else {
				[[unroll]] for (int e = 0; e < GV; e++) {
					int x = x0 + e;
					if (x >= pc.clipOrigin.x && x < pc.clipOrigin.x + pc.clipSize.x)
						dx[c.dxOff + q + uint(e)] = STORE(gradOut(c, q + uint(e), acc[fy][min(f + e, CXE * SX - 1)]));
				}
			}
		}
	}
}

// Per window column j (window m.x - (AX-1) + j, ascending) and row b
// (window m.y - b) of a strip: the clamped dy column and row, and whether
// they are inside the forward clip. Separable, so computed once per column
// and row, not per window.
int winX[WX];
bool winXIn[WX];
uint winRow[AY];
bool winYIn[AY];

void windowAxes(Cell c) {
	[[unroll]] for (int j = 0; j < WX; j++) {
		int w = c.m.x - (AX - 1) + j;
		winXIn[j] = w >= pc.winLo.x && w < pc.winHi.x;
		winX[j] = clamp(w, pc.winLo.x, pc.winHi.x - 1);
	}
	[[unroll]] for (int b = 0; b < AY; b++) {
		int w = c.m.y - b;
		winYIn[b] = w >= pc.winLo.y && w < pc.winHi.y;
		winRow[b] = uint(clamp(w, pc.winLo.y, pc.winHi.y - 1));
	}
}

// The window offset (cells back) of window column j from cell i of a
// strip; in [0, AX) when the window can hold pixels of the cell.
int cellsBack(int i, int j) { return i + AX - 1 - j; }

// Whether window offset a (cells back) holds pixel f of a cell along an
// axis, for stride s, extent ke and dilation d.
bool holds(int a, int f, int s, int ke, int d) {
	int t = s * a + f;
	return t < ke && t % d == 0;
}

#ifndef POOL_LOOP
// windowValue is what window (column j, row b of the strip) adds to each
// pixel it holds, given its dy value v: defined by the gathers that sum
// one value a window (gatherSums).
float windowValue(int b, int j, float v);

// gatherSums computes and stores the strip's pixels on each of the
// invocation's planes: dx[p] = the sum of windowValue over the windows
// holding p, in ascending window order (rows, then columns). Groups of
// PG planes: first every load, then plane by plane the sums and stores.
void gatherSums(Cell c) {
	[[unroll]] for (int g = 0; g < PZ; g += PG) {
		Cell cz[PG];
		bool live[PG];
		planeGroup(c, g, cz, live);
		float v[PG][AY][WX];
		[[unroll]] for (int z = 0; z < PG; z++) {
			[[unroll]] for (int b = 0; b < AY; b++) {
				uint row = cz[z].dyOff + winRow[b] * pc.dyWidth;
				[[unroll]] for (int j = 0; j < WX; j++) v[z][b][j] = LOAD_DY(dy[row + uint(winX[j])]);
			}
		}
		[[unroll]] for (int z = 0; z < PG; z++) {
			if (!live[z]) break;
			clearAcc();
			[[unroll]] for (int b = AY - 1; b >= 0; b--) {
				[[unroll]] for (int j = 0; j < WX; j++) {
					float w = windowValue(b, j, v[z][b][j]);
					[[unroll]] for (int i = 0; i < CXE; i++) {
						int a = cellsBack(i, j);
						if (a < 0 || a >= AX) continue;
						[[unroll]] for (int fy = 0; fy < SY; fy++) {
							if (!holds(b, fy, SY, KEY, DY)) continue;
							[[unroll]] for (int fx = 0; fx < SX; fx++) {
								if (holds(a, fx, SX, KEX, DX)) acc[fy][i * SX + fx] += w;
							}
						}
					}
				}
			}
			storeCells(cz[z]);
		}
		if (!live[PG - 1]) break;
	}
}
#endif

#ifdef POOL_LOOP
// Pix is a loop invocation's dx pixel (absolute) and its planes.
struct Pix {
	ivec2 p;
	uint dyOff, auxOff, dxOff;
};

bool pixOf(out Pix q) {
	ivec2 r = ivec2(gl_GlobalInvocationID.xy);
	uint plane = gl_GlobalInvocationID.z;
	if (r.x >= pc.clipSize.x || r.y >= pc.clipSize.y || plane >= pc.planes) return false;
	q.p = pc.clipOrigin + r;
	uvec2 nc = planeSplit(plane, pc.channels, gradDense());
	uint n = nc.x, ch = nc.y;
	q.dyOff = pc.dyBase + n * pc.dyBatch + ch * pc.dyPlane;
	q.auxOff = pc.auxBase + n * pc.auxBatch + ch * pc.auxPlane;
	q.dxOff = pc.dxBase + n * pc.dxBatch + ch * pc.dxPlane;
	return true;
}

// The windows along one axis whose extent holds position p, inside the
// forward clip [lo, hi): from .x to .y (empty when .x > .y).
ivec2 windowRange(int p, int base, int s, int ke, int lo, int hi) {
	return ivec2(max(lo, floorDiv(p - base - ke + s, s)), min(hi - 1, floorDiv(p - base, s)));
}
#endif
