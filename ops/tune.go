package ops

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrTuning: a Tuning value (or its text form) that is out of range or
// cannot be read.
var ErrTuning = errors.New("ops: invalid tuning")

// Argmax passes a Tuning can force.
const (
	ArgmaxTapByTap = 1 // tap by tap, keeping the maximum and its tap with selects
	ArgmaxTwoPhase = 2 // each window's maximum first, then the first tap equal to it
	// The fast passes first assume no NaN in the strip and no window whose
	// maximum could be an outside tap, with one compare and one or two
	// selects per tap, and run the full pass of the same kind only for strips
	// where that does not hold.
	ArgmaxFastTapByTap = 3 // the fast pass tap by tap
	ArgmaxFastTwoPhase = 4 // the fast pass two-phase
	argmaxPassCount    = 4
)

// Tuning overrides the work shapes a kernel picks, for measuring
// alternatives on a device without rebuilding vkmps. It changes speed
// only: results are the same bits under every valid setting. The zero
// value is the default, where the kernel chooses; a zero field leaves that
// choice to the kernel.
//
// The pooling kernels and their gradients take one with SetTuning (it
// holds for the kernel it is given to, nothing else); the commands read
// it from $VKMPS_TUNE with ParseTuning, whose keys are given in
// parentheses below.
type Tuning struct {
	// StripWidth (ox): destination pixels per invocation of the direct
	// forward passes, 1, 2, 4 or 8 (the default: 4, fewer where a wide
	// stride would make a strip's source span too long, as with a forced
	// width). The argmax passes use 4 unless this is 8. Strips of 8 are
	// stored as two quads where the destination is aligned to 4.
	StripWidth int
	// GatherCells (gathercx): cells (stride-sized blocks of dx pixels) per
	// invocation of the gradients' gather, 1..8 (the default: 4 at stride
	// 1; at stride 2, where dx rows take vector stores, 2, or 4 for
	// float16 images under windows that put a pixel in 3 along x, such as
	// dilated 3x3 ones; else 1).
	GatherCells int
	// StripPlanes (pz): planes (batch image and channel) per invocation of
	// the direct forward passes, 1, 2, 4 or 8: an invocation computes the
	// same strip on each, its columns and bounds worked out once (the
	// default: 4 for the argmax passes over float16 images, 2 over
	// float32, 1 for the other passes).
	StripPlanes int
	// StripRows (oy): destination rows per invocation of the direct
	// forward passes, 1, 2 or 4, the strip's columns worked out once; in
	// the max forwards' fast pass on halves (NoHalfArithmetic) the source
	// rows the windows of neighbouring rows share are reduced once (the
	// default: 4 there over rows stored as vectors or of at least 12
	// strips, and in the
	// float16 average forward of windows that overlap along y, fewer for
	// small dispatches; 1 elsewhere).
	StripRows int
	// GatherPlanes (gatherpz): planes per invocation of the gradients'
	// gathers, 1, 2, 4 or 8, their windows worked out once (the default: 4
	// over float16 images, 2 over float32).
	GatherPlanes int
	// GatherAhead (gatherahead): planes whose dy loads the average and
	// L2-norm gradients' gathers issue together, before adding any of
	// them, 1..8 (at most GatherPlanes). By default as many of an
	// invocation's planes as keep 32 values ahead, at least one; 1 is the
	// form before, plane by plane, where a plane's stores hold the next
	// plane's loads behind them. On an H200 (2026-11-29,
	// bench/results/h200-2026-11-29-s11, run 2) 4 planes instead of 1 took
	// the float16 average gradient at 112x112 (3x3, stride 2) from 26.1
	// to 24.8 us and the L2-norm gradient at 56x56 from 133.1 to 126.9.
	// The max gathers go plane by plane.
	GatherAhead int
	// Workgroup (wg): invocations per workgroup the direct passes and the
	// gathers aim at, a power of two in 32..1024 (default 256; the
	// device's limits still bound it).
	Workgroup int
	// LoadWidth (vw): the widest vector load of the direct passes, in
	// elements: 1, 2, 4 or 8. 8 applies to float16 images only and is used
	// only when set here; the default is 4.
	LoadWidth int
	// NoVectorStores (vstore=0): the direct passes store strips value by
	// value instead of as one vector.
	NoVectorStores bool
	// NoGatherVectorStores (gvec=0): the gradients' gathers store dx
	// values one by one. By default they store dx rows as vectors of 4
	// (or 2) values where dx (and the L2-norm gradient's forward source)
	// rows, planes and bases allow: each invocation takes CX*SX pixels of
	// a row from a multiple of 4, where the window grid's cells may start
	// anywhere (with padding, at an odd column), so it reads the windows
	// of the cells they span, one more column of windows where that is
	// not the first pixel of a cell; at stride 2 such gathers take 2 cells
	// (unless GatherCells says otherwise). On an H100 (2026-11-27,
	// bench/pool_f16_sweep.sh) that took the stride-2 gradients of the
	// bench shapes 10-40% faster in float32 and float16 (max 3x3 at 112:
	// 130 to 112 us float32; average 2x2 at 56, float16: 105 to 61).
	NoGatherVectorStores bool
	// GatherVectorWidth (gvw): the widest vector, in elements, the
	// gradients' gathers store dx rows in: 2, 4 or 8. 8, 16 bytes at a
	// time, applies to float16 images on devices with shaderFloat16
	// (vk.Limits.Float16Arithmetic) and needs strips of 8 pixels
	// (GatherCells 4 at stride 2). The default is 8 at stride 2 (where
	// float16 gathers take 4 cells: windows that put a pixel in 3 along
	// x, as dilated 3x3 ones, or where GatherCells asks for 4), else 4.
	// On an H100 (2026-12-07, bench/results/h100-2026-12-07-s24) one
	// 16-byte store instead of two quads took the float16 dilated max
	// gradient at 32x64x112x112 (3x3, dilation 2, stride 2) from 80.2 to
	// 74.8 us, and from recorded argmax 48.7 to 43.9. gvw=4 is the form
	// before.
	GatherVectorWidth int
	// NoFastMax (fastmax=0): the direct max and dilated-max forward
	// passes (values only) test each tap for NaN. By default they first
	// issue the loads of all window rows at once and take one max per
	// tap, testing the strip for NaN once (the sum of its values), and
	// run the full pass only for strips that may hold a NaN (the same
	// results). On an H100 (the run above) float16 max 3x3 at 112 went
	// from 48 to 34 us, float32 from 50 to 47.
	NoFastMax bool
	// NoHalfArithmetic (half=0): the max forwards' fast pass and the fast
	// two-phase argmax pass over float16 images convert every tap to
	// float32. By default, on devices with shaderFloat16
	// (vk.Limits.Float16Arithmetic), they take the maxima on the halves
	// themselves: first over the window rows, two neighbouring columns per
	// instruction, then over each window's columns (a max of halves is
	// exact, so the results are the same bits; the argmax pass keeps each
	// column's first row holding its maximum too). On an H200 the float16
	// max forward at 112x112 (3x3, stride 2) took 28.8 µs instead of 32.3,
	// and 26.4 over 4 rows an invocation (StripRows); the forward
	// recording the argmax 30.5 instead of 44.2.
	NoHalfArithmetic bool
	// Argmax (argmax): the direct argmax pass, ArgmaxTapByTap (1),
	// ArgmaxTwoPhase (2), ArgmaxFastTapByTap (3) or ArgmaxFastTwoPhase (4);
	// the default is ArgmaxFastTwoPhase.
	Argmax int
}

