package ops

import (
	"fmt"
	"math"
	"strings"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// ArithmeticOp is an arithmetic kernel's operation (MPSCNNAdd,
// MPSCNNSubtract, MPSCNNMultiply, MPSCNNDivide).
type ArithmeticOp int

const (
	ArithmeticAdd ArithmeticOp = iota
	ArithmeticSubtract
	ArithmeticMultiply
	ArithmeticDivide
	numArithmeticOps
)

// arithNames are the graph JSON names (TRAINING.md).
var arithNames = [numArithmeticOps]string{"add", "subtract", "multiply", "divide"}

// arithLabels name the kernels in errors (static: encodes allocate nothing).
var arithLabels = [numArithmeticOps]string{"Arithmetic(add)", "Arithmetic(subtract)", "Arithmetic(multiply)", "Arithmetic(divide)"}
var arithGradLabels = [2][numArithmeticOps]string{
	{"ArithmeticGradient(add, primary)", "ArithmeticGradient(subtract, primary)", "ArithmeticGradient(multiply, primary)", "ArithmeticGradient(divide, primary)"},
	{"ArithmeticGradient(add, secondary)", "ArithmeticGradient(subtract, secondary)", "ArithmeticGradient(multiply, secondary)", "ArithmeticGradient(divide, secondary)"},
}

// String returns the op's graph JSON name ("add", "subtract", ...).
func (o ArithmeticOp) String() string {
	if o.Valid() {
		return arithNames[o]
	}
	return fmt.Sprintf("ArithmeticOp(%d)", int(o))
}

// Valid reports whether o is a known operation.
func (o ArithmeticOp) Valid() bool { return o >= 0 && o < numArithmeticOps }

// ParseArithmeticOp returns the operation of a graph JSON name, case
// insensitive.
func ParseArithmeticOp(name string) (ArithmeticOp, error) {
	n := strings.ToLower(name)
	for o, s := range arithNames {
		if s == n {
			return ArithmeticOp(o), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown arithmetic op %q (want one of %s)", ErrGeometry, name, strings.Join(arithNames[:], ", "))
}

// ArithmeticDescriptor configures an arithmetic kernel (MPSCNNArithmetic's
// properties). For primary source x and secondary source y,
//
//	z = clamp((PrimaryScale*x) op (SecondaryScale*y) + Bias, Minimum, Maximum)
//
// in float32. NewArithmeticDescriptor gives MPS's defaults: scales 1,
// bias 0, Minimum -Inf and Maximum +Inf (no clamp). The fields are taken
// as they are (the zero value clamps to [0, 0]): start from
// NewArithmeticDescriptor. NaN is refused everywhere, infinities
// everywhere but in Minimum and Maximum, and Minimum must be <= Maximum.
// The clamp lets NaN through.
type ArithmeticDescriptor struct {
	Op                                 ArithmeticOp
	PrimaryScale, SecondaryScale, Bias float32
	Minimum, Maximum                   float32
}

// NewArithmeticDescriptor returns op with MPS's defaults.
func NewArithmeticDescriptor(op ArithmeticOp) ArithmeticDescriptor {
	return ArithmeticDescriptor{Op: op, PrimaryScale: 1, SecondaryScale: 1,
		Minimum: float32(math.Inf(-1)), Maximum: float32(math.Inf(1))}
}

func (d ArithmeticDescriptor) String() string {
	return fmt.Sprintf("%v(primary scale %g, secondary scale %g, bias %g, clamp [%g, %g])", d.Op, d.PrimaryScale, d.SecondaryScale, d.Bias, d.Minimum, d.Maximum)
}

// Validate checks the descriptor: a known op, finite scales and bias,
// bounds that are not NaN with Minimum <= Maximum. label names the kernel
// or node in the error.
func (d ArithmeticDescriptor) Validate(label string) error {
	if !d.Op.Valid() {
		return fmt.Errorf("%w: %s: unknown arithmetic op %d", ErrGeometry, label, int(d.Op))
	}
	if err := finite(label, "primary scale", d.PrimaryScale); err != nil {
		return err
	}
	if err := finite(label, "secondary scale", d.SecondaryScale); err != nil {
		return err
	}
	if err := finite(label, "bias", d.Bias); err != nil {
		return err
	}
	if d.Minimum != d.Minimum || d.Maximum != d.Maximum {
		return fmt.Errorf("%w: %s: clamp bounds [%v, %v] include NaN", ErrGeometry, label, d.Minimum, d.Maximum)
	}
	if d.Minimum > d.Maximum {
		return fmt.Errorf("%w: %s: minimum %v > maximum %v", ErrGeometry, label, d.Minimum, d.Maximum)
	}
	return nil
}

// ArithmeticResultDescriptor returns the shape of an arithmetic result
// for sources of shapes primary and secondary (MPS broadcasting: on each
// axis N, C, H, W the sizes are equal, or one is 1 and the result takes
// the other) with primary's format. Sizes that do not broadcast are an
// ErrShape naming both shapes, different formats an ErrFormat. It needs
// no device.
func ArithmeticResultDescriptor(primary, secondary ImageDescriptor) (ImageDescriptor, error) {
	if err := primary.validate(); err != nil {
		return ImageDescriptor{}, err
	}
	if err := secondary.validate(); err != nil {
		return ImageDescriptor{}, err
	}
	if primary.Format != secondary.Format {
		return ImageDescriptor{}, fmt.Errorf("%w: arithmetic: primary is %v but secondary is %v", ErrFormat, primary.Format, secondary.Format)
	}
	n, c, h, w, ok := arithBroadcast(primary.N, primary.C, primary.H, primary.W, secondary.N, secondary.C, secondary.H, secondary.W)
	if !ok {
		return ImageDescriptor{}, fmt.Errorf("%w: arithmetic: primary %dx%dx%dx%d and secondary %dx%dx%dx%d do not broadcast",
			ErrShape, primary.N, primary.C, primary.H, primary.W, secondary.N, secondary.C, secondary.H, secondary.W)
	}
	return ImageDescriptor{N: n, C: c, H: h, W: w, Format: primary.Format}, nil
}

// ResultDescriptor is ArithmeticResultDescriptor (the result's shape does
// not depend on the op).
func (d ArithmeticDescriptor) ResultDescriptor(primary, secondary ImageDescriptor) (ImageDescriptor, error) {
	return ArithmeticResultDescriptor(primary, secondary)
}

func arithAxis(a, b int) (int, bool) {
	switch {
	case a == b || b == 1:
		return a, true
	case a == 1:
		return b, true
	}
	return 0, false
}

func arithBroadcast(an, ac, ah, aw, bn, bc, bh, bw int) (n, c, h, w int, ok bool) {
	var o1, o2, o3, o4 bool
	n, o1 = arithAxis(an, bn)
	c, o2 = arithAxis(ac, bc)
	h, o3 = arithAxis(ah, bh)
	w, o4 = arithAxis(aw, bw)
	return n, c, h, w, o1 && o2 && o3 && o4
}

// Arithmetic is element-wise arithmetic of two images (MPSCNNAdd,
// MPSCNNSubtract, MPSCNNMultiply, MPSCNNDivide by the descriptor's Op):
// dst = clamp((PrimaryScale*x) op (SecondaryScale*y) + Bias, Minimum,
// Maximum) for primary x and secondary y, NCHW, float32 or float16 (one
// format for all three images; float32 arithmetic, rounded once when
// stored). Either source may have size 1 on any of N, C, H, W where the
// other has more (MPS's strides of 0): it is broadcast along that axis,
// and dst has the larger size on each (ArithmeticResultDescriptor).
// Images may be channel views. The descriptor's fields are the kernel's
// properties, read (and checked) at every Encode.
//
// Same-shape sources stream as one run in quads; a broadcast source is
// read per plane (quads where every plane holds a multiple of 4 values
// and each source is whole or one value per plane) or per value.
type Arithmetic struct {
	ArithmeticDescriptor
	dev   *vk.Device
	local int
	pipes [numArithmeticOps][3][2]*vk.Pipeline // by op, mode, format
}

// NewArithmetic makes an arithmetic kernel; the descriptor is checked.
func NewArithmetic(dev *vk.Device, d ArithmeticDescriptor) (*Arithmetic, error) {
	label := "Arithmetic"
	if d.Op.Valid() {
		label = arithLabels[d.Op]
	}
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, label)
	}
	if err := d.Validate(label); err != nil {
		return nil, err
	}
	return &Arithmetic{ArithmeticDescriptor: d, dev: dev, local: workgroup(dev.Limits())}, nil
}

// Close releases nothing (the kernel holds no memory); it lets a graph
// close every kernel alike.
func (k *Arithmetic) Close() error { return nil }

func (k *Arithmetic) label() string {
	if k.Op.Valid() {
		return arithLabels[k.Op]
	}
	return "Arithmetic"
}

// Encode records dst = primary op secondary (with scales, bias and clamp);
// dst has ArithmeticResultDescriptor's shape and shares no storage with
// the sources.
func (k *Arithmetic) Encode(cb *vk.CommandBuffer, primary, secondary, dst *Image) error {
	label := k.label()
	roles := [3]string{"primary", "secondary", "destination"}
	ims := [3]*Image{primary, secondary, dst}
	if err := checkElementwise(cb, k.dev, label, roles[:], ims[:], 1); err != nil {
		return err
	}
	if err := k.Validate(label); err != nil {
		return err
	}
	if err := arithCheckResult(label, primary, secondary, dst, "destination"); err != nil {
		return err
	}
	var enc arithEncoder
	enc.init(k.dev, k.local, label, &k.pipes[k.Op], spirv.Arithmetic, k.ArithmeticDescriptor, 0)
	return enc.elementwise(cb, primary, secondary, primary, dst)
}

// arithCheckResult reports an ErrShape when out does not have the
// broadcast result's shape of x and y.
func arithCheckResult(label string, x, y, out *Image, role string) error {
	n, c, h, w, ok := arithBroadcast(x.n, x.c, x.h, x.w, y.n, y.c, y.h, y.w)
	if !ok {
		return fmt.Errorf("%w: %s: primary %s and secondary %s do not broadcast", ErrShape, label, x, y)
	}
	if out.n != n || out.c != c || out.h != h || out.w != w {
		return fmt.Errorf("%w: %s: %s %s, want the result's shape %dx%dx%dx%d of primary %s and secondary %s", ErrShape, label, role, out, n, c, h, w, x, y)
	}
	return nil
}
