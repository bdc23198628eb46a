package ops_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// bconvCase is one binary convolution configuration.
type bconvCase struct {
	typ              ops.BinaryConvolutionType
	beta             bool
	n, in, out, h, w int
	kw, kh, sx, sy   int
	dx, dy           int
	pads             padding.Pads
	inputTerms       bool // input bias and scale
	neuron           ops.NeuronType
	half             bool
	weights          []float32
	scale, bias      []float32
	inBias, inScale  []float32
	src              []float32
	prelu            []float32
}

func (c bconvCase) String() string {
	s := fmt.Sprintf("%v beta=%v %dx%dx%dx%d->%d k%dx%d s%dx%d d%dx%d pad%v terms=%v %v", c.typ, c.beta, c.n, c.in, c.h, c.w, c.out,
		c.kw, c.kh, c.sx, c.sy, c.dx, c.dy, c.pads, c.inputTerms, c.neuron)
	if c.half {
		s += " float16"
	}
	return s
}

func (c bconvCase) descriptor() ops.BinaryConvolutionDescriptor {
	flags := ops.BinaryConvolutionFlagsNone
	if c.beta {
		flags = ops.BinaryConvolutionUseBetaScaling
	}
	d := ops.NewBinaryConvolutionDescriptor(c.kw, c.kh, c.in, c.out, c.typ, flags)
	d.StrideX, d.StrideY, d.DilationX, d.DilationY = c.sx, c.sy, c.dx, c.dy
	if c.neuron != ops.NeuronNone {
		d.Neuron = ops.NewNeuronDescriptor(c.neuron)
		if c.neuron == ops.NeuronPReLU {
			d.Neuron.PReLU = c.prelu
		}
	}
	return d
}

func (c bconvCase) weightsOf() ops.BinaryConvolutionWeights {
	return ops.BinaryConvolutionWeights{Weights: c.weights, OutputScale: c.scale, OutputBias: c.bias, InputBias: c.inBias, InputScale: c.inScale}
}

// fill draws the case's data: weights, terms and source.
func (c *bconvCase) fill(r *rand.Rand) {
	c.weights = randomData(r, c.out*c.in*c.kh*c.kw)
	c.scale, c.bias = make([]float32, c.out), randomData(r, c.out)
	for i := range c.scale {
		c.scale[i] = 0.5 + r.Float32()
	}
	if c.inputTerms {
		c.inBias, c.inScale = randomData(r, c.in), make([]float32, c.in)
		for i := range c.inBias {
			c.inBias[i] *= 0.5
			c.inScale[i] = 0.5 + r.Float32()
			if r.Intn(5) == 0 {
				c.inScale[i] = -c.inScale[i]
			}
		}
	}
	if c.neuron == ops.NeuronPReLU {
		c.prelu = randomData(r, c.out)
	}
	c.src = randomData(r, c.n*c.in*c.h*c.w)
	if c.half {
		c.src = toHalf(c.src)
	}
}

func bconvF64(v []float32) []float64 {
	if v == nil {
		return nil
	}
	return optF64(v)
}

// reference computes the case on the CPU (float32 tensors: x~ rounds as
// on the GPU) into an oh x ow destination.
func (c bconvCase) reference(t *testing.T, oh, ow int) []float32 {
	t.Helper()
	b := ref.BinaryConv{Type: ref.BinaryConvType(c.typ), BetaScaling: c.beta, KernelW: c.kw, KernelH: c.kh,
		StrideX: c.sx, StrideY: c.sy, DilationX: c.dx, DilationY: c.dy, PadTop: c.pads.Top, PadLeft: c.pads.Left,
		Weights: bconvF64(c.weights), Scale: bconvF64(c.scale), Bias: bconvF64(c.bias),
		InputBias: bconvF64(c.inBias), InputScale: bconvF64(c.inScale)}
	if c.neuron != ops.NeuronNone {
		nd := ops.NewNeuronDescriptor(c.neuron)
		b.Neuron = ref.Neuron{Type: ref.NeuronType(c.neuron), A: float64(nd.A), B: float64(nd.B), C: float64(nd.C), PReLU: bconvF64(c.prelu)}
	}
	x, err := ref.TensorOf(c.n, c.in, c.h, c.w, append([]float32(nil), c.src...))
	require.NoError(t, err)
	y := ref.NewTensor[float32](c.n, c.out, oh, ow)
	require.NoError(t, ref.BinaryConvolution(b, x, &y))
	return y.Data
}

