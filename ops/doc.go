// Package ops holds vkmps's compute kernels on Vulkan, Metal Performance
// Shaders' CNN kernels and their training (gradient) kernels: pooling
// (PoolingMax, PoolingAverage, PoolingL2Norm, DilatedPoolingMax),
// convolution (Convolution, ConvolutionTranspose, FullyConnected),
// neurons (Neuron), SoftMax and LogSoftMax, arithmetic (Arithmetic: add,
// subtract, multiply, divide), normalizations (BatchNormalization,
// InstanceNormalization, CrossChannelNormalization, SpatialNormalization,
// LocalContrastNormalization), Dropout, upsampling (UpsamplingNearest,
// UpsamplingBilinear), Loss (all ten MPS loss types), each with its
// gradient; the optimizers (Optimizer: SGD, momentum, Nesterov, RMSProp,
// Adam, AMSGrad) and BinaryConvolution (inference only). SPEC.md and
// ../shared TRAINING.md fix the semantics. Package ref is the float64 CPU
// reference they are tested against (its gradients checked by finite
// differences).
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
// Pooling also splits a single plane over the range into bands of rows,
// binding with each band the rows its windows read; results are the same
// bits. Windows of any size run on every device: those whose tile exceeds
// shared memory read taps directly, and gradients too large to unroll loop
// over their windows.
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
//
// # The training family
//
// Convolution, ConvolutionTranspose (PyTorch's ConvTranspose2d layout) and
// FullyConnected (nn.Linear after a flatten), each with its gradient
// (data, weights and bias per ConvolutionGradientOption), share a
// ConvolutionDescriptor (kernel, channels, groups — depthwise when Groups
// equals the input channels —, strides, dilations, a fused neuron). The
// device-free ResultDescriptor, TransposeResultDescriptor and
// FullyConnectedResultDescriptor apply a padding policy; padding.Explicit
// and ConvolutionTransposePadding reproduce PyTorch. Weights (O, I/g, KH,
// KW) and bias (1×O×1×1) are float32 images read at every encode, so an
// Optimizer can update them on the GPU. All run on one implicit-GEMM
// engine (gemm.go): shared-memory tiles with register blocking, chosen
// with their split-K count by a model of the device (workgroups spread
// over its multiprocessors, per-tile rates, occupancy, partial-sum
// traffic); per-phase data gradients for strided convolutions; split-K
// weight gradients with the bias gradient from the same tiles, added in a
// fixed order; Winograd F(4x4, 3x3) minimal filtering for 3x3
// convolutions of stride and dilation 1 without groups (forward, data
// gradient, transpose convolution; the weight gradient as F(3x3, 4x4)
// over dy's 4x4 tiles), by default where both sides have 64 or more
// channels: a quarter of the multiply-adds, at 2 to 6 times a direct
// sum's rounding error on random data (within the family's tolerance;
// winograd=0 keeps the direct sums), 1.4 to 3.3 times the GEMM's speed on
// ResNet's 3x3 layers on an H100 (convolution_winograd.go), its products
// on cooperative matrices for float16 images where the device has them
// (U, D and V rounded to halves: about 15 times the direct sums' rounding;
// the ResNet-18 float16 step on an H100 from 10.77 to 9.62 ms; winocoop=0
// keeps the float32 tiles; X too where it is large, winoxhalf=0 keeps it
// float32: relative RMS error 3.0e-3 to 3.8e-3); cooperative matrices
// (VK_NV_cooperative_matrix, float16 products accumulated in float32) for
// float16 images where the device has them: by default for other windows
// of more than one tap with at least 128 channels on each side (about 2x
// the tiles there on an H100) and for 1x1 windows with 256 or more on
// each side (1.5 to 1.9x), and for the weight gradients of 32 or more
// rows and columns over a depth of 1024 or more (the stem, stride-2 and
// 1x1 layers: 1.2 to 2x), elsewhere where a ConvolutionTuning asks; the
// tensor-core GEMMs whose operands both load as quads stage them with
// 8-byte stores (packed=0 refuses); 1x1 stride-1 data gradients read the
// weights by columns, as quads; strided data gradients' phases on the
// tiles sum only their own taps (phasetaps=0 restores the whole grid);
// a gather kernel for data gradients of few input channels;
// direct and depthwise kernels; an explicit im2col into the scratch and
// a GEMM over its columns where a ConvolutionTuning asks (im2col=1).
// ConvolutionTuning (SetTuning) forces
// tiles, split counts or paths for measurements. A ConvolutionScratch
// (SetScratch) lets the family's kernels share one buffer for their
// split-K partial sums, Winograd transforms and im2col columns instead
// of one each.
//
// Neuron applies any NeuronType (MPS's types and defaults; ReLU's slope
// at 0 is 1, as in MPS); NeuronGradient writes dx = dy·f'(x), and for PReLU
// EncodeSlopeGradient the slopes' gradient. SoftMax and LogSoftMax
// normalize each pixel's channels; their gradients read the forward's
// result. Arithmetic computes clamp((ps·x) op (ss·y) + bias, min, max) with
// MPS broadcasting (a size of 1 on N, C, H or W), and ArithmeticGradient
// either side's gradient summed over its broadcast axes.
//
// BatchNormalization uses the batch's statistics in training
// (EncodeTraining, which also updates the running mean and variance as
// PyTorch does) and the running ones in inference (EncodeInference);
// BatchNormalizationGradient.EncodeAll writes dx, dgamma and dbeta; MPS's
// Statistics kernels accumulate over sub-batches. Each channel is cut into
// chunks whose partial sums a merge pass adds in a fixed order: training
// reads x twice and writes y once. A training batch of up to 8192 values
// per channel runs each direction as one fused dispatch instead (one
// workgroup per channel, the same bits). InstanceNormalization does the same per
// plane; CrossChannelNormalization (local response normalization),
// SpatialNormalization and LocalContrastNormalization follow
// MPSCNNNormalization.h.
//
// Dropout keeps elements with probability KeepProbability (scaled by its
// inverse) under a Philox4x32-10 mask keyed by the seed and a draw counter
// on the GPU, so a replayed command buffer draws a new mask and every
// device draws the same one; the mask lives, as bits, in the gradient
// state. UpsamplingNearest and UpsamplingBilinear follow F.interpolate with
// integer scales. Loss covers mae, mse, softmax, sigmoid and categorical
// cross-entropy, hinge, huber, cosine distance, log and KL divergence with
// reductions none, sum, mean and sum-by-nonzero-weights, weights and label
// smoothing. Optimizer updates float32 parameters in place: EncodeStep
// advances the time step on the GPU, so a recorded training step replays
// as successive steps, and SetLearningRate changes the rate between
// replays. BinaryConvolution (XNOR, AND, binary weights, beta scaling)
// convolves bits packed 32 to a word by popcount.
//
// The memory-bound kernels aim at a copy's bandwidth: element-wise losses
// and neurons work on vector quads with every load issued before any
// arithmetic; per-pixel losses split each pixel's channels over several
// invocations with neighbouring pixels coalesced, keeping the channels in
// registers where they fit so the softmax gradient reads its inputs once;
// the gradient of a source broadcast over whole planes (a per-channel bias
// or scale) spreads each output over many workgroups and adds their
// partials in order; the bilinear upsampling gradients take one dx pixel
// per invocation over a run of rows, reading each dy row once.
//
// Every sum is taken in a fixed order without float atomics, so results
// repeat bit for bit on a device; encoding allocates nothing once a
// kernel's pipelines exist.
package ops
