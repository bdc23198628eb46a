// Shared by the tiled forward pooling shaders (pooling_*_tiled.comp), which
// vkmps uses for windows of more than 64 taps: a large window reads each
// source value many times, so the tile stages it once in shared memory.
// They compute exactly what the direct shaders (pooling_common.glsl) do.
//
// Images are NCHW float32, or half in the f16 variants (elem.glsl); the
// tile holds float32. The window of destination pixel
// (clipOrigin + (i, j)) is centred on offset + (SX*i, SY*j) in the source,
// its first tap at centre - floor(KE/2) with KE = (K-1)*D + 1 (MPS: even
// windows lean to the top left), taps D apart.
//
// A workgroup computes a tile of TW x TH destination pixels of one plane
// (batch image n, channel c). It first copies the source region the tile's
// windows read, IH rows of IW values, into shared memory with coalesced
// loads (reads outside the image use a clamped index, always valid memory,
// and store the edge mode's outside value); then each invocation computes
// destination pixels from shared memory, neighbouring invocations taking
// neighbouring pixels. Shared memory holds each row de-interleaved by stride
// phase (column x at (x % SX)*CP + x / SX), so neighbouring invocations
// read neighbouring banks whatever the stride.
// gl_WorkGroupID.x (then .y) numbers the tiles of a plane, .z the planes.
//
// POOL_GLOBAL (the "global" variants) stages nothing: each tap is read
// from the source image directly, with the same in-image test and outside
// value. vkmps uses it for windows whose smallest tile would not fit the
// device's shared memory (large windows at large strides), so that every
// window size runs on every device; the results are the same.
#extension GL_GOOGLE_include_directive : require
#include "elem.glsl"
#include "pooling_geometry.glsl"

layout(local_size_x_id = 0) in;

layout(constant_id = 7) const bool CLAMP = false; // edge mode: taps outside are skipped (else read 0)
layout(constant_id = 13) const int TW = 32; // tile width, destination pixels
layout(constant_id = 14) const int TH = 8;  // tile height

const int IW = (TW - 1) * SX + KEX;   // source columns a tile reads
const int IH = (TH - 1) * SY + KEY;   // source rows a tile reads
const int CP = (IW + SX - 1) / SX;    // columns per stride phase in shared memory
const int IWP = SX * CP;              // shared row length

#ifndef POOL_GLOBAL
shared float tile[IH * IWP];
#endif

layout(std430, binding = 0) readonly buffer Src { ELEM src[]; };
layout(std430, binding = 1) writeonly buffer Dst { DST_ELEM dst[]; };

#include "pooling_push.glsl"

// Tile is one workgroup's work.
struct Tile {
	int x0, y0;   // clip-relative position of the tile's first destination pixel
	ivec2 in0;    // source position of the tile's shared (0, 0)
	uint n, c;    // batch image and channel within the dispatch
	uint srcOff;  // element offset of the source plane
	uint dstOff;  // element offset of the destination plane
};

// tileOf returns this workgroup's tile; false (for the whole workgroup)
// past the last tile.
bool tileOf(out Tile t) {
	uint tilesX = (uint(pc.clipSize.x) + uint(TW) - 1u) / uint(TW);
	uint tilesY = (uint(pc.clipSize.y) + uint(TH) - 1u) / uint(TH);
	uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
	if (wg >= tilesX * tilesY) return false;
	t.x0 = int(wg % tilesX) * TW;
	t.y0 = int(wg / tilesX) * TH;
	uint plane = gl_WorkGroupID.z;
	uint ch = pc.channels;
	uvec2 nc = planeSplit(plane, ch, pc.srcBatch == ch * pc.srcPlane && pc.dstBatch == ch * pc.dstPlane &&
	                                     pc.amBatch == ch * pc.amPlane && pc.dyBatch == ch * pc.dyPlane);
	t.n = nc.x;
	t.c = nc.y;
	t.srcOff = pc.srcBase + t.n * pc.srcBatch + t.c * pc.srcPlane;
	t.dstOff = pc.dstBase + t.n * pc.dstBatch + t.c * pc.dstPlane;
	t.in0 = pc.offset + ivec2(SX * t.x0, SY * t.y0) - ivec2(KEX / 2, KEY / 2);
	return true;
}

#ifndef POOL_GLOBAL
// loadTile copies the tile's source region into shared memory; outside
// the image it stores outside.
void loadTile(Tile t, float outside) {
	for (uint e = gl_LocalInvocationIndex; e < uint(IH * IW); e += gl_WorkGroupSize.x) {
		int r = int(e / uint(IW));
		int x = int(e % uint(IW));
		ivec2 q = t.in0 + ivec2(x, r);
		bool in_ = q.x >= 0 && q.x < pc.srcSize.x && q.y >= 0 && q.y < pc.srcSize.y;
		float v = LOAD(src[t.srcOff + uint(clamp(q.y, 0, pc.srcSize.y - 1) * pc.srcSize.x + clamp(q.x, 0, pc.srcSize.x - 1))]);
		tile[r * IWP + (x % SX) * CP + x / SX] = in_ ? v : outside;
	}
	barrier();
}

// tap returns tap (kx, ky) of the window of tile pixel (ox, oy).
float tap(int ox, int oy, int kx, int ky) {
	return tile[(oy * SY + ky * DY) * IWP + ((kx * DX) % SX) * CP + ox + (kx * DX) / SX];
}
#else
// Without shared memory, loadTile only remembers the tile and the outside
// value, and tap reads the source.
Tile curTile;
float tileOutside;

void loadTile(Tile t, float outside) {
	curTile = t;
	tileOutside = outside;
}

float tap(int ox, int oy, int kx, int ky) {
	ivec2 q = curTile.in0 + ivec2(ox * SX + kx * DX, oy * SY + ky * DY);
	bool in_ = q.x >= 0 && q.x < pc.srcSize.x && q.y >= 0 && q.y < pc.srcSize.y;
	float v = LOAD(src[curTile.srcOff + uint(clamp(q.y, 0, pc.srcSize.y - 1) * pc.srcSize.x + clamp(q.x, 0, pc.srcSize.x - 1))]);
	return in_ ? v : tileOutside;
}
#endif

// Source position of the first tap of tile pixel (ox, oy)'s window.
ivec2 windowStart(Tile t, int ox, int oy) { return t.in0 + ivec2(ox * SX, oy * SY); }

// Whether a window starting at s has a tap inside the image.
bool anyTap(ivec2 s) {
	return counted(s.x, KW, DX, 0, pc.srcSize.x) > 0 && counted(s.y, KH, DY, 0, pc.srcSize.y) > 0;
}

// Pixels of the tile: invocations stride over them row-major.
bool pixelInClip(Tile t, int ox, int oy) { return t.x0 + ox < pc.clipSize.x && t.y0 + oy < pc.clipSize.y; }

uint dstIndex(Tile t, int ox, int oy) {
	return t.dstOff + uint(pc.clipOrigin.y + t.y0 + oy) * pc.dstWidth + uint(pc.clipOrigin.x + t.x0 + ox);
}

const float NEG_INF = -1.0 / 0.0;

float quietNaN() { return uintBitsToFloat(0x7fc00000u); }
