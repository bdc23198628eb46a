// Kernel geometry of the pooling shaders, fixed by specialisation (IDs
// 1-6, named as ops' geometrySpec names them), the window extent, and the
// tap counting the shaders share.

layout(constant_id = 1) const int KW = 2;  // kernel width
layout(constant_id = 2) const int KH = 2;  // kernel height
layout(constant_id = 3) const int SX = 1;  // stride x
layout(constant_id = 4) const int SY = 1;  // stride y
layout(constant_id = 5) const int DX = 1;  // dilation x
layout(constant_id = 6) const int DY = 1;  // dilation y

const int KEX = (KW - 1) * DX + 1;  // window extent
const int KEY = (KH - 1) * DY + 1;

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

// planeSplit returns (n, c) of plane = n*channels + c, the batch image and
// channel whose buffers' offsets are n*batch + c*size; where every buffer
// the pass uses has batch == channels*size (dense: the dispatch covers
// whole images), (0, plane) gives the same offsets without the division
// (a uniform branch), which costs a float16 pass's invocations a share of
// their time.
uvec2 planeSplit(uint plane, uint channels, bool dense) {
	if (dense) return uvec2(0u, plane);
	return uvec2(plane / channels, plane % channels);
}