// tolerance returns the allowed difference for output channel o with
// reference value want (float32 arithmetic on the GPU, float64 sums in
// the reference): XNOR and AND give exact integer sums, so only the
// scale and bias roundings remain (5e-7 of |want| + |bias|); beta adds
// float32 sums of I + taps terms (2e-5 relative); BinaryWeights adds a
// float32 sum of I*taps terms each up to maxXt (2e-7 * I*taps * maxXt *
// |scale| * beta); float16 results round to half (2^-10 relative).
func (c bconvCase) tolerance(o int, want float64, maxXt float64) float64 {
	base := math.Abs(want) + math.Abs(float64(c.bias[o]))
	if c.neuron == ops.NeuronPReLU {
		base *= math.Max(1, math.Abs(float64(c.prelu[o])))
	}
	tol := 5e-7 * base
	if c.beta {
		tol += 2e-5 * base
	}
	if c.typ == ops.BinaryConvolutionBinaryWeights {
		b := 1.0
		if c.beta {
			b = maxXt
		}
		tol += 2e-7 * float64(c.in*c.kh*c.kw) * maxXt * math.Abs(float64(c.scale[o])) * b
	}
	if c.half {
		tol += math.Abs(want)/1024 + 1e-7
	}
	return tol + 1e-30
}

// maxXt returns the largest |x~| of the case, padded taps included.
func (c bconvCase) maxXt() float64 {
	m := 0.0
	for ch := 0; ch < c.in; ch++ {
		ib, is := float32(0), float32(1)
		if c.inputTerms {
			ib, is = c.inBias[ch], c.inScale[ch]
		}
		m = math.Max(m, math.Abs(float64(ib*is)))
		for n := 0; n < c.n; n++ {
			for i := 0; i < c.h*c.w; i++ {
				m = math.Max(m, math.Abs(float64((c.src[(n*c.in+ch)*c.h*c.w+i]+ib)*is)))
			}
		}
	}
	return m
}

// run encodes the case on the GPU with explicit pads (EncodeNew) and
// compares with the reference.
func (c bconvCase) run(t *testing.T, dev *vk.Device) {
	t.Helper()
	k, err := ops.NewBinaryConvolution(dev, c.descriptor(), c.weightsOf())
	require.NoError(t, err, c)
	defer k.Close()
	k.Padding = padding.Explicit(c.pads, false, false)
	sd := padding.Descriptor{N: c.n, C: c.in, H: c.h, W: c.w}
	var src *ops.Image
	if c.half {
		src = newHalfImage(t, dev, sd, c.src)
	} else {
		src = newImage(t, dev, sd, c.src)
	}
	var dst *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, err = k.EncodeNew(cb, src)
		return err
	}), c)
	defer dst.Close()
	oh := ref.ConvOutputSize(c.h, c.kh, c.sy, c.dy, c.pads.Top, c.pads.Bottom)
	ow := ref.ConvOutputSize(c.w, c.kw, c.sx, c.dx, c.pads.Left, c.pads.Right)
	require.Equal(t, ops.ImageDescriptor{N: c.n, C: c.out, H: oh, W: ow}, ops.ImageDescriptor{N: dst.N(), C: dst.C(), H: dst.H(), W: dst.W()}, c)
	// The device-free shape function agrees.
	rd, err := c.descriptor().ResultDescriptor(ops.ImageDescriptor{N: c.n, C: c.in, H: c.h, W: c.w}, k.Padding)
	require.NoError(t, err)
	require.Equal(t, ops.ImageDescriptor{N: c.n, C: c.out, H: oh, W: ow}, rd)
	got, err := dst.Read(context.Background())
	require.NoError(t, err)
	want := c.reference(t, oh, ow)
	maxXt := c.maxXt()
	bad, first := 0, ""
	for i := range want {
		o := (i / (oh * ow)) % c.out
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= c.tolerance(o, float64(want[i]), maxXt)) {
			if bad == 0 {
				first = fmt.Sprintf("value %d (channel %d): got %v, want %v, diff %.3g, tolerance %.3g", i, o, got[i], want[i], d, c.tolerance(o, float64(want[i]), maxXt))
			}
			bad++
		}
	}
	require.Zero(t, bad, "%v: %d of %d differ; first %s", c, bad, len(want), first)
}

