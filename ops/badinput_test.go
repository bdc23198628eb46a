package ops_test

import (
	"context"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestBadInput is package ops's table of bad input (issue 10), one row per
// case, grouped by class: sizes < 1, geometry the device cannot do,
// mismatched shapes and states, closed and foreign objects, aliasing,
// NaN/Inf parameters, channel and clip ranges, nil values. Each gives its
// sentinel and names the kernel or image at fault; nothing panics and
// nothing refused is recorded. (TestForwardBadInput, TestGradientBadInput,
// TestImageBadInput and TestLossBadInput (loss_test.go) check more messages in detail.)
//
// NaN and Inf: where a value is a parameter given on the host (a loss
// weight, Add's coefficients) NaN or Inf is refused, since it would
// silently spoil every result. Values in images are data: the kernels
// follow IEEE arithmetic as MPS and PyTorch do (max pooling propagates
// NaN, a NaN label gives a NaN loss), and checking them would need a pass
// over the data on the GPU.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	other := vktest.Open(t)
	capped := vktest.Open(t, vk.Options{MaxStorageBufferRange: 64 << 10})
	r := rand.New(rand.NewSource(1))
	sd, dd := padding.Descriptor{N: 2, C: 3, H: 8, W: 8}, padding.Descriptor{N: 2, C: 3, H: 4, W: 4}
	src := newImage(t, dev, sd, randomData(r, 2*3*64))
	dst := newImage(t, dev, dd, nil)
	dy := newImage(t, dev, dd, randomData(r, 2*3*16))
	dx := newImage(t, dev, sd, nil)
	view := must(src.ChannelView(1, 2))
	foreign := newImage(t, other, dd, nil)
	closed := newImage(t, dev, dd, nil)
	require.NoError(t, closed.Close())
	wrong := newImage(t, dev, padding.Descriptor{N: 2, C: 3, H: 4, W: 5}, nil)
	// A plane over the range runs in bands of rows; a row over it cannot.
	bigRow := newImage(t, capped, padding.Descriptor{N: 1, C: 1, H: 2, W: 17000}, nil)
	bigDst := newImage(t, capped, padding.Descriptor{N: 1, C: 1, H: 1, W: 8500}, nil)
	one := newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil)

	maxK := func() *ops.PoolingMax { return must(ops.NewPoolingMax(dev, 2, 2, 2, 2)) }
	gradK := must(ops.NewPoolingMaxGradient(dev, 2, 2, 2, 2))
	state := func(d *vk.Device, kind ops.PoolingKind, s, o *ops.Image) *ops.PoolingGradientState {
		f := must(ops.NewPooling(d, kind, ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}))
		var st *ops.PoolingGradientState
		require.NoError(t, run(t, d, func(cb *vk.CommandBuffer) error {
			var err error
			st, err = f.EncodeWithState(cb, s, o)
			return err
		}))
		t.Cleanup(func() { st.Close() })
		return st
	}
	stMax := state(dev, ops.KindMax, src, dst)
	stAvg := state(dev, ops.KindAverage, src, dst)
	stOther := state(other, ops.KindMax, newImage(t, other, sd, nil), foreign)
	stClosed := state(dev, ops.KindMax, src, dst)
	require.NoError(t, stClosed.Close())
	loss := must(ops.NewLoss(dev, ops.LossDescriptor{Reduction: ops.ReductionSum}))
	t.Cleanup(func() { loss.Close() })
	add := must(ops.NewAdd(dev))

	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	cbCapped, err := capped.NewCommandBuffer()
	require.NoError(t, err)
	defer cbCapped.Close()
	nan, inf := float32(math.NaN()), float32(math.Inf(1))

	tests := []struct {
		class, name string
		call        func() error
		want        error
		msg         string
	}{
		{"size < 1", "image of 0 channels", func() error { _, err := ops.NewImage(dev, ops.ImageDescriptor{N: 1, C: 0, H: 2, W: 2}); return err }, ops.ErrInvalidImage, "channel count C = 0 < 1"},
		{"size < 1", "image of negative height", func() error { _, err := ops.NewImage(dev, ops.ImageDescriptor{N: 1, C: 1, H: -2, W: 2}); return err }, ops.ErrInvalidImage, "height H = -2 < 1"},
		{"size < 1", "image of no batch", func() error { _, err := ops.NewImage(dev, ops.ImageDescriptor{N: 0, C: 1, H: 1, W: 1}); return err }, ops.ErrInvalidImage, "batch size N = 0"},
		{"size < 1", "image size overflowing", func() error {
			_, err := ops.NewImage(dev, ops.ImageDescriptor{N: 1 << 40, C: 1 << 20, H: 1 << 20, W: 1})
			return err
		}, ops.ErrInvalidImage, "too large"},
		{"size < 1", "kernel width 0", func() error { _, err := ops.NewPoolingMax(dev, 0, 2, 1, 1); return err }, ops.ErrGeometry, "kernel width 0 < 1"},
		{"size < 1", "stride 0", func() error { _, err := ops.NewPoolingAverage(dev, 2, 2, 0, 1); return err }, ops.ErrGeometry, "stride x 0 < 1"},
		{"size < 1", "dilation 0", func() error { _, err := ops.NewDilatedPoolingMax(dev, 2, 2, 0, 1, 1, 1); return err }, ops.ErrGeometry, "dilation x 0 < 1"},
		{"size < 1", "empty channel view", func() error { _, err := src.ChannelView(0, 0); return err }, ops.ErrChannelRange, "channel view"},
		{"size < 1", "kernel over 32768", func() error { _, err := ops.NewPoolingL2Norm(dev, 1<<16, 1, 1, 1); return err }, ops.ErrGeometry, "65536 > 32768"},
		{"size > limit", "window over the largest extent", func() error {
			s := ops.MaxWindowExtent(dev.Limits()) + 1
			_, err := ops.NewPoolingAverage(dev, s, s, 1, 1)
			return err
		}, ops.ErrGeometry, "32769 > 32768"},
		{"device limit", "row over the storage range", func() error {
			return must(ops.NewPoolingMax(capped, 2, 2, 2, 2)).Encode(cbCapped, bigRow, bigDst)
		}, ops.ErrDeviceLimit, "exceed the device's max storage buffer range"},
		{"device limit", "destination over device memory", func() error {
			k := maxK()
			k.Padding = padding.Explicit(padding.Pads{Bottom: 1 << 20, Right: 1 << 20}, false, false)
			_, err := k.EncodeNew(cb, src)
			return err
		}, vk.ErrOutOfDeviceMemory, "destination"},
		{"shape", "write of the wrong length", func() error { return dst.Write(ctx, make([]float32, 5)) }, ops.ErrShape, "writing 5 values"},
		{"shape", "read into the wrong length", func() error { return dst.ReadInto(ctx, make([]float32, 5)) }, ops.ErrShape, "into 5 values"},
		{"shape", "destination with too few channels", func() error {
			return maxK().Encode(cb, src, newImage(t, dev, padding.Descriptor{N: 2, C: 2, H: 4, W: 4}, nil))
		}, ops.ErrChannelRange, "do not fit"},
		{"shape", "gradient of the wrong size", func() error { return gradK.Encode(cb, wrong, src, stMax, dx) }, ops.ErrShape, "forward destination"},
		{"shape", "destination gradient of the wrong size", func() error { return gradK.Encode(cb, dy, src, stMax, wrong) }, ops.ErrShape, "destination gradient"},
		{"shape", "copy between shapes", func() error { return ops.Copy(cb, dst, wrong) }, ops.ErrShape, "differ in shape"},
		{"shape", "add of two shapes", func() error { return add.Encode(cb, dst, wrong, dy) }, ops.ErrShape, "differ in shape"},
		{"shape", "labels of another shape", func() error { return loss.Encode(cb, dst, wrong, one) }, ops.ErrShape, ""},
		{"shape", "loss into the wrong shape", func() error { return loss.Encode(cb, dst, dy, wrong) }, ops.ErrShape, ""},
		{"shape", "padding leaves nothing", func() error {
			k := maxK()
			k.Padding = padding.WithMethod(padding.Valid)
			_, err := k.EncodeNew(cb, one)
			return err
		}, padding.ErrEmptyDestination, "PoolingMax"},
		{"state", "nil state", func() error { return gradK.Encode(cb, dy, src, nil, dx) }, ops.ErrState, "nil gradient state"},
		{"state", "state of another kind", func() error { return gradK.Encode(cb, dy, src, stAvg, dx) }, ops.ErrState, "PoolingAverage forward kernel"},
		{"state", "argmax of an average state", func() error { _, err := stAvg.ReadArgmax(ctx); return err }, ops.ErrState, ""},
		{"state", "state of another geometry", func() error {
			return must(ops.NewPoolingMaxGradient(dev, 3, 2, 2, 2)).Encode(cb, dy, src, stMax, dx)
		}, ops.ErrState, "kernel 2x2"},
		{"closed", "closed destination", func() error { return maxK().Encode(cb, src, closed) }, ops.ErrClosed, "destination"},
		{"closed", "closed state", func() error { return gradK.Encode(cb, dy, src, stClosed, dx) }, ops.ErrClosed, "gradient state"},
		{"closed", "write to a closed image", func() error { return closed.Write(ctx, make([]float32, closed.Len())) }, ops.ErrClosed, ""},
		{"closed", "view of a closed image", func() error { _, err := closed.ChannelView(0, 1); return err }, ops.ErrClosed, ""},
		{"closed", "fill a closed image", func() error { return ops.Fill(cb, closed, 1) }, ops.ErrClosed, ""},
		{"foreign", "image of another device", func() error { return maxK().Encode(cb, src, foreign) }, ops.ErrDevice, "another device"},
		{"foreign", "state of another device", func() error { return gradK.Encode(cb, dy, src, stOther, dx) }, ops.ErrDevice, "another device"},
		{"foreign", "add across devices", func() error { return add.Encode(cb, dst, foreign, dy) }, ops.ErrDevice, "another device"},
		{"foreign", "copy across devices", func() error { return ops.Copy(cb, dst, foreign) }, ops.ErrDevice, "another device"},
		{"aliasing", "source is destination", func() error { return maxK().Encode(cb, src, src) }, ops.ErrAlias, "share storage"},
		{"aliasing", "destination is a view of the source", func() error { return maxK().Encode(cb, src, view) }, ops.ErrAlias, "share storage"},
		{"aliasing", "gradient into the source image", func() error { return gradK.Encode(cb, dy, src, stMax, src) }, ops.ErrAlias, "share storage"},
		{"aliasing", "copy onto itself", func() error { return ops.Copy(cb, dst, dst) }, ops.ErrAlias, "share storage"},
		{"aliasing", "add into a source", func() error { return add.Encode(cb, dst, dy, dst) }, ops.ErrAlias, "shares storage"},
		{"aliasing", "loss into the prediction", func() error { return loss.Encode(cb, dst, dy, dst) }, ops.ErrAlias, ""},
		{"NaN/Inf", "NaN loss weight", func() error { _, err := ops.NewLoss(dev, ops.LossDescriptor{Weight: nan}); return err }, ops.ErrGeometry, "weight NaN is not finite"},
		{"NaN/Inf", "infinite loss weight", func() error { _, err := ops.NewLoss(dev, ops.LossDescriptor{Weight: -inf}); return err }, ops.ErrGeometry, "weight -Inf is not finite"},
		{"NaN/Inf", "NaN alpha", func() error { a := must(ops.NewAdd(dev)); a.Alpha = nan; return a.Encode(cb, dst, dy, wrong) }, ops.ErrShape, ""}, // shapes first
		{"NaN/Inf", "NaN alpha, right shapes", func() error {
			a := must(ops.NewAdd(dev))
			a.Alpha = nan
			return a.Encode(cb, dst, dy, newImage(t, dev, dd, nil))
		}, ops.ErrGeometry, "alpha NaN is not finite"},
		{"NaN/Inf", "infinite beta", func() error {
			a := must(ops.NewAdd(dev))
			a.Beta = inf
			return a.Encode(cb, dst, dy, newImage(t, dev, dd, nil))
		}, ops.ErrGeometry, "beta +Inf is not finite"},
		{"range", "source channel offset", func() error { k := maxK(); k.SourceFeatureChannelOffset = 3; return k.Encode(cb, src, dst) }, ops.ErrChannelRange, "source channel offset 3"},
		{"range", "negative max count", func() error { k := maxK(); k.SourceFeatureChannelMaxCount = -1; return k.Encode(cb, src, dst) }, ops.ErrChannelRange, "max count"},
		{"range", "channel view past the end", func() error { _, err := src.ChannelView(2, 2); return err }, ops.ErrChannelRange, ""},
		{"range", "clip outside", func() error { k := maxK(); k.ClipRect = ops.Region{X: 4}; return k.Encode(cb, src, dst) }, ops.ErrGeometry, "clip rectangle"},
		{"range", "negative clip", func() error { k := maxK(); k.ClipRect = ops.Region{Height: -1}; return k.Encode(cb, src, dst) }, ops.ErrGeometry, "negative"},
		{"range", "batch beyond the source", func() error { k := maxK(); k.Offset.Z = 1; return k.Encode(cb, src, dst) }, ops.ErrShape, "batch images"},
		{"range", "batch offset overflowing", func() error { k := maxK(); k.Offset.Z = math.MaxInt; return k.Encode(cb, src, dst) }, ops.ErrShape, "batch images"},
		{"range", "window offset beyond 32 bits", func() error { k := maxK(); k.Offset.X = 1 << 40; return k.Encode(cb, src, dst) }, ops.ErrGeometry, "offset"},
		{"range", "negative window offset beyond 32 bits", func() error { k := maxK(); k.Offset.Y = -1 << 40; return k.Encode(cb, src, dst) }, ops.ErrGeometry, "offset"},
		{"range", "unknown edge mode", func() error { k := maxK(); k.EdgeMode = 9; return k.Encode(cb, src, dst) }, ops.ErrGeometry, "edge mode"},
		{"range", "negative zero pad", func() error {
			a := must(ops.NewPoolingAverage(dev, 2, 2, 2, 2))
			a.ZeroPad.Left = -1
			return a.Encode(cb, src, dst)
		}, ops.ErrGeometry, "zero pad"},
		{"range", "unknown loss type", func() error { _, err := ops.NewLoss(dev, ops.LossDescriptor{Type: 17}); return err }, ops.ErrGeometry, "unknown loss type 17"},
		{"range", "unknown reduction", func() error { _, err := ops.NewLoss(dev, ops.LossDescriptor{Reduction: -1}); return err }, ops.ErrGeometry, "unknown reduction"},
		{"nil", "nil device", func() error { _, err := ops.NewPoolingMax(nil, 2, 2, 1, 1); return err }, ops.ErrDevice, "nil device"},
		{"nil", "nil source", func() error { return maxK().Encode(cb, nil, dst) }, ops.ErrInvalidImage, "source"},
		{"nil", "nil command buffer", func() error { return maxK().Encode(nil, src, dst) }, ops.ErrInvalidImage, "nil command buffer"},
		{"nil", "nil buffer for an image", func() error {
			_, err := ops.NewImageOn(nil, 0, ops.ImageDescriptor{N: 1, C: 1, H: 1, W: 1})
			return err
		}, ops.ErrInvalidImage, "nil buffer"},
	}
	classes := map[string]int{}
	for _, tc := range tests {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
		classes[tc.class]++
	}
	assert.Equal(t, 0, cb.Commands(), "nothing refused was recorded")
	assert.Equal(t, 0, cbCapped.Commands())
	t.Logf("ops: %d bad inputs in %d classes: %v", len(tests), len(classes), classes)
}

