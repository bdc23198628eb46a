#version 450
// PoolingL2NormGradient (MPSCNNPoolingL2NormGradient), second pass:
// dx[p] = in[p] * sum over the windows w holding p of r[w], where the first
// pass (pooling_l2norm_ratio.comp) left r[w] = dy[w] / out[w] (0 where
// out[w] = 0, never NaN) in binding 0, laid out as dy.
// vkmps:variant f16 -DVKMPS_F16
// vkmps:variant loop -DPOOL_LOOP
// vkmps:variant loopf16 -DPOOL_LOOP -DVKMPS_F16
// vkmps:variant octf16 -DVKMPS_F16 -DGRAD_OCTETS
#define GRAD_DX_BINDING 2
#define DY_F32 // binding 0 is r, float32 scratch
#define GRAD_AUX_SCALE // dx = sum * the forward source (binding 1)
#include "pooling_grad_common.glsl"

#ifdef POOL_LOOP
void main() {
	Pix q;
	if (!pixOf(q)) return;
	ivec2 wy = windowRange(q.p.y, pc.winBase.y, SY, KEY, pc.winLo.y, pc.winHi.y);
	ivec2 wx = windowRange(q.p.x, pc.winBase.x, SX, KEX, pc.winLo.x, pc.winHi.x);
	float acc = 0.0;
	for (int y = wy.x; y <= wy.y; y++) {
		int ty = q.p.y - pc.winBase.y - SY * y;
		if (ty % DY != 0) continue;
		for (int x = wx.x; x <= wx.y; x++) {
			int tx = q.p.x - pc.winBase.x - SX * x;
			if (tx % DX != 0) continue;
			acc += LOAD_DY(dy[q.dyOff + uint(y) * pc.dyWidth + uint(x)]);
		}
	}
	uint p = uint(q.p.y * pc.size.x + q.p.x);
	dx[q.dxOff + p] = STORE(acc * LOAD(src[q.auxOff + p]));
}
#else
float windowValue(int b, int j, float v) { return (winYIn[b] && winXIn[j]) ? v : 0.0; }

void main() {
	Cell c;
	if (!cellOf(c)) return;
	windowAxes(c);
	gatherSums(c); // the windows above are the same on every plane
}
#endif
