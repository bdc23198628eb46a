// Shared by the forward pooling shaders (pooling_max, pooling_max_argmax,
// pooling_average, pooling_l2norm) and the L2-norm gradient's ratio pass.
//
// Images are NCHW float32. The window of destination pixel
// (clipOrigin + (i, j)) is centred on offset + (SX*i, SY*j) in the source,
// its first tap at centre - floor(KE/2) with KE = (K-1)*D + 1 (MPS: even
// windows lean to the top left), taps D apart.
//
// One invocation computes OX consecutive pixels of one destination row (a
// block): their windows read source columns [start.x, start.x + SPAN) of
// each tap row, which it loads once per row into registers and shares
// between the block's windows. Reads outside the image use a clamped index
// (always valid memory) and a validity flag, so the code has no branches
// per tap; the edge mode decides what an invalid tap contributes.
// gl_GlobalInvocationID.x (then .y) numbers the blocks of a plane
// row-major, .z the planes (batch image n, channel c) of the dispatch.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const int KW = 2;  // kernel width
layout(constant_id = 2) const int KH = 2;  // kernel height
layout(constant_id = 3) const int SX = 1;  // stride x
layout(constant_id = 4) const int SY = 1;  // stride y
layout(constant_id = 5) const int DX = 1;  // dilation x
layout(constant_id = 6) const int DY = 1;  // dilation y
layout(constant_id = 7) const bool CLAMP = false; // edge mode: taps outside are skipped (else read 0)
layout(constant_id = 8) const int OX = 4;  // destination pixels per invocation, along x

const int KEX = (KW - 1) * DX + 1;     // window extent
const int KEY = (KH - 1) * DY + 1;
const int SPAN = (OX - 1) * SX + KEX;  // source columns a block reads per row

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };

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

// Block is one invocation's work.
struct Block {
	ivec2 start;  // source position of the first tap of the block's first window
	int bx, j;    // block column (in blocks) and row of the clip
	int count;    // pixels of the block inside the clip (<= OX)
	uint n, c;    // batch image and channel within the dispatch
	uint srcOff;  // element offset of the source plane
	uint dstRow;  // element index of the block's first destination pixel
};

// block returns this invocation's block; false past the clip.
bool block(out Block b) {
	uint bpr = (uint(pc.clipSize.x) + uint(OX) - 1u) / uint(OX);
	uint idx = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
	if (idx >= bpr * uint(pc.clipSize.y)) return false;
	b.bx = int(idx % bpr);
	b.j = int(idx / bpr);
	b.count = min(OX, pc.clipSize.x - b.bx * OX);
	uint plane = gl_GlobalInvocationID.z;
	b.n = plane / pc.channels;
	b.c = plane % pc.channels;
	b.srcOff = pc.srcBase + b.n * pc.srcBatch + b.c * pc.srcPlane;
	ivec2 d = pc.clipOrigin + ivec2(b.bx * OX, b.j);
	b.dstRow = pc.dstBase + b.n * pc.dstBatch + b.c * pc.dstPlane + uint(d.y) * pc.dstWidth + uint(d.x);
	b.start = pc.offset + ivec2(SX * OX * b.bx, SY * b.j) - ivec2(KEX / 2, KEY / 2);
	return true;
}

// Column cache of a block: clamped source columns and their validity
// (arrays sized by a specialization constant cannot travel in structs).
int colX[SPAN];
bool colIn[SPAN];

void columns(Block b) {
	for (int s = 0; s < SPAN; s++) {
		int x = b.start.x + s;
		colIn[s] = x >= 0 && x < pc.srcSize.x;
		colX[s] = clamp(x, 0, pc.srcSize.x - 1);
	}
}

// Row ky of a block: its clamped source row offset and validity.
bool rowOf(Block b, int ky, out uint rowOff) {
	int y = b.start.y + ky * DY;
	rowOff = b.srcOff + uint(clamp(y, 0, pc.srcSize.y - 1) * pc.srcSize.x);
	return y >= 0 && y < pc.srcSize.y;
}

// Whether window o of the block has a tap in the image: separable into a
// row and a column condition.
bool anyRow(Block b) {
	bool any = false;
	for (int ky = 0; ky < KH; ky++) {
		int y = b.start.y + ky * DY;
		any = any || (y >= 0 && y < pc.srcSize.y);
	}
	return any;
}

bool anyColumn(int o) {
	bool any = false;
	for (int kx = 0; kx < KW; kx++) any = any || colIn[o * SX + kx * DX];
	return any;
}

const float NEG_INF = -1.0 / 0.0;

float quietNaN() { return uintBitsToFloat(0x7fc00000u); }
