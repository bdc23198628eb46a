package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/flagx"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// poolFlagsHelp is the part of `vkmps pool --help` and `vkmps pool-grad
// --help` that explains the kernel flags.
const poolFlagsHelp = `The kernel:
  --op max|avg|l2|dilated-max  the pooling kernel (MPSCNNPoolingMax, ...Average,
                               ...L2Norm, MPSCNNDilatedPoolingMax)
  --kernel KH,KW               window size; one number for a square window
  --stride SH,SW               step (default: the kernel size, as in PyTorch)
  --dilation DH,DW             tap spacing, max and dilated-max only (default 1)

Padding: one of three ways, PyTorch's by default.
  --pad T,L,B,R                PyTorch/ONNX explicit pads (also PH,PW or one
                               number), with PyTorch's semantics: max ignores the
                               padding; avg divides by the in-image tap count, or
                               with --count-include-pad by the padded window;
                               --ceil-mode rounds the output size up (PyTorch's
                               rule: no window may start in the bottom/right pad).
                               Each pad is at most half the window's extent
                               (k-1)*d+1, as PyTorch requires.
                               When none of --pad, --padding, --padding-method is
                               given, vkmps uses --pad 0 (PyTorch's default).
  --padding valid|same|full    an MPS padding policy (MPSNNPaddingMethod sizes
                               ValidOnly, Same, Full, centred), with --edge
            tf-same|tf-valid   TensorFlow's SAME and VALID (padding not averaged,
                               max ignores it)
            caffe              Caffe's: symmetric pads from --pad (default 0),
                               ceil output size, divisor clipped to the padded image
  --padding-method N           MPSNNPaddingMethod bits, e.g. 16 (Same) or 0x8010
                               (Same|ExcludeEdges), with --edge
  --edge zero|clamp            MPS edge mode, for --padding valid|same|full and
                               --padding-method only (default zero: taps outside
                               the image read 0; clamp: the window shrinks to the
                               image). Explicit pads and the presets fix it.
  --zero-pad X,Y               avg with --edge clamp: zero padding that counts in
                               the divisor (MPS zeroPadSizeX/Y)`

// poolFlags are the flags `vkmps pool` and `vkmps pool-grad` share.
type poolFlags struct {
	fs                       *flag.FlagSet
	op, edge, padding        *flagx.Choice
	kernel, stride, dilation *flagx.PairHW
	pad                      *flagx.Quad
	zeroPad                  *flagx.PairXY
	ceil, countIncludePad    *bool
	method                   *string
	device, in, out          *string
	quiet                    *bool
}

// opKinds maps --op to the kernel family.
var opKinds = map[string]ops.PoolingKind{
	"max": ops.KindMax, "avg": ops.KindAverage, "l2": ops.KindL2Norm, "dilated-max": ops.KindDilatedMax,
}

func addPoolFlags(fs *flag.FlagSet) *poolFlags {
	return &poolFlags{
		fs:              fs,
		op:              flagx.NewChoice(fs, "op", "", []string{"max", "avg", "l2", "dilated-max"}, "pooling kernel (required)"),
		kernel:          flagx.NewPairHW(fs, "kernel", 0, 0, 1, "window `KH,KW` (required)"),
		stride:          flagx.NewPairHW(fs, "stride", 0, 0, 1, "step `SH,SW` (default: the kernel size)"),
		dilation:        flagx.NewPairHW(fs, "dilation", 1, 1, 1, "tap spacing `DH,DW`, max and dilated-max only"),
		pad:             flagx.NewQuad(fs, "pad", 0, "PyTorch/ONNX explicit pads `T,L,B,R` (or PH,PW or N); the default policy, with 0"),
		ceil:            fs.Bool("ceil-mode", false, "with explicit pads: PyTorch's ceil_mode"),
		countIncludePad: fs.Bool("count-include-pad", false, "avg with explicit pads: divide by the padded window (PyTorch's count_include_pad)"),
		padding:         flagx.NewChoice(fs, "padding", "", []string{"valid", "same", "full", "tf-same", "tf-valid", "caffe"}, "padding policy instead of --pad"),
		method:          fs.String("padding-method", "", "MPSNNPaddingMethod bits `N` instead of --pad (decimal or 0x hex)"),
		edge:            flagx.NewChoice(fs, "edge", "zero", []string{"zero", "clamp"}, "edge mode, with --padding valid|same|full or --padding-method"),
		zeroPad:         flagx.NewPairXY(fs, "zero-pad", 0, 0, 0, "avg with --edge clamp: zero padding `X,Y` counted in the divisor"),
		device:          fs.String("device", "", "device `D`: index or part of its name (default $VKMPS_DEVICE, then the best)"),
		in:              fs.String("in", "", "input `X.npy|X.png` (required)"),
		out:             fs.String("out", "", "output `Y.npy|Y.png` (required; never one of the inputs)"),
		quiet:           fs.Bool("quiet", false, "print nothing on success"),
	}
}

