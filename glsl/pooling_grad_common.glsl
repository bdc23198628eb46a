// Shared by the pooling gradient shaders (pooling_*_grad.comp).
//
// A gradient gathers: one invocation computes one pixel p of the destination
// gradient dx (the forward source's frame), summing the contributions of
// every forward window that holds p, in ascending window order (row-major
// over the source gradient dy), in float32. No atomics, so every run on
// every device adds the same values in the same order.
//
// Windows are numbered by their dy pixel w (absolute dy coordinates); only
// w inside the forward clip [winLo, winHi) counts. Window w's first tap lies
// at dx position winBase + (SX, SY)*w and its taps step by (DX, DY):
// winBase = clipOrigin - (Offset*stride + KernelOffset) - floor(ke/2)
// (MPSCNNGradientKernel: the effective offset Offset*stride + KernelOffset is
// the position of the clip origin in the source gradient upsampled by the
// stride with zero insertion).
//
// gl_GlobalInvocationID.x (then .y) runs over the clip's pixels, .z over the
// planes (batch image n, channel c) of the dispatch. Bindings: 0 is dy;
// GRAD_DX_BINDING (defined by the including shader) is dx; the shaders that
// read the forward source or an argmax state bind it at 1 as "aux".
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const int KW = 2;  // kernel width
layout(constant_id = 2) const int KH = 2;  // kernel height
layout(constant_id = 3) const int SX = 1;  // stride x
layout(constant_id = 4) const int SY = 1;  // stride y
layout(constant_id = 5) const int DX = 1;  // dilation x
layout(constant_id = 6) const int DY = 1;  // dilation y
layout(constant_id = 7) const bool CLAMP = false; // forward edge mode: outside taps skipped (else read 0)

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

// Pixel p of this invocation and its plane's offsets; false past the clip.
bool gradPixel(out ivec2 p, out uint dyOff, out uint auxOff, out uint dxIndex) {
	uint idx = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
	uint w = uint(pc.clipSize.x);
	if (idx >= w * uint(pc.clipSize.y)) return false;
	p = pc.clipOrigin + ivec2(int(idx % w), int(idx / w));
	uint plane = gl_GlobalInvocationID.z;
	uint n = plane / pc.channels, c = plane % pc.channels;
	dyOff = pc.dyBase + n * pc.dyBatch + c * pc.dyPlane;
	auxOff = pc.auxBase + n * pc.auxBatch + c * pc.auxPlane;
	dxIndex = pc.dxBase + n * pc.dxBatch + c * pc.dxPlane + uint(p.y * pc.size.x + p.x);
	return true;
}

// floor(a / b) for b > 0.
int floorDiv(int a, int b) {
	return a >= 0 ? a / b : -((b - 1 - a) / b);
}

// Windows holding one position, at most, along each axis: the loops below
// run these fixed counts so the compiler can unroll them.
const int NWX = ((KW - 1) * DX + SX) / SX;
const int NWY = ((KH - 1) * DY + SY) / SY;

// Taps of a window starting at s (k taps d apart) inside [lo, hi), in
// closed form.
int counted(int s, int k, int d, int lo, int hi) {
	int t0 = max(0, -floorDiv(s - lo, d));
	int t1 = min(k - 1, floorDiv(hi - 1 - s, d));
	return max(0, t1 - t0 + 1);
}

// The windows [w0, w1] along one axis whose span holds position p: first
// tap base + s*w, k taps d apart, w limited to the forward clip [lo, hi).
// Taps of a dilated window may still miss p (tapOf says).
void windowRange(int p, int base, int s, int k, int d, int lo, int hi, out int w0, out int w1) {
	w0 = max(lo, -floorDiv(base + (k - 1) * d - p, s));
	w1 = min(hi - 1, floorDiv(p - base, s));
}

// Tap index of position p in the window starting at start (taps d apart),
// or -1 when p falls between taps.
int tapOf(int p, int start, int d) {
	int r = p - start;
	return r % d == 0 ? r / d : -1;
}
