// Package ops holds vkmps's compute kernels on Vulkan: Metal Performance
// Shaders' pooling kernels (PoolingMax, PoolingAverage, PoolingL2Norm,
// DilatedPoolingMax) and their gradients (PoolingMaxGradient,
// PoolingAverageGradient, PoolingL2NormGradient, DilatedPoolingMaxGradient),
// following SPEC.md. Package ref is the CPU reference they are tested
// against.
//
// # Images
//
// An Image is N batch images × C feature channels × H × W float32 values,
// stored NCHW and densely packed in a vk.Buffer (MPSImage and MPSImageBatch
// in one; no multiple-of-4 channel rule). ChannelView makes a view of a
// channel range that shares storage (concatenation without copies);
// NewImageOn places an image in a caller's buffer (graph arenas). Write
// and Read wait for the GPU work that uses the storage. Close is safe twice.
//
// # Float16 images
//
// ImageDescriptor.Format Float16 stores IEEE half values (2 bytes each,
// NCHW dense): half the memory traffic of float32 for these memory-bound
// kernels. Storage only (SPEC.md): every pooling kernel, the argmax
// recording and every gradient load halves, compute in float32 exactly as
// for float32 images, and round each result to half once, when storing it
// (with the device's float-to-half conversion: round to nearest even on
// the devices vkmps is tested on; Vulkan also allows round toward zero).
// All images of one encode (source, destination, dy, the source image, dx)
// have one format, else ErrFormat names them; gradient scratch (argmax
// codes, L2-norm ratios) is unchanged, so a state serves either format.
// Write and Read convert (Float16Bits rounds to nearest even, overflow to
// ±Inf; Float16FromBits is exact); WriteFloat16 and ReadFloat16 move the
// bits. Copy and Fill take both formats (Copy never converts: mixed
// formats are an ErrFormat); Add and Loss take float32 only. Float16 needs
// the device's 16-bit storage buffer access (vk.Limits.Float16Storage);
// without it NewImage returns ErrDeviceLimit.
//
// # Kernel properties
//
// Every kernel embeds Kernel (MPSCNNKernel): Offset (the source position of
// the window centre of the clip origin; Z the first source batch image),
// ClipRect (the destination region written, zero sizes meaning "to the
// end"; pixels outside are untouched), EdgeMode (EdgeZero, the default, or
// EdgeClamp), the Padding policy, and source / destination feature-channel
// offsets with a maximum channel count. Gradient kernels embed
// GradientKernel, which adds KernelOffsetX/Y.
//
// # Encode forms
//
// Encode(cb, src, dst) records a kernel with its properties as set.
// EncodeNew(cb, src) applies the padding policy (which sizes the destination
// and sets Offset, and for some policies the edge mode and average pooling's
// zero pads and ExcludeEdges), allocates the destination (Allocator, or
// NewImage) and encodes into it. The forward kernels' EncodeWithState and
// EncodeNewWithState also return a PoolingGradientState for the gradient.
// Encoding never blocks and never submits: commit the vk.CommandBuffer,
// then Wait. Errors wrap the sentinels of errors.go and name the kernel,
// the image and the value at fault.
//
// # Large tensors
//
// A dispatch binds each buffer through one storage-buffer range, at most
// the device's MaxStorageBufferRange. An encode is split into dispatches of
// whole batch images, or of channel groups of one batch image, that fit;
// a single H×W plane over the range is an ErrDeviceLimit.
//
// # Gradients
//
// A gradient kernel (MPSCNNGradientKernel) takes the source gradient dy
// (w.r.t. the forward destination), the forward source image and the
// forward's PoolingGradientState, and writes the destination gradient dx
// (w.r.t. the forward source). The state records the forward's kind,
// geometry, offset, resolved clip, edge mode, zero pads, ExcludeEdges and
// padding, its source and destination shapes and channel ranges; edge mode
// and the average count always come from it, and a state of another kind or
// geometry, a dy not of the forward destination's shape or a source image
// not of the forward source's shape is an error.
//
// dx[p] = sum, over the forward windows w inside the forward clip that hold
// p, of w's contribution: dy[w] where p is w's argmax (max kinds; first
// maximum in row-major tap order, NaN first; a window won by an outside
// tap under EdgeZero passes nothing), dy[w]/N(w) (average, the forward's
// N), dy[w]*in[p]/out[w] (L2 norm, 0 where out[w] = 0). Each dx pixel
// gathers its windows in ascending order and adds in float32, without
// atomics, so results are the same bits on every run; max gradients equal
// the reference exactly, sums within ref.SumTolerance. Pixels no window
// reaches are 0.
//
// EncodeNew sizes dx as the forward source (the state is a
// padding.SizeState, so padding.Inverse sizes it the same way), sets
// Offset to the forward clip origin and KernelOffset to minus the forward
// offset, and zeroes channels and batch images the forward did not read.
// Encode uses the properties as set; see GradientKernel for the meaning of
// Offset and KernelOffset. PoolingMax and DilatedPoolingMax with
// RecordArgmax store each window's winning tap in the state (8 bits per
// destination pixel up to 255 taps, else 16) so the gradient does not read
// the source image again; the gradients are bit-identical to recomputing.
package ops