// GPU against the reference over a table: every type with and without
// beta scaling, input channels 1, 5, 33, 34 and 70 (not multiples of 32:
// the last word is partial), output channels over one 64-channel tile,
// kernels 1..3 with strides, dilations and explicit pads (padded taps
// binarize (0 + inBias) * inScale), input terms with negative scales, fused
// ReLU and PReLU, float16 rows; and 256, 257 and 520 input channels, whose
// full chunks of 8 words go through the carry-save count. Fixed seed.
func TestBinaryConvolutionMatchesReference(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(19))
	outs := []int{1, 3, 7, 65, 70}
	var cases []bconvCase
	for _, in := range []int{1, 5, 33, 34, 70} {
		for _, typ := range []ops.BinaryConvolutionType{ops.BinaryConvolutionBinaryWeights, ops.BinaryConvolutionXNOR, ops.BinaryConvolutionAND} {
			for _, beta := range []bool{false, true} {
				c := bconvCase{typ: typ, beta: beta, in: in, n: 1 + r.Intn(2), out: outs[r.Intn(len(outs))],
					h: 3 + r.Intn(7), w: 3 + r.Intn(7), kw: 1 + r.Intn(3), kh: 1 + r.Intn(3),
					sx: 1 + r.Intn(2), sy: 1 + r.Intn(2), dx: 1 + r.Intn(2), dy: 1 + r.Intn(2),
					inputTerms: r.Intn(3) > 0}
				p := func() int { return r.Intn(3) }
				c.pads = padding.Pads{Top: p(), Left: p(), Bottom: p(), Right: p()}
				for c.h+c.pads.Top+c.pads.Bottom < (c.kh-1)*c.dy+1 || c.w+c.pads.Left+c.pads.Right < (c.kw-1)*c.dx+1 {
					c.h, c.w = c.h+1, c.w+1
				}
				c.neuron = []ops.NeuronType{ops.NeuronNone, ops.NeuronNone, ops.NeuronReLU, ops.NeuronPReLU}[r.Intn(4)]
				c.half = dev.Limits().Float16Storage && r.Intn(4) == 0
				cases = append(cases, c)
			}
		}
	}
	// Full chunks of 8 words (I >= 256) take the carry-save path.
	for _, in := range []int{256, 257, 520} {
		for _, typ := range []ops.BinaryConvolutionType{ops.BinaryConvolutionXNOR, ops.BinaryConvolutionAND} {
			cases = append(cases, bconvCase{typ: typ, beta: in == 257, in: in, n: 1, out: 67, h: 5, w: 6, kw: 3, kh: 3, sx: 1, sy: 1, dx: 1, dy: 1,
				pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, inputTerms: in != 256, neuron: ops.NeuronReLU})
		}
	}
	// A 3x3 window over a tiny image: most taps padded.
	cases = append(cases, bconvCase{typ: ops.BinaryConvolutionXNOR, in: 34, out: 5, n: 1, h: 2, w: 1, kw: 3, kh: 3, sx: 1, sy: 1, dx: 1, dy: 1,
		pads: padding.Pads{Top: 2, Left: 2, Bottom: 2, Right: 2}, inputTerms: true})
	for _, c := range cases {
		c.fill(r)
		c.run(t, dev)
	}
}

