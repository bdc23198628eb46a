// Shared by the forward pooling shaders (pooling_*.comp except *_grad.comp).
//
// Images are NCHW float32. One invocation computes one destination pixel:
// gl_GlobalInvocationID.x runs over the clip rectangle's pixels (row-major),
// .z over the planes (batch image n, channel c) of this dispatch. The window
// of destination pixel (clipOrigin + (i, j)) is centred on
// offset + (SX*i, SY*j) in the source, its first tap at centre - ke/2 where
// ke = (K-1)*D + 1 (MPS: even windows lean to the top left), taps D apart.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

layout(constant_id = 1) const int KW = 2;  // kernel width
layout(constant_id = 2) const int KH = 2;  // kernel height
layout(constant_id = 3) const int SX = 1;  // stride x
layout(constant_id = 4) const int SY = 1;  // stride y
layout(constant_id = 5) const int DX = 1;  // dilation x
layout(constant_id = 6) const int DY = 1;  // dilation y
layout(constant_id = 7) const bool CLAMP = false; // edge mode: taps outside are skipped (else read 0)

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
	uint amBase;      // pooling_max_argmax: word offset of plane (0, 0) in the argmax range
	uint amBatch;     // words between consecutive batch images of the argmax buffer
	uint amPlane;     // words per argmax plane (clip pixels packed 32/AMBITS per word)
} pc;

// Pixel of this invocation; false when it lies past the clip rectangle.
// The pixels of a plane are numbered along x then y of the dispatch grid, so
// planes larger than one axis's workgroup limit are covered.
bool pixel(out ivec2 ij, out uint srcOff, out uint dstIndex) {
	uint idx = gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x;
	uint w = uint(pc.clipSize.x);
	if (idx >= w * uint(pc.clipSize.y)) return false;
	ij = ivec2(int(idx % w), int(idx / w));
	uint plane = gl_GlobalInvocationID.z;
	uint n = plane / pc.channels, c = plane % pc.channels;
	srcOff = pc.srcBase + n * pc.srcBatch + c * pc.srcPlane;
	ivec2 d = pc.clipOrigin + ij;
	dstIndex = pc.dstBase + n * pc.dstBatch + c * pc.dstPlane + uint(d.y) * pc.dstWidth + uint(d.x);
	return true;
}

// First tap of the window of clip pixel ij.
ivec2 windowStart(ivec2 ij) {
	return pc.offset + ivec2(SX, SY) * ij - ivec2(((KW - 1) * DX + 1) / 2, ((KH - 1) * DY + 1) / 2);
}

// Maximum of the window whose first tap is s, in the source plane starting
// at srcOff, and the tap that holds it: ky*KW + kx, or -1 when an outside tap
// (reading 0 under EdgeZero) wins or the window has no tap (EdgeClamp).
// Taps are visited row-major; the first maximum wins and the first NaN beats
// everything (SPEC.md's tie rule, the same on every device).
float windowMax(uint srcOff, ivec2 s, out int tap) {
	float m = 0.0;
	bool have = false;
	tap = -1;
	for (int ky = 0; ky < KH; ky++) {
		int y = s.y + ky * DY;
		bool yin = y >= 0 && y < pc.srcSize.y;
		for (int kx = 0; kx < KW; kx++) {
			int x = s.x + kx * DX;
			float v = 0.0;
			int t = -1;
			if (yin && x >= 0 && x < pc.srcSize.x) {
				v = src[srcOff + uint(y * pc.srcSize.x + x)];
				t = ky * KW + kx;
			} else if (CLAMP) {
				continue;
			}
			if (!have) {
				m = v;
				tap = t;
				have = true;
			} else if (!isnan(m) && (isnan(v) || v > m)) {
				m = v;
				tap = t;
			}
		}
	}
	return m;
}
