// The push constants of the forward-shaped pooling passes (the direct
// shaders of pooling_common.glsl and the tiled ones of pooling_tiled.glsl),
// laid out as ops' poolPush.
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
	uint planes;      // planes of the dispatch (batches * channels)
} pc;