// Padded taps read x = 0, so they count as x~ = (0 + inBias) * inScale:
// one input pixel x = -1, a 3x3 window of +1 weights, pads 1 (8 padded
// taps), output scale 1, bias 0.
func TestBinaryConvolutionPadding(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	src := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, []float32{-1})
	ones := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}
	for _, c := range []struct {
		typ         ops.BinaryConvolutionType
		beta        bool
		inBias, inS float32
		want        float32
	}{
		// No input bias: a padded x~ is 0, which binarizes to +1.
		{ops.BinaryConvolutionXNOR, false, 0, 1, 8*1 + -1},
		{ops.BinaryConvolutionAND, false, 0, 1, 8},
		{ops.BinaryConvolutionBinaryWeights, false, 0, 1, -1},
		// inBias 0.5: padded x~ = 0.5 (+1), inside (-1+0.5) = -0.5 (-1).
		{ops.BinaryConvolutionXNOR, false, 0.5, 1, 7},
		// inBias -0.5: padded x~ = -0.5 (-1), inside -1.5 (-1).
		{ops.BinaryConvolutionXNOR, false, -0.5, 1, -9},
		{ops.BinaryConvolutionAND, false, -0.5, 1, 0},
		// BinaryWeights sums x~: 8 * (0.5*2) + (-1+0.5)*2 = 7.
		{ops.BinaryConvolutionBinaryWeights, false, 0.5, 2, 7},
		// beta: A = |x~| per pixel: 8 padded taps of 1 and one of 1 -> 1;
		// with inBias 0.5, scale 2: padded 1, inside 1 -> beta 1, S 7.
		{ops.BinaryConvolutionXNOR, true, 0.5, 2, 7},
		// inBias 0: padded A = 0, inside 1 -> beta = 1/9, S = 7.
		{ops.BinaryConvolutionXNOR, true, 0, 1, 7.0 / 9},
	} {
		flags := ops.BinaryConvolutionFlagsNone
		if c.beta {
			flags = ops.BinaryConvolutionUseBetaScaling
		}
		k, err := ops.NewBinaryConvolution(dev, ops.NewBinaryConvolutionDescriptor(3, 3, 1, 1, c.typ, flags),
			ops.BinaryConvolutionWeights{Weights: ones, InputBias: []float32{c.inBias}, InputScale: []float32{c.inS}})
		require.NoError(t, err)
		k.Padding = padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, false, false)
		var dst *ops.Image
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dst, err = k.EncodeNew(cb, src)
			return err
		}))
		got, err := dst.Read(ctx)
		require.NoError(t, err)
		assert.InDelta(t, c.want, got[0], 1e-6, "%v beta=%v inBias %v inScale %v", c.typ, c.beta, c.inBias, c.inS)
		dst.Close()
		k.Close()
	}
}

// bconvReadNpy reads a little-endian float32 .npy file (C order).
func bconvReadNpy(t *testing.T, path string) ([]int, []float32) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, len(b) > 10 && string(b[:6]) == "\x93NUMPY", "%s: not a .npy file", path)
	var hlen, start int
	if b[6] == 1 {
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	} else {
		hlen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	}
	header := string(b[start : start+hlen])
	require.Contains(t, header, "'descr': '<f4'", path)
	require.Contains(t, header, "'fortran_order': False", path)
	m := regexp.MustCompile(`'shape': \(([^)]*)\)`).FindStringSubmatch(header)
	require.NotNil(t, m, path)
	var shape []int
	n := 1
	for _, f := range strings.Split(m[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			v, err := strconv.Atoi(f)
			require.NoError(t, err)
			shape = append(shape, v)
			n *= v
		}
	}
	data := b[start+hlen:]
	require.Equal(t, 4*n, len(data), path)
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return shape, out
}

