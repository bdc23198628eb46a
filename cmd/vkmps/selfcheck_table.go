package main

import (
	"fmt"
	"math/rand"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
)

// checkCase is one configuration selfcheck runs forward and backward on
// the GPU and compares with the CPU reference (or with PyTorch's results).
type checkCase struct {
	name string
	kind ops.PoolingKind
	geom ops.Geometry
	src  padding.Descriptor

	// The policy form: EncodeNewWithState sizes the destination with
	// policy, from the edge mode and (average) zero pads.
	policy  padding.Policy
	edge    ops.EdgeMode
	zeroPad padding.Pads

	// The explicit form (policy nil): Encode into dst with the properties
	// as set: offset, clip, and for average ExcludeEdges with its pads.
	dst      padding.Descriptor
	off      ops.Offset
	clip     ops.Region
	exclude  bool
	edgePads padding.Pads

	argmax    bool      // max kinds record the argmax in the forward pass
	input, dy []float32 // dy nil: drawn once the destination's size is known

	// PyTorch cases carry the expected results; random cases use the CPU
	// reference.
	wantY, wantDx []float32
}

// checkKinds are the kernel families selfcheck covers, in report order.
var checkKinds = []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm, ops.KindDilatedMax}

// randomCase draws a configuration of kind as the ops tests do: kernel
// 1-7 (or 15, one time in eight), stride 1-4, dilation 1-3 (dilated max),
// both edge modes, sources from 1x1 to 37x29 with 1-17 channels and 1-3
// batch images; three cases in four size their destination through a
// padding policy (every MPSNNPaddingMethod, the TensorFlow and Caffe
// presets, PyTorch's explicit pads with ceil mode and count_include_pad,
// average zero pads), the fourth sets an offset and a clip rectangle (and
// for average ExcludeEdges or zero pads) and encodes into a destination of
// its own. Max inputs hold ties one time in three and NaNs one in three;
// max kinds record the argmax half of the time.
func randomCase(r *rand.Rand, kind ops.PoolingKind, id int) checkCase {
	for {
		c := drawCase(r, kind)
		c.name = fmt.Sprintf("random %d: %s", id, c.describe())
		if c.policy != nil {
			k := padding.Kernel{KernelW: c.geom.KernelWidth, KernelH: c.geom.KernelHeight, StrideX: c.geom.StrideX, StrideY: c.geom.StrideY,
				DilationX: c.geom.DilationX, DilationY: c.geom.DilationY, EdgeMode: c.edge, ZeroPad: c.zeroPad}
			if _, err := padding.Resolve(c.policy, []padding.Descriptor{c.src}, nil, k); err != nil {
				continue // an empty destination: draw again
			}
		}
		c.input = ref.PoolingInput(r, kind.IsMax(), c.src.N*c.src.C*c.src.H*c.src.W)
		return c
	}
}

func drawCase(r *rand.Rand, kind ops.PoolingKind) checkCase {
	k := func() int {
		if r.Intn(8) == 0 {
			return 15
		}
		return 1 + r.Intn(7)
	}
	g := ops.Geometry{KernelWidth: k(), KernelHeight: k(), StrideX: 1 + r.Intn(4), StrideY: 1 + r.Intn(4), DilationX: 1, DilationY: 1}
	if kind == ops.KindDilatedMax {
		g.DilationX, g.DilationY = 1+r.Intn(3), 1+r.Intn(3)
	}
	c := checkCase{kind: kind, geom: g, edge: ops.EdgeMode(r.Intn(2)), argmax: r.Intn(2) == 0}
	c.src = padding.Descriptor{N: 1 + r.Intn(3), C: 1 + r.Intn(17), H: 1 + r.Intn(29), W: 1 + r.Intn(37)}
	pads := func() padding.Pads {
		return padding.Pads{Top: r.Intn(3), Left: r.Intn(3), Bottom: r.Intn(3), Right: r.Intn(3)}
	}
	avg := kind == ops.KindAverage

	if r.Intn(4) > 0 {
		switch r.Intn(6) {
		case 0, 1, 2:
			m := padding.Method(r.Intn(3))<<4 | padding.Method(r.Intn(3)) | padding.Method(r.Intn(4))<<2
			if avg && r.Intn(3) == 0 {
				m |= padding.ExcludeEdges
			}
			c.policy = padding.WithMethod(m)
			if avg && c.edge == ops.EdgeClamp && r.Intn(2) == 0 {
				c.zeroPad = pads()
			}
		case 3:
			c.policy = []padding.Policy{padding.TensorFlowSame(), padding.TensorFlowValid(),
				padding.TensorFlowAveragePooling(), padding.TensorFlowAveragePoolingValidOnly()}[r.Intn(4)]
		case 4:
			c.policy = padding.Caffe(r.Intn(3), r.Intn(3))
		default:
			c.policy = padding.Explicit(pads(), r.Intn(2) == 0, r.Intn(2) == 0)
		}
		return c
	}

	keX, keY := (g.KernelWidth-1)*g.DilationX+1, (g.KernelHeight-1)*g.DilationY+1
	c.dst = padding.Descriptor{N: c.src.N, C: c.src.C, H: 1 + (c.src.H+keY)/g.StrideY, W: 1 + (c.src.W+keX)/g.StrideX}
	c.off = ops.Offset{X: r.Intn(keX+2) - 1, Y: r.Intn(keY+2) - 1}
	if avg && c.edge == ops.EdgeClamp && r.Intn(2) == 0 {
		c.zeroPad = pads()
	}
	if avg && c.edge == ops.EdgeZero && r.Intn(2) == 0 {
		c.exclude, c.edgePads = true, pads()
	}
	switch r.Intn(3) {
	case 0: // a clip rectangle inside the destination
		c.clip = ops.Region{X: r.Intn(c.dst.W), Y: r.Intn(c.dst.H), Width: r.Intn(4), Height: r.Intn(4)}
	case 1: // a window of the batch
		if c.src.N > 1 {
			c.off.Z = 1
			c.clip = ops.Region{Z: r.Intn(2), Depth: 1}
		}
	}
	return c
}

