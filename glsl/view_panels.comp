#version 450
// view_panels: draws `vkmps view`'s canvas, one invocation per pixel:
// three panels side by side on a dark grey background, each a picture
// drawn as the demo's PNGs are (cmd/vkmps/internal/tensorio) and scaled
// to its rectangle by nearest neighbour:
//
//   panel 0  the input X, an image (N, C, H, W)
//   panel 1  the forward result Y, an image
//   panel 2  the gradient DX (X's shape), a heatmap
//
// An image with 3 or 4 channels is RGB (alpha ignored), normalised over
// the whole tensor (least finite value -> 0, greatest -> 255); other
// channel counts draw one grey panel per channel in a grid of
// ceil(sqrt(C)) columns. A heatmap draws one panel per channel: blue at
// -s, white at 0, red at +s, s = max |finite value|, NaN green. Batch
// items stack vertically; grid cells are 1 pixel apart, with black gaps.
// The ranges come from view_range (slots 0, 1, 2 for X, Y, DX).
// Pixels are packed 4 bytes, R G B A or B G R A (order).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) readonly buffer DX { float dx[]; };
layout(std430, binding = 3) readonly buffer Range { uint range[]; };
layout(std430, binding = 4) writeonly buffer Pix { uint pix[]; };

layout(push_constant) uniform Push {
	uint width, height; // canvas
	uint order;         // 0: B G R A, 1: R G B A
	uint cols[3];       // grid columns of each panel's picture
	uvec4 rect[3];      // where each picture is drawn: x0, y0, w, h
	uvec4 xshape;       // N, C, H, W of X and DX
	uvec4 yshape;       // of Y
} pc;

const uint background = 24u;

float unkey(uint k) {
	return uintBitsToFloat((k & 0x80000000u) != 0u ? (k & 0x7FFFFFFFu) : ~k);
}

// bounds returns the slot's finite range, (0, 0) when it has none.
vec2 bounds(uint slot) {
	uint l = range[slot], h = range[4u + slot];
	if (l > h) {
		return vec2(0.0);
	}
	return vec2(unkey(l), unkey(h));
}

float level(float v, vec2 b) {
	if (isnan(v) || (isinf(v) && v < 0.0)) {
		return 0.0;
	}
	if (isinf(v)) {
		return 255.0;
	}
	if (b.y == b.x) {
		return 128.0;
	}
	return floor((v - b.x) / (b.y - b.x) * 255.0 + 0.5);
}

vec3 diverging(float v, float s) {
	if (isnan(v)) {
		return vec3(0.0, 255.0, 0.0);
	}
	float t = 0.0;
	if (isinf(v)) {
		t = sign(v);
	} else if (s > 0.0) {
		t = clamp(v / s, -1.0, 1.0);
	}
	float c = floor(255.0 * (1.0 - abs(t)) + 0.5);
	return t < 0.0 ? vec3(c, c, 255.0) : vec3(255.0, c, c);
}

float load(uint panel, uint i) {
	if (panel == 0u) {
		return x[i];
	}
	if (panel == 1u) {
		return y[i];
	}
	return dx[i];
}

// picture returns the colour of pixel (sx, sy) of a panel's picture.
vec3 picture(uint panel, uint sx, uint sy) {
	uvec4 s = panel == 1u ? pc.yshape : pc.xshape;
	uint n = s.x, c = s.y, h = s.z, w = s.w;
	bool rgb = panel != 2u && (c == 3u || c == 4u);
	uint panels = rgb ? 1u : c;
	uint cols = pc.cols[panel];
	uint rows = (panels + cols - 1u) / cols;
	uint itemH = rows * h + rows - 1u;
	uint item = sy / (itemH + 1u), r = sy % (itemH + 1u);
	uint prow = r / (h + 1u), iy = r % (h + 1u);
	uint pcol = sx / (w + 1u), ix = sx % (w + 1u);
	uint p = prow * cols + pcol;
	if (item >= n || r == itemH || iy == h || ix == w || p >= panels) {
		return vec3(0.0); // a gap
	}
	vec2 b = bounds(panel);
	uint plane = h * w;
	if (rgb) {
		uint base = item * c * plane + iy * w + ix;
		return vec3(level(load(panel, base), b), level(load(panel, base + plane), b), level(load(panel, base + 2u * plane), b));
	}
	float v = load(panel, (item * c + p) * plane + iy * w + ix);
	if (panel == 2u) {
		return diverging(v, max(abs(b.x), abs(b.y)));
	}
	float g = level(v, b);
	return vec3(g);
}

void main() {
	uint px = gl_GlobalInvocationID.x, py = gl_GlobalInvocationID.y;
	if (px >= pc.width || py >= pc.height) {
		return;
	}
	vec3 col = vec3(float(background));
	for (uint i = 0u; i < 3u; i++) {
		uvec4 rc = pc.rect[i];
		if (px < rc.x || py < rc.y || px - rc.x >= rc.z || py - rc.y >= rc.w) {
			continue;
		}
		uvec4 s = i == 1u ? pc.yshape : pc.xshape;
		bool rgb = i != 2u && (s.y == 3u || s.y == 4u);
		uint panels = rgb ? 1u : s.y;
		uint cols = pc.cols[i];
		uint rows = (panels + cols - 1u) / cols;
		uint pw = cols * s.w + cols - 1u;
		uint ph = s.x * (rows * s.z + rows - 1u) + s.x - 1u;
		col = picture(i, (px - rc.x) * pw / rc.z, (py - rc.y) * ph / rc.w);
	}
	uvec3 c = uvec3(col);
	if (pc.order == 0u) {
		c = c.zyx;
	}
	pix[py * pc.width + px] = c.x | (c.y << 8) | (c.z << 16) | (255u << 24);
}