// poolConfig is a pooling kernel as the flags describe it.
type poolConfig struct {
	kind    ops.PoolingKind
	geom    ops.Geometry
	policy  padding.Policy
	edge    ops.EdgeMode // for the MPS policies; the others set their own
	zeroPad padding.Pads // avg with --zero-pad
}

// config checks the flags' combination, in a fixed order, and returns the
// kernel they describe. Its errors are about the command line.
func (p *poolFlags) config() (poolConfig, error) {
	if err := flagx.Require(p.fs, "op", "kernel"); err != nil {
		return poolConfig{}, err
	}
	var c poolConfig
	c.kind = opKinds[p.op.Value]
	op := p.op.Value
	isMax := c.kind.IsMax()
	stride := *p.stride
	if !stride.IsSet() {
		stride.H, stride.W = p.kernel.H, p.kernel.W
	}
	c.geom = ops.Geometry{KernelWidth: p.kernel.W, KernelHeight: p.kernel.H, StrideX: stride.W, StrideY: stride.H,
		DilationX: p.dilation.W, DilationY: p.dilation.H}

	// Flags that only some kernels have.
	if !isMax && (p.dilation.H != 1 || p.dilation.W != 1) {
		return c, fmt.Errorf("flag --dilation applies to --op max and dilated-max only, not %s", op)
	}
	if *p.countIncludePad && c.kind != ops.KindAverage {
		return c, fmt.Errorf("flag --count-include-pad applies to --op avg only, not %s", op)
	}
	if p.zeroPad.IsSet() && c.kind != ops.KindAverage {
		return c, fmt.Errorf("flag --zero-pad applies to --op avg only, not %s", op)
	}

	// One padding policy.
	set := func(name string) bool { return flagx.WasSet(p.fs, name) }
	preset := p.padding.Value == "tf-same" || p.padding.Value == "tf-valid" || p.padding.Value == "caffe"
	switch {
	case set("padding") && set("padding-method"):
		return c, flagx.Conflict(p.fs, "padding", "padding-method")
	case set("pad") && set("padding-method"):
		return c, flagx.Conflict(p.fs, "pad", "padding-method")
	case set("pad") && set("padding") && p.padding.Value != "caffe":
		return c, fmt.Errorf("flag --pad conflicts with flag --padding %s (--pad goes with --padding caffe only)", p.padding.Value)
	}
	explicit := !set("padding") && !set("padding-method")
	if !explicit {
		for _, f := range []string{"ceil-mode", "count-include-pad"} {
			if set(f) {
				return c, fmt.Errorf("flag --%s applies to explicit pads (--pad) only: --padding and --padding-method set the size and divisor themselves", f)
			}
		}
	}
	if set("edge") && (explicit || preset) {
		by := "explicit pads (--pad, the default) use clamp, as PyTorch does"
		if preset {
			by = "--padding " + p.padding.Value + " sets the edge mode itself"
		}
		return c, fmt.Errorf("flag --edge applies to --padding valid|same|full and --padding-method only: %s", by)
	}
	if p.zeroPad.IsSet() {
		if explicit || preset {
			return c, fmt.Errorf("flag --zero-pad applies to --padding valid|same|full and --padding-method only (with --pad, use --count-include-pad)")
		}
		if p.edge.Value != "clamp" {
			return c, fmt.Errorf("flag --zero-pad needs --edge clamp (zero pads count only when the window shrinks to the image)")
		}
		c.zeroPad = padding.Pads{Top: p.zeroPad.Y, Left: p.zeroPad.X, Bottom: p.zeroPad.Y, Right: p.zeroPad.X}
	}
	c.edge = ops.EdgeZero
	if p.edge.Value == "clamp" {
		c.edge = ops.EdgeClamp
	}

	pads := padding.Pads{Top: p.pad.Top, Left: p.pad.Left, Bottom: p.pad.Bottom, Right: p.pad.Right}
	switch {
	case explicit:
		if err := checkTorchPads(pads, c.geom); err != nil {
			return c, err
		}
		c.policy = padding.Explicit(pads, *p.ceil, *p.countIncludePad)
	case set("padding-method"):
		m, err := parseMethod(*p.method)
		if err != nil {
			return c, err
		}
		c.policy = padding.WithMethod(m)
	default:
		if p.padding.Value == "caffe" {
			if err := checkCaffePads(pads, c.geom); err != nil {
				return c, err
			}
		}
		c.policy = presetPolicy(p.padding.Value, c.kind, pads)
		if c.policy == nil {
			return c, fmt.Errorf("flag --padding caffe takes symmetric pads: --pad %s has top %d, bottom %d, left %d, right %d",
				p.pad, pads.Top, pads.Bottom, pads.Left, pads.Right)
		}
		if preset {
			// TensorFlow and Caffe ignore the padding in max pooling and
			// never read it in L2 pooling: the window shrinks to the image.
			c.edge = ops.EdgeClamp
		}
	}
	return c, nil
}