// The contract example (TRAINING.md; testdata/binary from the contract's
// bconv186): x 1x34x8x7, XNOR, a 1x1 kernel from 34 to 3 channels, no
// beta scaling, input bias and scale, explicit pads 0. GPU and reference
// match want_y within the contract's tolerance (1e-5 of the largest value
// plus 1e-4 relative).
func TestBinaryConvolutionContractExample(t *testing.T) {
	dev := vktest.Open(t)
	dir := "testdata/binary"
	load := func(name string) ([]int, []float32) { return bconvReadNpy(t, filepath.Join(dir, name+".npy")) }
	xs, x := load("x")
	ws, w := load("w")
	_, bias := load("bias")
	_, scale := load("scale")
	_, ib := load("ib")
	_, is := load("is")
	ys, want := load("want_y")
	require.Equal(t, []int{1, 34, 8, 7}, xs)
	c := bconvCase{typ: ops.BinaryConvolutionXNOR, n: xs[0], in: xs[1], h: xs[2], w: xs[3], out: ws[0], kh: ws[2], kw: ws[3],
		sx: 1, sy: 1, dx: 1, dy: 1, inputTerms: true,
		weights: w, scale: scale, bias: bias, inBias: ib, inScale: is, src: x}
	k, err := ops.NewBinaryConvolution(dev, c.descriptor(), c.weightsOf())
	require.NoError(t, err)
	defer k.Close()
	k.Padding = padding.Explicit(padding.Pads{}, false, false)
	src := newImage(t, dev, padding.Descriptor{N: xs[0], C: xs[1], H: xs[2], W: xs[3]}, x)
	var dst *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		var err error
		dst, err = k.EncodeNew(cb, src)
		return err
	}))
	defer dst.Close()
	require.Equal(t, ys, []int{dst.N(), dst.C(), dst.H(), dst.W()})
	got := must(dst.Read(context.Background()))
	scaleMax := 1.0
	for _, v := range want {
		scaleMax = math.Max(scaleMax, math.Abs(float64(v)))
	}
	refGot := c.reference(t, ys[2], ys[3])
	for i := range want {
		tol := 1e-5*scaleMax + 1e-4*math.Abs(float64(want[i]))
		require.InDelta(t, want[i], got[i], tol, "GPU value %d", i)
		require.InDelta(t, want[i], refGot[i], tol, "reference value %d", i)
	}
}

// Packed weights (MPS's layout, with garbage in the bits beyond I) give
// the same result as the floats they encode.
func TestBinaryConvolutionPackedWeights(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(4))
	c := bconvCase{typ: ops.BinaryConvolutionXNOR, beta: true, n: 2, in: 37, out: 9, h: 6, w: 5, kw: 3, kh: 2, sx: 1, sy: 1, dx: 1, dy: 1,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 0, Right: 1}, inputTerms: true}
	c.fill(r)
	words := (c.in + 31) / 32
	packed := make([]uint32, c.out*c.kh*c.kw*words)
	for i := range packed {
		packed[i] = r.Uint32() // garbage, overwritten below for channels < I
	}
	for o := 0; o < c.out; o++ {
		for y := 0; y < c.kh; y++ {
			for x := 0; x < c.kw; x++ {
				for ch := 0; ch < c.in; ch++ {
					i := ((o*c.kh+y)*c.kw+x)*words + ch/32
					bit := uint32(1) << (ch % 32)
					if c.weights[((o*c.in+ch)*c.kh+y)*c.kw+x] >= 0 {
						packed[i] |= bit
					} else {
						packed[i] &^= bit
					}
				}
			}
		}
	}
	src := newImage(t, dev, padding.Descriptor{N: c.n, C: c.in, H: c.h, W: c.w}, c.src)
	results := make([][]float32, 2)
	for i, w := range []ops.BinaryConvolutionWeights{c.weightsOf(), {Packed: packed, OutputScale: c.scale, OutputBias: c.bias, InputBias: c.inBias, InputScale: c.inScale}} {
		k := must(ops.NewBinaryConvolution(dev, c.descriptor(), w))
		k.Padding = padding.Explicit(c.pads, false, false)
		var dst *ops.Image
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			dst, err = k.EncodeNew(cb, src)
			return err
		}))
		results[i] = must(dst.Read(ctx))
		dst.Close()
		k.Close()
	}
	assert.Equal(t, results[0], results[1])
}

