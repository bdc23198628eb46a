package padding_test

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/padding"
)

// forwardSource is a gradient state recording its forward source.
type forwardSource padding.Descriptor

func (s forwardSource) SourceDescriptor() padding.Descriptor { return padding.Descriptor(s) }

// refusing is a policy that fails, or returns a result it was given.
type refusing struct {
	err error
	r   padding.Result
}

func (p refusing) Method() padding.Method { return padding.Custom }
func (p refusing) Label() string          { return "refusing" }
func (p refusing) Destination(padding.Request) (padding.Result, error) {
	return p.r, p.err
}

// TestBadInput is package padding's table of bad input (issue 10), by
// class: sizes < 1, reserved or unknown method bits, negative pads,
// results a policy may not give, sizes that leave nothing, integer
// overflow, states that do not match, nil values. Each gives exactly one
// sentinel and a message naming the value; none panics. (TestResolveErrors
// checks more full messages; FuzzAxis checks the arithmetic.)
func TestBadInput(t *testing.T) {
	k := padding.Kernel{Name: "PoolingMax", KernelW: 3, KernelH: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	with := func(f func(*padding.Kernel)) padding.Kernel { c := k; f(&c); return c }
	src := []padding.Descriptor{{N: 1, C: 2, H: 9, W: 9}}
	same := padding.WithMethod(padding.Same)
	resolve := func(p padding.Policy, src []padding.Descriptor, st []padding.State, k padding.Kernel) func() error {
		return func() error {
			r, err := padding.Resolve(p, src, st, k)
			if err != nil && r != (padding.Result{}) {
				return errors.New("a result with the error")
			}
			return err
		}
	}
	axis := func(f func() (padding.Axis, error)) func() error {
		return func() error { _, err := f(); return err }
	}
	errUser := errors.New("user says no")
	tests := []struct {
		class, name string
		call        func() error
		want        error
		msg         string
	}{
		{"size < 1", "kernel width 0", resolve(same, src, nil, with(func(k *padding.Kernel) { k.KernelW = 0 })), padding.ErrInvalidGeometry, "kernel width 0 < 1"},
		{"size < 1", "negative kernel height", resolve(same, src, nil, with(func(k *padding.Kernel) { k.KernelH = -1 })), padding.ErrInvalidGeometry, "kernel height -1 < 1"},
		{"size < 1", "stride 0", resolve(same, src, nil, with(func(k *padding.Kernel) { k.StrideY = 0 })), padding.ErrInvalidGeometry, "stride y 0 < 1"},
		{"size < 1", "dilation 0", resolve(same, src, nil, with(func(k *padding.Kernel) { k.DilationX = 0 })), padding.ErrInvalidGeometry, "dilation x 0 < 1"},
		{"size < 1", "no source", resolve(same, nil, nil, k), padding.ErrInvalidGeometry, "no source image"},
		{"size < 1", "source of 0 channels", resolve(same, []padding.Descriptor{{N: 1, C: 0, H: 4, W: 4}}, nil, k), padding.ErrInvalidGeometry, "channels 0 < 1"},
		{"size < 1", "source of negative width", resolve(same, []padding.Descriptor{{N: 1, C: 1, H: 4, W: -4}}, nil, k), padding.ErrInvalidGeometry, "width -4 < 1"},
		{"size < 1", "axis source 0", axis(func() (padding.Axis, error) { return padding.Same.Axis(padding.X, 0, 3, 1, 1) }), padding.ErrInvalidGeometry, "source width 0 < 1"},
		{"size < 1", "DestSize window 0", axis(func() (padding.Axis, error) {
			_, err := padding.DestSize(5, 1, 0, padding.StyleSame)
			return padding.Axis{}, err
		}), padding.ErrInvalidGeometry, "window 0 < 1"},
		{"size < 1", "EffectiveKernel dilation 0", axis(func() (padding.Axis, error) { _, err := padding.EffectiveKernel(3, 0); return padding.Axis{}, err }), padding.ErrInvalidGeometry, "dilation 0 < 1"},
		{"method", "reserved size pattern", resolve(padding.WithMethod(0x30), src, nil, k), padding.ErrInvalidMethod, "reserved size pattern"},
		{"method", "reserved align pattern", resolve(padding.WithMethod(padding.Same|padding.AlignMask), src, nil, k), padding.ErrInvalidMethod, ""},
		{"method", "unknown bit", axis(func() (padding.Axis, error) { return padding.Method(1<<20).Axis(padding.X, 4, 1, 1, 1) }), padding.ErrInvalidMethod, ""},
		{"method", "bad DestSize style", axis(func() (padding.Axis, error) { _, err := padding.DestSize(5, 1, 3, 7); return padding.Axis{}, err }), padding.ErrInvalidMethod, ""},
		{"negative pad", "explicit pad", resolve(padding.Explicit(padding.Pads{Top: -1}, false, false), src, nil, k), padding.ErrInvalidGeometry, "pad top -1 < 0"},
		{"negative pad", "caffe pad", resolve(padding.Caffe(0, -2), src, nil, k), padding.ErrInvalidGeometry, "pad left -2 < 0"},
		{"negative pad", "explicit axis pad", axis(func() (padding.Axis, error) { return padding.ExplicitAxis(padding.Y, 5, 3, 1, 1, 0, -1, false) }), padding.ErrInvalidGeometry, "pad bottom -1 < 0"},
		{"bad result", "policy error passed on", resolve(refusing{err: errUser}, src, nil, k), errUser, "user says no"},
		{"bad result", "empty destination from a policy", resolve(refusing{r: padding.Result{Dest: padding.Descriptor{N: 1, C: 1, H: 0, W: 1}}}, src, nil, k), padding.ErrEmptyDestination, "height 0 < 1"},
		{"bad result", "edge mode from a policy", resolve(refusing{r: padding.Result{Dest: padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, EdgeMode: 5}}, src, nil, k), padding.ErrInvalidGeometry, "edge mode"},
		{"bad result", "negative zero pad from a policy", resolve(refusing{r: padding.Result{Dest: padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, ZeroPad: padding.Pads{Right: -3}}}, src, nil, k), padding.ErrInvalidGeometry, "zero pad right -3 < 0"},
		{"empty", "valid window over the image", resolve(padding.WithMethod(padding.Valid), []padding.Descriptor{{N: 1, C: 1, H: 2, W: 9}}, nil, k), padding.ErrEmptyDestination, "destination height 0 < 1"},
		{"empty", "explicit without pads", resolve(padding.Explicit(padding.Pads{}, false, false), []padding.Descriptor{{N: 1, C: 1, H: 9, W: 1}}, nil, k), padding.ErrEmptyDestination, "destination width"},
		{"empty", "TensorFlow valid", resolve(padding.TensorFlowValid(), []padding.Descriptor{{N: 1, C: 1, H: 1, W: 1}}, nil, k), padding.ErrEmptyDestination, ""},
		{"overflow", "dilated window", resolve(same, src, nil, with(func(k *padding.Kernel) { k.DilationX = math.MaxInt/2 + 1 })), padding.ErrOverflow, "overflows int"},
		{"overflow", "full padding of a huge image", resolve(padding.WithMethod(padding.Full), []padding.Descriptor{{N: 1, C: 1, H: 4, W: math.MaxInt}}, nil, k), padding.ErrOverflow, ""},
		{"overflow", "explicit pad", resolve(padding.Explicit(padding.Pads{Right: math.MaxInt}, false, false), src, nil, k), padding.ErrOverflow, ""},
		{"overflow", "reverse of a huge gradient", resolve(same, []padding.Descriptor{{N: 1, C: 1, H: 4, W: math.MaxInt / 2}}, nil, with(func(k *padding.Kernel) { k.Reverse = true; k.StrideX = 3 })), padding.ErrOverflow, ""},
		{"state", "gradient of the wrong size for its state", resolve(padding.Inverse(same), []padding.Descriptor{{N: 1, C: 2, H: 9, W: 9}}, []padding.State{forwardSource{N: 1, C: 2, H: 9, W: 9}}, k), padding.ErrInvalidGeometry, ""},
		{"state", "state of an empty source", resolve(padding.Inverse(same), []padding.Descriptor{{N: 1, C: 2, H: 5, W: 5}}, []padding.State{forwardSource{N: 1, C: 2, H: 0, W: 9}}, k), padding.ErrInvalidGeometry, "SizeState source"},
		{"nil", "nil policy", resolve(nil, src, nil, k), padding.ErrInvalidMethod, "nil policy"},
		{"nil", "inverse of nil", resolve(padding.Inverse(nil), src, nil, k), padding.ErrInvalidMethod, "nil policy"},
		{"nil", "nil state ignored, empty gradient", resolve(padding.Inverse(same), []padding.Descriptor{{N: 1, C: 1, H: 0, W: 1}}, []padding.State{nil}, k), padding.ErrInvalidGeometry, "height 0 < 1"},
	}
	classes := map[string]int{}
	for _, tc := range tests {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
			n := 0
			for _, s := range []error{padding.ErrInvalidGeometry, padding.ErrInvalidMethod, padding.ErrEmptyDestination, padding.ErrOverflow} {
				if errors.Is(err, s) {
					n++
				}
			}
			if tc.want != errUser {
				assert.Equal(t, 1, n, "exactly one sentinel")
			}
		})
		classes[tc.class]++
	}
	t.Logf("padding: %d bad inputs in %d classes: %v", len(tests), len(classes), classes)
}