// describe names the configuration in failure messages.
func (c checkCase) describe() string {
	g := c.geom
	s := fmt.Sprintf("kernel %dx%d stride %dx%d", g.KernelHeight, g.KernelWidth, g.StrideY, g.StrideX)
	if g.DilationX != 1 || g.DilationY != 1 {
		s += fmt.Sprintf(" dilation %dx%d", g.DilationY, g.DilationX)
	}
	s += fmt.Sprintf(" source %dx%dx%dx%d edge %v", c.src.N, c.src.C, c.src.H, c.src.W, c.edge)
	if c.policy != nil {
		s += " padding " + c.policy.Label()
	} else {
		s += fmt.Sprintf(" offset %v clip %v destination %dx%d", c.off, c.clip, c.dst.H, c.dst.W)
		if c.exclude {
			s += fmt.Sprintf(" exclude-edges %v", c.edgePads)
		}
	}
	if c.zeroPad != (padding.Pads{}) {
		s += fmt.Sprintf(" zero-pad %v", c.zeroPad)
	}
	if c.argmax && c.kind.IsMax() {
		s += " argmax"
	}
	return s
}

// torchCase is a PyTorch case of ops/testdata/torch through the
// explicit-pads policy, as `vkmps pool --pad` runs it.
func torchCase(tc ref.TorchCase, i int) checkCase {
	kind := map[string]ops.PoolingKind{"max": ops.KindMax, "avg": ops.KindAverage, "l2": ops.KindL2Norm}[tc.Op]
	g := ops.Geometry{KernelWidth: tc.Kernel[1], KernelHeight: tc.Kernel[0], StrideX: tc.Stride[1], StrideY: tc.Stride[0],
		DilationX: tc.Dilation[1], DilationY: tc.Dilation[0]}
	if kind == ops.KindMax && (g.DilationX > 1 || g.DilationY > 1) {
		kind = ops.KindDilatedMax
	}
	p := tc.Padding
	in, out, dy, dx := tc.Tensors()
	return checkCase{
		name: "PyTorch " + tc.Name, kind: kind, geom: g, src: in.Shape(),
		policy: padding.Explicit(padding.Pads{Top: p[0], Left: p[1], Bottom: p[0], Right: p[1]}, tc.CeilMode, tc.CountIncludePad),
		argmax: i%2 == 1, input: in.Data, dy: dy.Data, wantY: out.Data, wantDx: dx.Data,
	}
}

// refKind maps a kernel family to the reference's.
func refKind(k ops.PoolingKind) ref.Kind {
	return map[ops.PoolingKind]ref.Kind{ops.KindMax: ref.Max, ops.KindAverage: ref.Average,
		ops.KindL2Norm: ref.L2Norm, ops.KindDilatedMax: ref.DilatedMax}[k]
}

// stateGeometry is the reference geometry a gradient state describes: what
// the forward encode used.
func stateGeometry(st *ops.PoolingGradientState) ref.Geometry {
	g := st.Geometry
	return ref.Geometry{Kind: refKind(st.Kind), KernelW: g.KernelWidth, KernelH: g.KernelHeight,
		StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY,
		OffsetX: st.Offset.X, OffsetY: st.Offset.Y, OffsetZ: st.Offset.Z, EdgeMode: st.EdgeMode,
		ZeroPad: st.ZeroPad, ExcludeEdges: st.ExcludeEdges, Pads: st.EdgePads,
		Clip: ref.Clip{X: st.Clip.X, Y: st.Clip.Y, Z: st.Clip.Z, W: st.Clip.Width, H: st.Clip.Height, D: st.Clip.Depth}}
}