// Kernel properties: a clip rectangle, a destination channel offset and a
// source channel offset and batch offset. Pixels outside the clip and
// channels outside the written range keep their values.
func TestBinaryConvolutionProperties(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(8))
	c := bconvCase{typ: ops.BinaryConvolutionAND, n: 1, in: 5, out: 3, h: 7, w: 6, kw: 3, kh: 3, sx: 1, sy: 1, dx: 1, dy: 1,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, inputTerms: true}
	c.fill(r)
	// The source holds 2 batch images of 7 channels; the kernel reads image 1,
	// channels 2..6.
	big := randomData(r, 2*7*c.h*c.w)
	for ch := 0; ch < c.in; ch++ {
		copy(big[((1*7)+2+ch)*c.h*c.w:((1*7)+3+ch)*c.h*c.w], c.src[ch*c.h*c.w:(ch+1)*c.h*c.w])
	}
	src := newImage(t, dev, padding.Descriptor{N: 2, C: 7, H: c.h, W: c.w}, big)
	dd := padding.Descriptor{N: 1, C: 5, H: c.h, W: c.w}
	dst := newImage(t, dev, dd, filled(5*c.h*c.w, poisonValue))
	k := must(ops.NewBinaryConvolution(dev, c.descriptor(), c.weightsOf()))
	defer k.Close()
	k.SourceFeatureChannelOffset, k.DestinationFeatureChannelOffset = 2, 1
	k.Offset = ops.Offset{X: 1, Y: 2, Z: 1} // pads 1: window centre of clip (1,1) is (1,1) + (0,1)
	k.ClipRect = ops.Region{X: 1, Y: 1, Width: 3, Height: 4}
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error { return k.Encode(cb, src, dst) }))
	got := must(dst.Read(ctx))
	want := c.reference(t, c.h, c.w) // the same convolution over the whole image, pad 1
	for ch := 0; ch < 5; ch++ {
		for y := 0; y < c.h; y++ {
			for x := 0; x < c.w; x++ {
				g := got[(ch*c.h+y)*c.w+x]
				inClip := x >= 1 && x < 4 && y >= 1 && y < 5 && ch >= 1 && ch < 4
				if !inClip {
					require.Equal(t, float32(poisonValue), g, "untouched (%d, %d, %d)", ch, y, x)
					continue
				}
				// Clip pixel (x, y) reads the window centred at (x, y+1).
				wy, wx := y+1, x
				if wy >= c.h {
					continue
				}
				require.InDelta(t, want[((ch-1)*c.h+wy)*c.w+wx], g, 1e-5, "(%d, %d, %d)", ch, y, x)
			}
		}
	}
}

// Sources larger than the storage-buffer range are split into groups of
// batch images: a 64 KiB cap and 32 KB per batch image.
func TestBinaryConvolutionSplitsBatches(t *testing.T) {
	dev := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	r := rand.New(rand.NewSource(9))
	for _, typ := range []ops.BinaryConvolutionType{ops.BinaryConvolutionXNOR, ops.BinaryConvolutionBinaryWeights} {
		c := bconvCase{typ: typ, beta: true, n: 5, in: 5, out: 4, h: 40, w: 40, kw: 3, kh: 3, sx: 1, sy: 1, dx: 1, dy: 1,
			pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}}
		c.fill(r)
		c.run(t, dev)
	}
	// One batch image over the range is an ErrDeviceLimit.
	k := must(ops.NewBinaryConvolution(dev, ops.NewBinaryConvolutionDescriptor(1, 1, 1, 1, ops.BinaryConvolutionXNOR, 0),
		ops.BinaryConvolutionWeights{Weights: []float32{1}}))
	defer k.Close()
	src := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 130, W: 130}, nil)
	dst := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 130, W: 130}, nil)
	cb := must(dev.NewCommandBuffer())
	defer cb.Close()
	assert.ErrorIs(t, k.Encode(cb, src, dst), ops.ErrDeviceLimit)
	assert.Zero(t, cb.Commands())
}

