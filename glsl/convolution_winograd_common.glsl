// Shared by the Winograd passes of 3x3 convolutions of stride and dilation
// 1 (ops/convolution_winograd.go): F(4x4, 3x3), Lavin and Gray's minimal
// filtering, each 4x4 block of outputs from a 6x6 block of the source.
// Per output tile, channel pair (m, c) and transformed position
// xi = 6*i + j (i, j in 0..5):
//   U[xi][c][m] = (G g G^T)[i][j]       g the 3x3 weights of (m, c)
//   V[xi][c][t] = (B^T d B)[i][j]       d the tile's 6x6 source block of channel c
//   X[xi][m][t] = sum over c of U[xi][c][m] * V[xi][c][t]   (36 GEMMs)
//   Y[m][t]     = A^T X[.][m][t] A     the tile's 4x4 outputs, then bias and neuron
// with
//   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
// Tiles t = (b*tilesY + ty)*tilesX + tx cover the output region in 4x4
// blocks (the last ones partly past it); T tiles in all. U, V and X are
// float32 in one scratch buffer from uBase, vBase and xBase:
// U as 36 matrices of C x M (m fastest), V of C x T and X of M x T (t
// fastest), so that every pass reads and writes whole rows coalesced.
//
// Output pixel (x, y) of the region is
//   sum over c, (kx, ky) of W(m, c, kx, ky) * In(c, first + (x + kx, y + ky))
// In read over inSize pixels at inOrigin (0 outside), as
// convolution_gemm.comp's MODE_B 0 with stride 1. W is the convolution's
// weights (O, I, 3, 3) at wBase: W(m, c, kx, ky) = Wt[((m*C + c)*3 + ky)*3 + kx];
// FLIP (a data gradient: M the forward's input channels, C its outputs)
// reverses the taps and swaps the channels:
// W(m, c, kx, ky) = Wt[((c*M + m)*3 + 2 - ky)*3 + 2 - kx].
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "elem.glsl"

// Half scratch (WINO_HALF: the builds around the products on cooperative
// matrices, convolution_winograd_coopmat.comp): U and V are stored as
// halves, U times WINO_HALF_SCALE and V divided by it, so that their
// products, and X, are unchanged (a power of two: exact but for halves'
// range). B^T's rows scale a block's values by up to 10 per axis, 100 in
// all; dividing by 16 keeps V within a half's range wherever the source
// stays under about 10000, and U (the weights, scaled by G's rows of sums
// up to 1) times 16 below it wherever the weights stay under 4000.
// Weight gradients store D divided by 16 as well (A's rows scale dy's
// values by up to 15 per axis: dy under about 4600), and the output
// transform multiplies the sums P by 256.
// The scratch's bases (uBase, vBase, xBase) count float32 slots in every
// build: a half build's U and V start at half 2*base.
#ifdef WINO_HALF
#extension GL_EXT_shader_16bit_storage : require
#define SCR_ELEM float16_t
#define SCR_STORE(v) float16_t(v)
const float WINO_HALF_SCALE = 16.0;
const uint SCR_PER_SLOT = 2u; // scratch elements per float32 slot
// X as halves (convolution_winograd_coopmat.comp's X_HALF) is X divided by
// WINO_X_SCALE: X sums up to C products of U's and V's values, so that
// it can exceed a half's range where the output does not; divided by 16
// it stays inside wherever U and V do for up to C = 256 channels of
// values of like signs (a typical sum of products of random signs grows
// as the square root of C). X under 16 * 2^-14 (about 0.001) is stored
// as a half's subnormal, exact to 2^-21 absolutely.
const float WINO_X_SCALE = 16.0;
#else
#define SCR_ELEM float
#define SCR_STORE(v) (v)
const float WINO_HALF_SCALE = 1.0;
const uint SCR_PER_SLOT = 1u;
#endif

// Weight gradients (dW of such a convolution) run the transposed
// algorithm, F(3x3, 4x4): per tile t of dy (its 4x4 blocks, the source's
// 6x6 block from first + 4*(tx, ty) as above),
//   D[xi][m][t] = (A dy A^T)[i][j]     dy the tile's 4x4 block of channel m, 0 outside
//   V[xi][c][t] = (B^T d B)[i][j]      as above
//   P[s][xi][m][c] = sum over the tiles t of split s of D[xi][m][t] * V[xi][c][t]
//   dW(m, c) = G^T (sum over s of P[s][.][m][c]) G, 3x3, (ky, kx)
// D in place of U (from uBase), P in place of X (from xBase, slots
// partial sums 36*M*C apart, added in order). With CHANNELS_FAST (the
// products on the tiles) D and V are stored D[xi][t][m] and V[xi][t][c].
//
// Each pass declares its own buffers, bindings from 0: the scratch Scr,
// and what it reads of the images and parameters.

layout(push_constant) uniform Push {
	ivec2 inSize;    // the source region, W x H
	ivec2 inOrigin;  // its first pixel in the image
	ivec2 first;     // region position of output (0, 0)'s first tap
	ivec2 outSize;   // output pixels per batch image, W x H
	ivec2 outOrigin; // the destination pixel of output (0, 0)
	uint inStride, dstStride;
	uint imBase, imBatch, imPlane;
	uint dstBase, dstBatch, dstPlane;
	uint wBase, biasBase, preluBase;
	uint M, C;       // output and input channels of the GEMMs
	uint tilesX, tilesY, T;
	uint uBase, vBase, xBase;
	uint kChunk;     // weight gradients: tiles per split; products of a convolution: input channels per split (0: one split)
	uint slots;      // partial sums to add (weight gradients; a convolution's output transform: its products' splits)
} pc;
