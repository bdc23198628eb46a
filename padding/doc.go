// Package padding implements the padding policies of Metal Performance
// Shaders (MPSNNPaddingMethod, MPSNNPadding, MPSNNDefaultPadding) for
// vkmps: given a kernel's geometry and its source image, how big the
// destination is and where each window reads. It is pure Go, imports only
// the standard library, and never panics on bad input: every check
// returns an *Error wrapping ErrInvalidGeometry, ErrInvalidMethod,
// ErrEmptyDestination or ErrOverflow.
//
// # Windows
//
// With kernel size k and dilation d the window spans ke = (k-1)*d + 1
// pixels. Destination pixel i has its window centre at offset + i*stride
// and its first tap at centre - floor(ke/2); taps step by d. So an even
// window leans to the top-left: k=2, d=3 reads -2 and +1 around the centre.
// Method.Axis, Method.ReverseAxis and ExplicitAxis give Dst, Offset and
// the pads Before/After of one axis; Resolve applies a Policy to both.
//
// # Method (MPSNNPaddingMethod)
//
// Same bits and values as MPS: Align (bits 0-1) Centered 0, TopLeft 1,
// BottomRight 2 (3 reserved); AddRemainder (bits 2-3) TopLeft 0, TopRight
// 4, BottomLeft 8, BottomRight 12; Size (SizeMask 0x7f0) ValidOnly 0, Same
// 16, Full 32 (anything else reserved); CustomWhitelistForNodeFusion 1<<13,
// Custom 1<<14, ExcludeEdges 1<<15. With style -1, 0, +1 for ValidOnly,
// Same, Full, per axis:
//
//	dst      = floor((src + style*(ke-1) + stride - 1) / stride)   (< 1: error)
//	readSize = (dst-1)*stride + ke
//	extra    = readSize - src
//	before   = AlignCentered:    floor((max(extra,0) + r) / 2)
//	           AlignTopLeft:     0
//	           AlignBottomRight: extra
//	after    = extra - before
//	offset   = floor(ke/2) - before
//
// r is 1 when the remainder goes to the top/left of that axis, else 0.
// The padding region of an axis is [-max(before,0), src + max(after,0)).
//
// MPS documents only the centred formula for non-negative extra. vkmps's
// choices, fixed by SPEC.md:
//   - extra is negative when the windows leave pixels unread (ValidOnly,
//     or a kernel smaller than the stride). AlignCentered then pads
//     nothing and leaves the unread pixels at the bottom/right, as
//     TensorFlow and PyTorch do; so TensorFlow SAME stays exact with a
//     1x1 kernel and stride 2 (it reads pixels 0, 2, 4, ...).
//   - AlignTopLeft puts the window grid flush with the top/left edge
//     (before = 0, all padding or unread pixels after the image);
//     AlignBottomRight flush with the bottom/right edge (before = extra,
//     negative when the first pixels are skipped).
//   - AddRemainder is read per axis: bit 2 (4) sends x's remainder to the
//     right, bit 3 (8) sends y's remainder to the bottom. So TopRight puts
//     the odd pixel at the top in y and at the right in x; BottomLeft
//     mirrors it. It only matters under AlignCentered.
//
// Method.String prints the fields in the order Size|Align|AddRemainder,
// then the flags, e.g. "SizeSame|AlignCentered|AddRemainderToBottomRight".
// Valid, Same and Full are the methods 0, 16 and 32.
//
// # Reverse filters
//
// A reverse filter's stride enlarges the image. Its size is MPS's
// DestSizeReverse, (src-1)*stride + 1 + style*(ke-1): a stride-1 filter
// over the source upsampled by zero insertion to (src-1)*stride+1 pixels,
// and Method.ReverseAxis gives offsets in that upsampled image. A reverse
// pass undoing a forward one uses the opposite Size (Method.Opposite:
// ValidOnly <-> Full, Same <-> Same).
//
// # Policies
//
// A Policy (MPSNNPadding) has a Method, a Label and a Destination method.
// Resolve validates the input, computes a suggestion from the Method and
// lets Destination return the final Result (destination descriptor,
// offsets, edge mode, zero pads, pads, ExcludeEdges). Provided policies:
//
//   - WithMethod(m): the suggestion as is (MPS paddingWithMethod).
//   - TensorFlowSame: Same|Centered|AddRemainderToBottomRight, i.e.
//     dst = ceil(src/stride), pad_before = floor(max(extra,0)/2).
//   - TensorFlowValid: ValidOnly; the first window starts at pixel 0.
//   - TensorFlowAveragePooling, TensorFlowAveragePoolingValidOnly: the
//     same sizes with EdgeClamp and zero pad 0, so average pooling does
//     not average the padding (MPS paddingForTensorflowAveragePooling).
//   - Explicit(pads, ceilMode, countIncludePad): PyTorch and ONNX.
//   - Caffe(padH, padW): symmetric pads, ceil size, Caffe's divisor.
//   - Inverse(forward): the gradient pass of a forward policy.
//   - Custom policies: any type implementing Policy.
//
// # Explicit pads and PyTorch's ceil mode
//
// vkmps adds explicit pads (top, left, bottom, right), which MPS lacks:
//
//	dst = floor((src + before + after - ke) / stride) + 1
//
// In ceil mode the division rounds up, so the last window may start in
// the bottom/right padding or past it. PyTorch (pooling_output_shape_pad_lr)
// then drops the last output if its window would start at or beyond
// src + before, i.e. wholly in the padding after the image:
// if (dst-1)*stride >= src + before, dst--. For example src 5, k 2,
// stride 2, pads 1,1: ceil((5+2-2)/2)+1 = 4, but window 3 would start at
// 3*2-1 = 5 = src, so dst = 3. Current PyTorch applies the rule in ceil
// mode only; Caffe applies it whenever a pad is non-zero, and Caffe(...)
// follows Caffe. Destination 0 reads from -before: offset =
// floor(ke/2) - before. Average pooling maps to EdgeClamp with ZeroPad =
// pads (count_include_pad, and Caffe's divisor clipped to the padded
// image) or ZeroPad 0 (only in-image taps count).
//
// # Gradients
//
// Inverse(forward) sizes a gradient's destination (the forward source)
// from a SizeState in the request's states, or else from the reverse size
// with the opposite Size, and checks that the forward policy maps it back
// to the gradient's size. Its offsets, edge mode and zero pads are the
// forward pass's on that destination, which is what a gathering gradient
// kernel needs to find the windows containing each pixel.
//
// # Errors and overflow
//
// Checks run in a fixed order (kernel, stride, dilation, sources, method,
// then the arithmetic) and messages name the axis and the value, e.g.
// "padding: kernel width 0 < 1". ErrOverflow means that an intermediate of
// the formulas above (ke, src + style*(ke-1), readSize, the upsampled size
// (src-1)*stride + 1, the explicit span src + before + after - ke) does
// not fit in an int; the comparison of PyTorch's last-window rule is exact.
package padding
