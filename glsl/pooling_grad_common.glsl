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
// .z the planes (batch image n, channel c).
// Images are float32, or half in the f16 variants (elem.glsl); sums are
// float32 and each dx value is rounded once, when stored.
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
#include "elem.glsl"
#include "pooling_geometry.glsl"

layout(local_size_x_id = 0, local_size_y_id = 10, local_size_z_id = 17) in;

layout(constant_id = 15) const int CX = 1; // cells per invocation

const int AX = (KEX - 1) / SX + 1;  // windows holding a pixel, at most, per axis
const int AY = (KEY - 1) / SY + 1;
const int WX = AX + CX - 1;         // window columns holding a pixel of a strip

layout(std430, binding = 0) readonly buffer Dy { DY_ELEM dy[]; };
layout(std430, binding = GRAD_DX_BINDING) writeonly buffer Dx { ELEM dx[]; };

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

// Cell is one invocation's work: CX cells from index m.
struct Cell {
	ivec2 m;      // index of its first cell (and of the window based there)
	uint dyOff, auxOff, dxOff;
};

bool cellOf(out Cell c) {
	ivec2 m0 = ivec2(floorDiv(pc.clipOrigin.x - pc.winBase.x, SX), floorDiv(pc.clipOrigin.y - pc.winBase.y, SY));
	ivec2 m1 = ivec2(floorDiv(pc.clipOrigin.x + pc.clipSize.x - 1 - pc.winBase.x, SX),
	                 floorDiv(pc.clipOrigin.y + pc.clipSize.y - 1 - pc.winBase.y, SY));
	c.m = m0 + ivec2(int(gl_GlobalInvocationID.x) * CX, int(gl_GlobalInvocationID.y));
	uint plane = gl_GlobalInvocationID.z;
	if (c.m.x > m1.x || c.m.y > m1.y || plane >= pc.planes) return false;
	uint n = plane / pc.channels, ch = plane % pc.channels;
	c.dyOff = pc.dyBase + n * pc.dyBatch + ch * pc.dyPlane;
	c.auxOff = pc.auxBase + n * pc.auxBatch + ch * pc.auxPlane;
	c.dxOff = pc.dxBase + n * pc.dxBatch + ch * pc.dxPlane;
	return true;
}

// Pixel (fx, fy) of cell i of the strip; false when outside the dx clip.
bool cellPixel(Cell c, int i, int fx, int fy, out ivec2 p) {
	p = pc.winBase + ivec2(SX * (c.m.x + i) + fx, SY * c.m.y + fy);
	ivec2 r = p - pc.clipOrigin;
	return r.x >= 0 && r.y >= 0 && r.x < pc.clipSize.x && r.y < pc.clipSize.y;
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
	uint n = plane / pc.channels, ch = plane % pc.channels;
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