// Validate returns an error wrapping ErrTuning that names the first field
// out of range, or nil.
func (t Tuning) Validate() error {
	pow2 := func(n int) bool { return n&(n-1) == 0 }
	switch {
	case t.StripWidth != 0 && (t.StripWidth < 1 || t.StripWidth > 8 || !pow2(t.StripWidth)):
		return fmt.Errorf("%w: strip width (ox) %d: want 1, 2, 4 or 8", ErrTuning, t.StripWidth)
	case t.GatherCells != 0 && (t.GatherCells < 1 || t.GatherCells > 8):
		return fmt.Errorf("%w: gather cells (gathercx) %d: want 1..8", ErrTuning, t.GatherCells)
	case t.StripPlanes != 0 && (t.StripPlanes < 1 || t.StripPlanes > 8 || !pow2(t.StripPlanes)):
		return fmt.Errorf("%w: strip planes (pz) %d: want 1, 2, 4 or 8", ErrTuning, t.StripPlanes)
	case t.StripRows != 0 && (t.StripRows < 1 || t.StripRows > 4 || !pow2(t.StripRows)):
		return fmt.Errorf("%w: strip rows (oy) %d: want 1, 2 or 4", ErrTuning, t.StripRows)
	case t.GatherPlanes != 0 && (t.GatherPlanes < 1 || t.GatherPlanes > 8 || !pow2(t.GatherPlanes)):
		return fmt.Errorf("%w: gather planes (gatherpz) %d: want 1, 2, 4 or 8", ErrTuning, t.GatherPlanes)
	case t.GatherAhead != 0 && (t.GatherAhead < 1 || t.GatherAhead > 8):
		return fmt.Errorf("%w: gather planes ahead (gatherahead) %d: want 1..8", ErrTuning, t.GatherAhead)
	case t.Workgroup != 0 && (t.Workgroup < 32 || t.Workgroup > 1024 || !pow2(t.Workgroup)):
		return fmt.Errorf("%w: workgroup (wg) %d: want a power of two in 32..1024", ErrTuning, t.Workgroup)
	case t.LoadWidth != 0 && (t.LoadWidth < 1 || t.LoadWidth > 8 || !pow2(t.LoadWidth)):
		return fmt.Errorf("%w: load width (vw) %d: want 1, 2, 4 or 8", ErrTuning, t.LoadWidth)
	case t.GatherVectorWidth != 0 && t.GatherVectorWidth != 2 && t.GatherVectorWidth != 4 && t.GatherVectorWidth != 8:
		return fmt.Errorf("%w: gather vector width (gvw) %d: want 2, 4 or 8", ErrTuning, t.GatherVectorWidth)
	case t.Argmax < 0 || t.Argmax > argmaxPassCount:
		return fmt.Errorf("%w: argmax pass %d: want 1 (tap by tap), 2 (two-phase), 3 (fast, tap by tap) or 4 (fast, two-phase)", ErrTuning, t.Argmax)
	}
	return nil
}

