// What binary_convolution.comp (XNOR, AND) and binary_convolution_float.comp
// (BinaryWeights) share: geometry constants, the push-constant block, the
// parameter layout and the output (scale, beta, bias, fused neuron).
//
// params (float): scale[O], bias[O], prelu[O], padA, inBias[I], inScale[I],
// where padA = sum_c |inBias[c]*inScale[c]| / I is A at a tap outside the
// source (x = 0 there). weights (uint): [O][KH][KW][WORDS] sign bits (bit b
// of word w is input channel 32w+b; 1 means +1; 0 beyond I), then WORDS pad
// words: the bits of an outside tap, (0 + inBias[c]) * inScale[c] >= 0.
#include "elem.glsl"
layout(constant_id = 1) const int TYPE = 1; // 0 BinaryWeights, 1 XNOR, 2 AND
layout(constant_id = 2) const int BETA = 0;
layout(constant_id = 3) const int KW = 1;
layout(constant_id = 4) const int KH = 1;
layout(constant_id = 5) const int SX = 1;
layout(constant_id = 6) const int SY = 1;
layout(constant_id = 7) const int DX = 1;
layout(constant_id = 8) const int DY = 1;
layout(constant_id = 9) const uint WORDS = 1;    // ceil(I/32)
layout(constant_id = 10) const uint CHANNELS = 1; // I
layout(constant_id = 11) const uint OUT = 1;      // O

layout(push_constant) uniform Push {
	uint pixels;       // batch images * clipH * clipW of the dispatch
	int clipW, clipH;  // destination pixels written per row, rows
	int srcW, srcH;
	int firstX, firstY; // first tap of destination clip pixel (0, 0)
	uint aBase;        // word of A for pixel 0 in packed
	uint dstBase;      // element of (batch 0, first channel written, 0, 0)
	uint dstBatch;     // elements per destination batch image
	uint dstPlane;
	uint dstW;
	int dstX0, dstY0;  // the clip origin
	uint srcBase;      // BinaryWeights: element of (batch 0, first channel, 0, 0)
	uint srcBatch;
	uint srcPlane;
} pc;

const uint SCALE = 0u;
// (the bias of output o is params[OUT + o]: a constant equal to OUT
// would alias the specialization constant and take over its name)
const uint PRELU = 2u * OUT;
const uint PADA = 3u * OUT;
const uint INBIAS = 3u * OUT + 1u;
const uint INSCALE = INBIAS + CHANNELS;
const uint PADWORDS = OUT * uint(KH * KW) * WORDS;

#define NEURON_PRELU(c) params[PRELU + (c)]