// checkTorchPads refuses explicit pads PyTorch refuses: a pad over half
// the window's effective extent on its axis, (k-1)*d+1 (torch ≥ 2.0's
// pooling_output_shape check; torch 1.13 compared with half the kernel
// size, the same without dilation). Such pads make windows that lie
// wholly in the padding, and vkmps documents --pad as PyTorch's.
func checkTorchPads(p padding.Pads, g ops.Geometry) error {
	kx, ky := (g.KernelWidth-1)*g.DilationX+1, (g.KernelHeight-1)*g.DilationY+1
	for _, side := range []struct {
		name     string
		pad, ext int
	}{{"top", p.Top, ky}, {"left", p.Left, kx}, {"bottom", p.Bottom, ky}, {"right", p.Right, kx}} {
		if side.pad > side.ext/2 {
			return &flagx.Error{Flag: "pad", Msg: fmt.Sprintf("the %s pad %d is more than half the window's extent %d (at most %d): PyTorch refuses it, and windows would lie wholly in the padding",
				side.name, side.pad, side.ext, side.ext/2)}
		}
	}
	return nil
}

// checkCaffePads refuses pads Caffe's pooling layer refuses: a pad of the
// kernel size or more (CHECK_LT(pad, kernel)).
func checkCaffePads(p padding.Pads, g ops.Geometry) error {
	if p.Top >= g.KernelHeight || p.Left >= g.KernelWidth {
		return &flagx.Error{Flag: "pad", Msg: fmt.Sprintf("pads %d,%d with --padding caffe must be smaller than the kernel %dx%d, as Caffe requires",
			p.Top, p.Left, g.KernelHeight, g.KernelWidth)}
	}
	return nil
}

// presetPolicy returns the policy of --padding name (with the --pad pads
// for caffe), or nil for asymmetric caffe pads.
func presetPolicy(name string, kind ops.PoolingKind, pads padding.Pads) padding.Policy {
	avg := kind == ops.KindAverage
	switch name {
	case "valid":
		return padding.WithMethod(padding.Valid)
	case "same":
		return padding.WithMethod(padding.Same)
	case "full":
		return padding.WithMethod(padding.Full)
	case "tf-same":
		if avg {
			return padding.TensorFlowAveragePooling()
		}
		return padding.TensorFlowSame()
	case "tf-valid":
		if avg {
			return padding.TensorFlowAveragePoolingValidOnly()
		}
		return padding.TensorFlowValid()
	}
	if pads.Top != pads.Bottom || pads.Left != pads.Right {
		return nil
	}
	return padding.Caffe(pads.Top, pads.Left)
}

// parseMethod parses --padding-method: a number (decimal, or 0x hex) that
// padding.Method.Validate accepts, without the Custom bits (a custom
// policy is Go code, not a number).
func parseMethod(s string) (padding.Method, error) {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 32)
	if err != nil {
		return 0, &flagx.Error{Flag: "padding-method", Msg: fmt.Sprintf("%q is not a number (want MPSNNPaddingMethod bits, e.g. 16 or 0x8010)", s)}
	}
	m := padding.Method(v)
	if err := m.Validate(); err != nil {
		return 0, &flagx.Error{Flag: "padding-method", Msg: fmt.Sprintf("%s: %v", s, err)}
	}
	if m&(padding.Custom|padding.CustomWhitelistForNodeFusion) != 0 {
		return 0, &flagx.Error{Flag: "padding-method", Msg: fmt.Sprintf("%s (%v) sets a Custom bit: a custom policy cannot be given on the command line", s, m)}
	}
	return m, nil
}

// newKernel makes the forward kernel c describes on dev.
func (c poolConfig) newKernel(dev *vk.Device) (ops.Pooling, error) {
	k, err := ops.NewPooling(dev, c.kind, c.geom)
	if err != nil {
		return nil, err
	}
	props := k.Properties()
	props.Padding = c.policy
	props.EdgeMode = c.edge
	if a, ok := k.(*ops.PoolingAverage); ok {
		a.ZeroPad = c.zeroPad
	}
	return k, nil
}

// describe returns the kernel as the summary line shows it, after an
// encode (which sets the edge mode the policy chose).
func describeKernel(k ops.Pooling) string {
	g := k.Geometry()
	props := k.Properties()
	s := fmt.Sprintf("%s %dx%d stride %dx%d", k.Kind(), g.KernelHeight, g.KernelWidth, g.StrideY, g.StrideX)
	if g.DilationX != 1 || g.DilationY != 1 {
		s += fmt.Sprintf(" dilation %dx%d", g.DilationY, g.DilationX)
	}
	s += ", padding " + props.Padding.Label() + ", edge " + strings.ToLower(props.EdgeMode.String())
	if a, ok := k.(*ops.PoolingAverage); ok && a.ZeroPad != (padding.Pads{}) {
		s += fmt.Sprintf(", zero pad %v", a.ZeroPad)
	}
	return s
}