// IsDefault reports whether t is the zero value: the kernels choose.
func (t Tuning) IsDefault() bool { return t == Tuning{} }

// String returns the text form ParseTuning reads, keys in a fixed order
// ("ox=2,wg=128"); "" for the default.
func (t Tuning) String() string {
	var parts []string
	add := func(key string, v int) {
		if v != 0 {
			parts = append(parts, key+"="+strconv.Itoa(v))
		}
	}
	add("ox", t.StripWidth)
	add("gathercx", t.GatherCells)
	add("pz", t.StripPlanes)
	add("oy", t.StripRows)
	add("gatherpz", t.GatherPlanes)
	add("gatherahead", t.GatherAhead)
	add("wg", t.Workgroup)
	add("vw", t.LoadWidth)
	if t.NoVectorStores {
		parts = append(parts, "vstore=0")
	}
	add("argmax", t.Argmax)
	if t.NoGatherVectorStores {
		parts = append(parts, "gvec=0")
	}
	add("gvw", t.GatherVectorWidth)
	if t.NoFastMax {
		parts = append(parts, "fastmax=0")
	}
	if t.NoHalfArithmetic {
		parts = append(parts, "half=0")
	}
	return strings.Join(parts, ",")
}

// ParseTuning reads a Tuning from comma-separated key=value pairs with
// integer values, as $VKMPS_TUNE holds them: ox, gathercx, pz, oy, gatherpz, gatherahead, wg, vw, vstore
// (0 or 1), argmax, gvec (0 or 1), gvw, fastmax (0 or 1) and half (0 or 1) (see Tuning's fields). Spaces around pairs are
// ignored; "" is the default. An unknown key, a repeated key, a pair
// without "=", or a value that is not an integer or is out of range is an
// error wrapping ErrTuning that names it.
func ParseTuning(s string) (Tuning, error) {
	var t Tuning
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return Tuning{}, fmt.Errorf("%w: %q is not key=value", ErrTuning, kv)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return Tuning{}, fmt.Errorf("%w: %s=%q: not an integer", ErrTuning, k, v)
		}
		if seen[k] {
			return Tuning{}, fmt.Errorf("%w: %s given twice", ErrTuning, k)
		}
		seen[k] = true
		switch k {
		case "ox":
			t.StripWidth = n
		case "gathercx":
			t.GatherCells = n
		case "pz":
			t.StripPlanes = n
		case "oy":
			t.StripRows = n
		case "gatherpz":
			t.GatherPlanes = n
		case "gatherahead":
			t.GatherAhead = n
		case "wg":
			t.Workgroup = n
		case "vw":
			t.LoadWidth = n
		case "argmax":
			t.Argmax = n
		case "vstore":
			if n != 0 && n != 1 {
				return Tuning{}, fmt.Errorf("%w: vstore=%d: want 0 or 1", ErrTuning, n)
			}
			t.NoVectorStores = n == 0
		case "gvec":
			if n != 0 && n != 1 {
				return Tuning{}, fmt.Errorf("%w: gvec=%d: want 0 or 1", ErrTuning, n)
			}
			t.NoGatherVectorStores = n == 0
		case "gvw":
			t.GatherVectorWidth = n
		case "fastmax":
			if n != 0 && n != 1 {
				return Tuning{}, fmt.Errorf("%w: fastmax=%d: want 0 or 1", ErrTuning, n)
			}
			t.NoFastMax = n == 0
		case "half":
			if n != 0 && n != 1 {
				return Tuning{}, fmt.Errorf("%w: half=%d: want 0 or 1", ErrTuning, n)
			}
			t.NoHalfArithmetic = n == 0
		default:
			return Tuning{}, fmt.Errorf("%w: unknown key %q (known: ox, gathercx, pz, oy, gatherpz, gatherahead, wg, vw, vstore, argmax, gvec, gvw, fastmax, half)", ErrTuning, k)
		}
		if n == 0 && k != "vstore" && k != "gvec" && k != "fastmax" && k != "half" {
			return Tuning{}, fmt.Errorf("%w: %s=0: leave the key out for the default", ErrTuning, k)
		}
	}
	if err := t.Validate(); err != nil {
		return Tuning{}, err
	}
	return t, nil
}

