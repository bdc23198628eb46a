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
// A workgroup computes a tile of TW x TH dx pixels of one plane. It first
// stages, in shared memory, the contribution of every window that touches
// the tile (WH x WW of them, zero outside the forward clip); then each
// invocation sums, for its pixels, the windows holding them, neighbouring
// invocations taking neighbouring pixels. gl_WorkGroupID.x (then .y)
// numbers the tiles of a plane, .z the planes (batch image n, channel c).
// Bindings: 0 is dy (or, for L2, the ratio pass's r laid out as dy);
// GRAD_DX_BINDING (defined by the including shader) is dx; the forward
// source or argmax codes are bound at 1 as "aux".
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const int KW = 2;  // kernel width
layout(constant_id = 2) const int KH = 2;  // kernel height
layout(constant_id = 3) const int SX = 1;  // stride x
layout(constant_id = 4) const int SY = 1;  // stride y
layout(constant_id = 5) const int DX = 1;  // dilation x
layout(constant_id = 6) const int DY = 1;  // dilation y
layout(constant_id = 7) const bool CLAMP = false; // forward edge mode (unused by the gathers)
layout(constant_id = 8) const int TW = 32; // dx tile width
layout(constant_id = 9) const int TH = 8;  // dx tile height

const int KEX = (KW - 1) * DX + 1;       // window extent
const int KEY = (KH - 1) * DY + 1;
const int NWX = (KEX - 1) / SX + 1;      // windows holding one position, at most
const int NWY = (KEY - 1) / SY + 1;
const int WW = (TW + KEX - 2) / SX + 2;  // windows touching a tile row (with slack)
const int WH = (TH + KEY - 2) / SY + 2;

shared float contrib[WH * WW];

layout(std430, binding = 0) readonly buffer Dy { float dy[]; };
layout(std430, binding = GRAD_DX_BINDING) writeonly buffer Dx { float dx[]; };

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
} pc;

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

// GTile is one workgroup's work.
struct GTile {
	ivec2 p0;   // dx position of the tile's first pixel
	ivec2 w0;   // window (dy position) of contrib[0]
	uint dyOff, auxOff, dxOff;
};

// first window whose span reaches position p along an axis
int firstWindow(int p, int base, int s, int ke) { return -floorDiv(base + ke - 1 - p, s); }

bool gtileOf(out GTile t) {
	uint tilesX = (uint(pc.clipSize.x) + uint(TW) - 1u) / uint(TW);
	uint tilesY = (uint(pc.clipSize.y) + uint(TH) - 1u) / uint(TH);
	uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	if (wg >= tilesX * tilesY) return false;
	t.p0 = pc.clipOrigin + ivec2(int(wg % tilesX) * TW, int(wg / tilesX) * TH);
	t.w0 = ivec2(firstWindow(t.p0.x, pc.winBase.x, SX, KEX), firstWindow(t.p0.y, pc.winBase.y, SY, KEY));
	uint plane = gl_WorkGroupID.z;
	uint n = plane / pc.channels, c = plane % pc.channels;
	t.dyOff = pc.dyBase + n * pc.dyBatch + c * pc.dyPlane;
	t.auxOff = pc.auxBase + n * pc.auxBatch + c * pc.auxPlane;
	t.dxOff = pc.dxBase + n * pc.dxBatch + c * pc.dxPlane;
	return true;
}

// Staged window e: its dy position, and whether it is a window of the
// forward clip.
bool stagedWindow(GTile t, uint e, out ivec2 w) {
	w = t.w0 + ivec2(int(e % uint(WW)), int(e / uint(WW)));
	return w.x >= pc.winLo.x && w.x < pc.winHi.x && w.y >= pc.winLo.y && w.y < pc.winHi.y;
}

// Pixel i of the tile; false outside the clip.
bool tilePixel(GTile t, uint i, out ivec2 p) {
	p = t.p0 + ivec2(int(i % uint(TW)), int(i / uint(TW)));
	return p.x < pc.clipOrigin.x + pc.clipSize.x && p.y < pc.clipOrigin.y + pc.clipSize.y;
}

// Candidate window k (0 <= k < NWX) holding p along x: its staged column and
// the tap index of p in it, or -1 when it does not hold p (or p falls
// between its taps); likewise along y.
int holdX(GTile t, int p, int k, out int col) {
	int w = firstWindow(p, pc.winBase.x, SX, KEX) + k;
	col = w - t.w0.x;
	int d = p - (pc.winBase.x + SX * w);
	return (d >= 0 && d % DX == 0) ? d / DX : -1;
}

int holdY(GTile t, int p, int k, out int row) {
	int w = firstWindow(p, pc.winBase.y, SY, KEY) + k;
	row = w - t.w0.y;
	int d = p - (pc.winBase.y + SY * w);
	return (d >= 0 && d % DY == 0) ? d / DY : -1;
}