// must returns v, failing the test (by panicking) on an error.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestNoPanicOnZeroValues: nil and zero arguments to every exported
// constructor and encoder of package ops, and zero-value kernels, images
// and states (not made by their constructors) where real ones are
// expected, give errors and never a panic. Methods called on a nil
// pointer stay programmer errors, as in the standard library (Close is
// safe on nil).
func TestNoPanicOnZeroValues(t *testing.T) {
	ctx := context.Background()
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(2))
	sd, dd := padding.Descriptor{N: 1, C: 2, H: 4, W: 4}, padding.Descriptor{N: 1, C: 2, H: 2, W: 2}
	src := newImage(t, dev, sd, randomData(r, 32))
	dst := newImage(t, dev, dd, nil)
	dy := newImage(t, dev, dd, randomData(r, 8))
	cb, err := dev.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	st := func() *ops.PoolingGradientState {
		var st *ops.PoolingGradientState
		require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
			var err error
			st, err = must(ops.NewPoolingMax(dev, 2, 2, 2, 2)).EncodeWithState(cb, src, dst)
			return err
		}))
		t.Cleanup(func() { st.Close() })
		return st
	}()
	zi := func() *ops.Image { return &ops.Image{} }
	zs := &ops.PoolingGradientState{}
	g0 := ops.Geometry{}
	g2 := ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}

	calls := map[string]func() error{
		"NewImage(nil, zero)":      func() error { _, err := ops.NewImage(nil, ops.ImageDescriptor{}); return err },
		"NewImage(dev, zero)":      func() error { _, err := ops.NewImage(dev, ops.ImageDescriptor{}); return err },
		"NewImageOn(nil, 0, zero)": func() error { _, err := ops.NewImageOn(nil, 0, ops.ImageDescriptor{}); return err },
		"NewLoss(nil, zero)":       func() error { _, err := ops.NewLoss(nil, ops.LossDescriptor{}); return err },
		"NewAdd(nil)":              func() error { _, err := ops.NewAdd(nil); return err },
		"Copy(nil, nil, nil)":      func() error { return ops.Copy(nil, nil, nil) },
		"Copy(cb, nil, nil)":       func() error { return ops.Copy(cb, nil, nil) },
		"Copy(cb, zero, zero)":     func() error { return ops.Copy(cb, zi(), zi()) },
		"Copy(cb, src, zero)":      func() error { return ops.Copy(cb, src, zi()) },
		"Fill(nil, nil)":           func() error { return ops.Fill(nil, nil, 0) },
		"Fill(cb, zero)":           func() error { return ops.Fill(cb, zi(), 0) },
		"zero Image.Write":         func() error { return zi().Write(ctx, nil) },
		"zero Image.Read":          func() error { _, err := zi().Read(ctx); return err },
		"zero Image.ChannelView":   func() error { _, err := zi().ChannelView(0, 1); return err },
		"zero state ReadArgmax":    func() error { _, err := zs.ReadArgmax(ctx); return err },
		"zero Add.Encode":          func() error { return (&ops.Add{}).Encode(cb, dst, dy, newImage(t, dev, dd, nil)) },
		"Add.Encode(nil...)":       func() error { return must(ops.NewAdd(dev)).Encode(nil, nil, nil, nil) },
		"Add.Encode(zero images)":  func() error { return must(ops.NewAdd(dev)).Encode(cb, zi(), zi(), zi()) },
		"zero Loss.Encode": func() error {
			return (&ops.Loss{}).Encode(cb, dst, dy, newImage(t, dev, padding.Descriptor{N: 1, C: 1, H: 1, W: 1}, nil))
		},
		"zero Loss.EncodeGradient":  func() error { return (&ops.Loss{}).EncodeGradient(cb, dst, dy, newImage(t, dev, dd, nil)) },
		"Loss.Encode(nil...)":       func() error { return must(ops.NewLoss(dev, ops.LossDescriptor{})).Encode(nil, nil, nil, nil) },
		"Loss.Encode(zero images)":  func() error { return must(ops.NewLoss(dev, ops.LossDescriptor{})).Encode(cb, zi(), zi(), zi()) },
		"Loss.EncodeGradient(zero)": func() error { return must(ops.NewLoss(dev, ops.LossDescriptor{})).EncodeGradient(cb, zi(), zi(), zi()) },
	}
	for _, kind := range append(kinds, ops.PoolingKind(99)) {
		name := kind.String()
		calls["NewPooling(nil) "+name] = func() error { _, err := ops.NewPooling(nil, kind, g2); return err }
		calls["NewPooling(zero geometry) "+name] = func() error { _, err := ops.NewPooling(dev, kind, g0); return err }
		calls["NewPoolingGradient(nil) "+name] = func() error { _, err := ops.NewPoolingGradient(nil, kind, g2); return err }
		calls["NewPoolingGradient(zero geometry) "+name] = func() error { _, err := ops.NewPoolingGradient(dev, kind, g0); return err }
	}
	zeroFwd := map[string]ops.Pooling{"PoolingMax": &ops.PoolingMax{}, "PoolingAverage": &ops.PoolingAverage{},
		"PoolingL2Norm": &ops.PoolingL2Norm{}, "DilatedPoolingMax": &ops.DilatedPoolingMax{}}
	zeroGrad := map[string]ops.PoolingGradient{"PoolingMaxGradient": &ops.PoolingMaxGradient{}, "PoolingAverageGradient": &ops.PoolingAverageGradient{},
		"PoolingL2NormGradient": &ops.PoolingL2NormGradient{}, "DilatedPoolingMaxGradient": &ops.DilatedPoolingMaxGradient{}}
	for _, kind := range kinds {
		f := must(ops.NewPooling(dev, kind, g2))
		zeroFwd["made "+kind.String()] = f
		zeroGrad["made "+kind.String()+"Gradient"] = must(ops.NewPoolingGradient(dev, kind, g2))
	}
	for name, f := range zeroFwd {
		calls[name+".Encode(nil, nil, nil)"] = func() error { return f.Encode(nil, nil, nil) }
		calls[name+".Encode(cb, zero, zero)"] = func() error { return f.Encode(cb, zi(), zi()) }
		calls[name+".Encode(cb, src, dst)"] = func() error {
			if name[:4] == "made" {
				return ops.ErrGeometry // made kernels encode this fine
			}
			return f.Encode(cb, src, dst)
		}
		calls[name+".EncodeNew(cb, nil)"] = func() error { _, err := f.EncodeNew(cb, nil); return err }
		calls[name+".EncodeNew(cb, zero)"] = func() error { _, err := f.EncodeNew(cb, zi()); return err }
		calls[name+".EncodeWithState(cb, zero, zero)"] = func() error { _, err := f.EncodeWithState(cb, zi(), zi()); return err }
		calls[name+".EncodeNewWithState(nil, zero)"] = func() error { _, _, err := f.EncodeNewWithState(nil, zi()); return err }
	}
	for name, g := range zeroGrad {
		calls[name+".Encode(nil...)"] = func() error { return g.Encode(nil, nil, nil, nil, nil) }
		calls[name+".Encode(cb, nil...)"] = func() error { return g.Encode(cb, nil, nil, nil, nil) }
		calls[name+".Encode(zero images, zero state)"] = func() error { return g.Encode(cb, zi(), zi(), zs, zi()) }
		calls[name+".Encode(images, zero state)"] = func() error { return g.Encode(cb, dy, src, zs, newImage(t, dev, sd, nil)) }
		calls[name+".Encode(zero images, state)"] = func() error { return g.Encode(cb, zi(), zi(), st, zi()) }
		calls[name+".EncodeNew(zero, zero, zero)"] = func() error { _, err := g.EncodeNew(cb, zi(), zi(), zs); return err }
		calls[name+".EncodeNew(nil, nil, state)"] = func() error { _, err := g.EncodeNew(cb, nil, nil, st); return err }
	}
	for name, call := range calls {
		var err error
		if !assert.NotPanics(t, func() { err = call() }, name) {
			continue
		}
		assert.Error(t, err, name)
	}
	require.NoError(t, dev.WaitIdle(ctx))
	assert.Equal(t, 0, cb.Commands(), "nothing recorded")
	t.Logf("ops: %d nil or zero-value calls, no panic", len(calls))
}
