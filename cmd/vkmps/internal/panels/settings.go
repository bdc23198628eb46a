package panels

import (
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
)

// Ops are the kernels the viewer switches between, in key order (1..4).
var Ops = []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm, ops.KindDilatedMax}

// Paddings are the padding policies the p key cycles through.
var Paddings = []string{"same", "same-zero", "valid", "full", "tf-same", "tf-valid", "pytorch"}

// Limits of the numeric settings.
const (
	MaxKernel   = 15
	MaxStride   = 15
	MaxDilation = 8
)

// Settings is what the viewer shows: a pooling kernel and its padding.
type Settings struct {
	Op       int // index into Ops
	Kernel   int // square window, 1..MaxKernel
	Stride   int // 1..MaxStride
	Dilation int // 1..MaxDilation, dilated max only
	Padding  int // index into Paddings
}

// Defaults are the demo's: max pooling, 3x3, stride 2, "same" padding with
// clamped edges; dilation 2 for dilated max.
func Defaults() Settings { return Settings{Kernel: 3, Stride: 2, Dilation: 2} }

// KeyHelp lists the keys, for the usage text and the window title.
const KeyHelp = "1-4 or o/O op, k/K kernel, s/S stride, d/D dilation, p/P padding, r reset, q quit"

// KnownKey reports whether Key understands key.
func KnownKey(key string) bool {
	switch key {
	case "q", "Q", "escape", "1", "2", "3", "4", "o", "tab", "O", "k", "up", "K", "down",
		"s", "right", "S", "left", "d", "D", "p", "P", "r":
		return true
	}
	return false
}

// Key applies a key: a character as typed ("k", "K" for shift-k, "1") or
// a name ("escape", "tab"). It reports whether the settings changed and
// whether the key asks to quit. Values stop at their limits.
func (s *Settings) Key(key string) (changed, quit bool) {
	old := *s
	step := func(v *int, d, lo, hi int) { *v = min(max(*v+d, lo), hi) }
	switch key {
	case "q", "Q", "escape":
		return false, true
	case "1", "2", "3", "4":
		s.Op = int(key[0] - '1')
	case "o", "tab":
		s.Op = (s.Op + 1) % len(Ops)
	case "O":
		s.Op = (s.Op + len(Ops) - 1) % len(Ops)
	case "k", "up":
		step(&s.Kernel, 1, 1, MaxKernel)
	case "K", "down":
		step(&s.Kernel, -1, 1, MaxKernel)
	case "s", "right":
		step(&s.Stride, 1, 1, MaxStride)
	case "S", "left":
		step(&s.Stride, -1, 1, MaxStride)
	case "d":
		step(&s.Dilation, 1, 1, MaxDilation)
	case "D":
		step(&s.Dilation, -1, 1, MaxDilation)
	case "p":
		s.Padding = (s.Padding + 1) % len(Paddings)
	case "P":
		s.Padding = (s.Padding + len(Paddings) - 1) % len(Paddings)
	case "r":
		*s = Defaults()
	}
	return *s != old, false
}

// Kind returns the kernel family.
func (s Settings) Kind() ops.PoolingKind { return Ops[s.Op] }

// Geometry returns the kernel's geometry (dilation 1 but for dilated max).
func (s Settings) Geometry() ops.Geometry {
	d := 1
	if s.Kind() == ops.KindDilatedMax {
		d = s.Dilation
	}
	return ops.Geometry{KernelWidth: s.Kernel, KernelHeight: s.Kernel, StrideX: s.Stride, StrideY: s.Stride, DilationX: d, DilationY: d}
}

// Policy returns the padding policy and the edge mode it goes with, as
// `vkmps pool --padding` sets them: the MPS methods clamp ("same-zero":
// zero edges), the TensorFlow presets and PyTorch's explicit pads
// ((k-1)/2*dilation on each side) shrink the window to the image.
func (s Settings) Policy() (padding.Policy, ops.EdgeMode) {
	avg := s.Kind() == ops.KindAverage
	switch Paddings[s.Padding] {
	case "same-zero":
		return padding.WithMethod(padding.Same), ops.EdgeZero
	case "valid":
		return padding.WithMethod(padding.Valid), ops.EdgeClamp
	case "full":
		return padding.WithMethod(padding.Full), ops.EdgeClamp
	case "tf-same":
		if avg {
			return padding.TensorFlowAveragePooling(), ops.EdgeClamp
		}
		return padding.TensorFlowSame(), ops.EdgeClamp
	case "tf-valid":
		if avg {
			return padding.TensorFlowAveragePoolingValidOnly(), ops.EdgeClamp
		}
		return padding.TensorFlowValid(), ops.EdgeClamp
	case "pytorch":
		g := s.Geometry()
		p := (s.Kernel - 1) / 2 * g.DilationX
		return padding.Explicit(padding.Pads{Top: p, Left: p, Bottom: p, Right: p}, false, false), ops.EdgeClamp
	}
	return padding.WithMethod(padding.Same), ops.EdgeClamp
}

// String describes the settings for the window title, e.g. "PoolingMax
// 3x3 stride 2, padding same".
func (s Settings) String() string {
	g := s.Geometry()
	str := fmt.Sprintf("%s %dx%d stride %d", s.Kind(), g.KernelHeight, g.KernelWidth, g.StrideX)
	if g.DilationX != 1 {
		str += fmt.Sprintf(" dilation %d", g.DilationX)
	}
	return str + ", padding " + Paddings[s.Padding]
}