// Bad input: each class gives its sentinel; nothing panics or is recorded.
func TestBinaryConvolutionBadInput(t *testing.T) {
	dev := vktest.Open(t)
	other := vktest.Open(t)
	nan := float32(math.NaN())
	xnor := ops.BinaryConvolutionXNOR
	good := ops.NewBinaryConvolutionDescriptor(3, 3, 5, 2, xnor, 0)
	w := func() []float32 { return filled(2*5*9, 1) }
	desc := func(f func(d *ops.BinaryConvolutionDescriptor)) ops.BinaryConvolutionDescriptor {
		d := good
		f(&d)
		return d
	}
	for _, c := range []struct {
		name string
		d    ops.BinaryConvolutionDescriptor
		w    ops.BinaryConvolutionWeights
		err  error
	}{
		{"kernel width 0", desc(func(d *ops.BinaryConvolutionDescriptor) { d.KernelWidth = 0 }), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"stride 0", desc(func(d *ops.BinaryConvolutionDescriptor) { d.StrideY = 0 }), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"dilation 0", desc(func(d *ops.BinaryConvolutionDescriptor) { d.DilationX = 0 }), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"no input channels", desc(func(d *ops.BinaryConvolutionDescriptor) { d.InputFeatureChannels = 0 }), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"groups 2", desc(func(d *ops.BinaryConvolutionDescriptor) { d.Groups = 2 }), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"unknown type", desc(func(d *ops.BinaryConvolutionDescriptor) { d.Type = 3 }), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"unknown flags", desc(func(d *ops.BinaryConvolutionDescriptor) { d.Flags = 2 }), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"PReLU slopes for 3 channels", desc(func(d *ops.BinaryConvolutionDescriptor) {
			d.Neuron = ops.NeuronDescriptor{Type: ops.NeuronPReLU, PReLU: []float32{1, 2, 3}}
		}), ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrShape},
		{"NaN neuron parameter", desc(func(d *ops.BinaryConvolutionDescriptor) {
			d.Neuron = ops.NeuronDescriptor{Type: ops.NeuronReLU, A: nan}
		}),
			ops.BinaryConvolutionWeights{Weights: w()}, ops.ErrGeometry},
		{"no weights", good, ops.BinaryConvolutionWeights{}, ops.ErrGeometry},
		{"both weight forms", good, ops.BinaryConvolutionWeights{Weights: w(), Packed: make([]uint32, 18)}, ops.ErrGeometry},
		{"weights of another length", good, ops.BinaryConvolutionWeights{Weights: w()[1:]}, ops.ErrShape},
		{"packed of another length", good, ops.BinaryConvolutionWeights{Packed: make([]uint32, 17)}, ops.ErrShape},
		{"NaN weight", good, ops.BinaryConvolutionWeights{Weights: append(w()[1:], nan)}, ops.ErrGeometry},
		{"scale of another length", good, ops.BinaryConvolutionWeights{Weights: w(), OutputScale: []float32{1}}, ops.ErrShape},
		{"NaN bias", good, ops.BinaryConvolutionWeights{Weights: w(), OutputBias: []float32{0, nan}}, ops.ErrGeometry},
		{"infinite input scale", good, ops.BinaryConvolutionWeights{Weights: w(), InputScale: []float32{1, 1, float32(math.Inf(-1)), 1, 1}}, ops.ErrGeometry},
		{"input bias of another length", good, ops.BinaryConvolutionWeights{Weights: w(), InputBias: []float32{1}}, ops.ErrShape},
	} {
		_, err := ops.NewBinaryConvolution(dev, c.d, c.w)
		assert.ErrorIs(t, err, c.err, c.name)
	}
	_, err := ops.NewBinaryConvolution(nil, good, ops.BinaryConvolutionWeights{Weights: w()})
	assert.ErrorIs(t, err, ops.ErrDevice)
	_, err = ops.NewBinaryConvolutionGradient(dev, good)
	assert.ErrorIs(t, err, errors.ErrUnsupported, "inference only")
	_, err = ops.ParseBinaryConvolutionType("or")
	assert.ErrorIs(t, err, ops.ErrGeometry)
	_, err = good.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 4, H: 8, W: 8}, nil)
	assert.ErrorIs(t, err, ops.ErrChannelRange, "source of another channel count")
	_, err = good.ResultDescriptor(ops.ImageDescriptor{N: 1, C: 5, H: 2, W: 2}, padding.WithMethod(padding.Valid))
	assert.ErrorIs(t, err, padding.ErrEmptyDestination)

	k := must(ops.NewBinaryConvolution(dev, good, ops.BinaryConvolutionWeights{Weights: w()}))
	defer k.Close()
	sd := padding.Descriptor{N: 2, C: 5, H: 6, W: 6}
	src := newImage(t, dev, sd, nil)
	dst := newImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 6, W: 6}, nil)
	few := newImage(t, dev, padding.Descriptor{N: 2, C: 4, H: 6, W: 6}, nil)
	narrow := newImage(t, dev, padding.Descriptor{N: 2, C: 1, H: 6, W: 6}, nil)
	foreign := newImage(t, other, padding.Descriptor{N: 2, C: 2, H: 6, W: 6}, nil)
	closed := newImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 6, W: 6}, nil)
	require.NoError(t, closed.Close())
	closedK := must(ops.NewBinaryConvolution(dev, good, ops.BinaryConvolutionWeights{Weights: w()}))
	require.NoError(t, closedK.Close())
	require.NoError(t, closedK.Close())
	both := newImage(t, dev, padding.Descriptor{N: 2, C: 7, H: 6, W: 6}, nil)
	bothIn := must(both.ChannelView(0, 5))
	bothOut := must(both.ChannelView(3, 2))
	cb := must(dev.NewCommandBuffer())
	defer cb.Close()
	for _, c := range []struct {
		name     string
		k        *ops.BinaryConvolution
		cb       *vk.CommandBuffer
		src, dst *ops.Image
		err      error
	}{
		{"nil command buffer", k, nil, src, dst, ops.ErrInvalidImage},
		{"closed kernel", closedK, cb, src, dst, ops.ErrClosed},
		{"nil source", k, cb, nil, dst, ops.ErrInvalidImage},
		{"closed destination", k, cb, src, closed, ops.ErrClosed},
		{"foreign destination", k, cb, src, foreign, ops.ErrDevice},
		{"too few source channels", k, cb, few, dst, ops.ErrChannelRange},
		{"too few destination channels", k, cb, src, narrow, ops.ErrChannelRange},
		{"source and destination overlap", k, cb, bothIn, bothOut, ops.ErrAlias},
	} {
		assert.ErrorIs(t, c.k.Encode(c.cb, c.src, c.dst), c.err, c.name)
	}
	if dev.Limits().Float16Storage {
		half := newHalfImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 6, W: 6}, nil)
		assert.ErrorIs(t, k.Encode(cb, src, half), ops.ErrFormat, "mixed formats")
	}
	k.ClipRect = ops.Region{X: 6}
	assert.ErrorIs(t, k.Encode(cb, src, dst), ops.ErrGeometry, "clip outside")
	k.ClipRect = ops.Region{}
	k.Offset.Z = 1
	assert.ErrorIs(t, k.Encode(cb, src, dst), ops.ErrShape, "batch offset past the source")
	k.Offset.Z = 0
	k.SourceFeatureChannelMaxCount = 3
	assert.ErrorIs(t, k.Encode(cb, src, dst), ops.ErrChannelRange, "max count below I")
	k.SourceFeatureChannelMaxCount = 0
	_, err = closedK.EncodeNew(cb, src)
	assert.ErrorIs(t, err, ops.ErrClosed)
	_, err = k.EncodeNew(cb, few)
	assert.ErrorIs(t, err, ops.ErrChannelRange)
	assert.Zero(t, cb.Commands(), "nothing refused was recorded")
}