// workgroupTarget returns the invocations a direct or gather workgroup
// aims at under t.
func (t Tuning) workgroupTarget() int {
	if t.Workgroup > 0 {
		return t.Workgroup
	}
	return workgroupTarget
}

// SetTuning sets the work-shape overrides of the kernel (see Tuning); an
// invalid one is refused with an error wrapping ErrTuning and the kernel
// keeps its previous setting. Pipelines made under the previous setting
// are no longer used.
func (p *pooling) SetTuning(t Tuning) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%s: %w", p.Label, err)
	}
	p.passes.setTuning(t)
	return nil
}

// Tuning returns the kernel's work-shape overrides (the zero value unless
// SetTuning set others).
func (p *pooling) Tuning() Tuning { return p.passes.tune }

// SetTuning sets the work-shape overrides of the gradient kernel (see
// Tuning), as for the forward kernels.
func (p *poolingGradient) SetTuning(t Tuning) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%s: %w", p.Label, err)
	}
	if t != p.passes.tune {
		p.passes.setTuning(t)
		clear(p.pipes)
	}
	return nil
}

// Tuning returns the gradient kernel's work-shape overrides.
func (p *poolingGradient) Tuning() Tuning { return p.passes.tune }

// setTuning sets t and forgets the pipelines chosen under the previous
// setting (the device keeps them cached).
func (ps *passes) setTuning(t Tuning) {
	if t != ps.tune {
		ps.tune = t
		clear(ps.pipes)
	}
}
