// Package ref is the pure-Go CPU reference for the vkmps pooling kernels and
// their gradients: PoolingMax, PoolingAverage, PoolingL2Norm and
// DilatedPoolingMax, forward (Pool, Argmax) and gradient (PoolGradient). GPU
// tests, `vkmps selfcheck` and the graph package's finite-difference tests
// compare against it. It follows SPEC.md ("Pooling window",
// "Gradient kernels") to the letter; this comment records the choices SPEC
// leaves open. It imports only the standard library and package padding.
//
// # Layout and window
//
// A Tensor is N images x C channels x H rows x W columns, dense NCHW. For a
// destination pixel (x, y) inside the clip rectangle the window centre is
//
//	cx = OffsetX + StrideX*(x - Clip.X),  cy = OffsetY + StrideY*(y - Clip.Y)
//
// (MPS: the offset is the source position of the window centre of the clip
// origin). With effective size ke = (k-1)*d + 1 the first tap is at
// c - floor(ke/2) and taps step by d, so even windows lean top-left (k=2, d=3
// reads c-2 and c+1). Taps are numbered ky*KernelW + kx, row-major. Destination
// image z in [Clip.Z, Clip.Z+Clip.D) reads source image OffsetZ + z - Clip.Z.
// Channels map one to one (source and destination must have the same C).
// Destination pixels outside the clip are left untouched.
//
// # Kinds and edge modes
//
//   - Max, DilatedMax: the largest tap. DilatedMax is Max under its MPS name;
//     both accept any dilation. Under EdgeZero an outside tap reads 0 and takes
//     part in the max; under EdgeClamp the window shrinks to its in-image taps.
//     A NaN tap makes the output NaN (the first NaN's value is returned).
//   - Average: sum of in-image taps / N. EdgeZero: N = KernelW*KernelH, or with
//     ExcludeEdges the taps inside the padding region [-max(before,0),
//     src+max(after,0)) of each axis (before/after = Pads Top/Bottom,
//     Left/Right). EdgeClamp: N = taps inside [-ZeroPad.before,
//     src+ZeroPad.after) per axis. N = 0 gives 0. ZeroPad is ignored under
//     EdgeZero and ExcludeEdges under EdgeClamp (the window is already shrunk).
//   - L2Norm: sqrt(sum of in^2 over in-image taps), under both edge modes.
//
// Under EdgeClamp a window with no in-image tap outputs 0, for every kind.
// Average and L2Norm also accept dilation (MPS has none for them); the window
// definition above applies unchanged.
//
// # Gradients
//
// dy has the forward destination's shape, dx the forward source's. Only
// windows of destination pixels inside the clip count (dy outside the clip is
// ignored) and dx is written everywhere: 0 where no window reaches.
//
//   - Max: dx[p] = sum of dy[w] over the windows whose argmax is p. Tie rule:
//     the FIRST maximum in row-major tap order wins; a NaN beats any number and
//     the first NaN wins among NaNs. Under EdgeZero an outside tap (value 0)
//     can be the argmax; its gradient is then dropped (Argmax reports -1).
//   - Average: dx[p] = sum over windows w containing p of dy[w]/N(w).
//   - L2Norm: dx[p] = sum over windows w containing p of dy[w]*in[p]/out[w];
//     out[w] == 0 contributes 0, never NaN.
//
// # Precision and the tolerances GPU tests should use
//
// Max and DilatedMax forward and Argmax are exact: no arithmetic is done. The
// max gradient is accumulated in the element type, per source pixel in
// row-major order of the windows (window row ascending, then column), which
// is what a gathering GPU kernel does; a GPU that gathers in that order
// matches bit for bit (so does PyTorch's max_pool2d backward). Average and
// L2Norm forward and gradients accumulate in float64 and round once to the
// element type. A float32 GPU sum of n terms differs from that by at most
// about n*2^-24 of the sum of magnitudes, so for inputs and gradients of
// magnitude <= 1 and windows up to 15x15 compare with
//
//	|got - want| <= SumTolerance * max(1, |want|),  SumTolerance = 2e-5
//
// which is what Compare does (exact for Max and DilatedMax; NaN equals NaN).
package ref
