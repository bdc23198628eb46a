package ops_test

import (
	"context"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// A tuning changes the work shapes, never the results: every kind, forward
// and gradient, gives the same bits under each setting as by default.
func TestTuningKeepsResults(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(20))
	g := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}
	src := padding.Descriptor{N: 2, C: 3, H: 13, W: 21}
	dst := padding.Descriptor{N: 2, C: 3, H: 13, W: 11}
	tunings := []ops.Tuning{
		{StripWidth: 1, GatherCells: 1, Workgroup: 32, LoadWidth: 1, NoVectorStores: true, Argmax: ops.ArgmaxTapByTap},
		{StripWidth: 8, GatherCells: 8, Workgroup: 1024, Argmax: ops.ArgmaxTwoPhase},
		{StripWidth: 2, GatherCells: 3, LoadWidth: 2},
		{Argmax: ops.ArgmaxFastTapByTap},
		{StripWidth: 8, LoadWidth: 1, Argmax: ops.ArgmaxFastTwoPhase},
		// Several planes per invocation, the last invocation's partly past
		// the 6 planes.
		{StripPlanes: 4, GatherPlanes: 4},
		{StripPlanes: 8, GatherPlanes: 8},
		{StripPlanes: 2, GatherPlanes: 2, StripWidth: 1, GatherCells: 1, Argmax: ops.ArgmaxTapByTap},
		// The gathers' loads plane by plane, and groups of 3 of 8 planes
		// (the third group past the invocation's planes), of 2 of 4.
		{GatherAhead: 1},
		{GatherAhead: 3, GatherPlanes: 8},
		{GatherAhead: 2, GatherPlanes: 4, GatherCells: 1},
	}
	for _, kind := range []ops.PoolingKind{ops.KindMax, ops.KindAverage, ops.KindL2Norm} {
		input := gradInput(r, kind, src.N*src.C*src.H*src.W)
		dy := randomData(r, dst.N*dst.C*dst.H*dst.W)
		c := poolCase{kind: kind, geom: g, src: src, dst: dst}
		whole := ops.Region{Width: src.W, Height: src.H, Depth: src.N}
		y0, dx0 := tuneRun(t, dev, c, ops.Tuning{}, false, kind.IsMax(), whole, input, dy)
		for _, tu := range tunings {
			y, dx := tuneRun(t, dev, c, tu, false, kind.IsMax(), whole, input, dy)
			assert.True(t, sameBits(y0, y), "%v forward under %v", kind, tu)
			assert.True(t, sameBits(dx0[0], dx[0]), "%v gradient under %v", kind, tu)
			assert.True(t, sameBits(dx0[1], dx[1]), "%v gradient into dx under %v", kind, tu)
		}
	}
}

// An invalid tuning is refused, names the kernel, and leaves the kernel's
// setting as it was.
func TestSetTuningRefuses(t *testing.T) {
	dev := vktest.Open(t)
	g := ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	f, err := ops.NewPooling(dev, ops.KindMax, g)
	require.NoError(t, err)
	gk, err := ops.NewPoolingGradient(dev, ops.KindAverage, g)
	require.NoError(t, err)
	good := ops.Tuning{Workgroup: 64}
	require.NoError(t, f.SetTuning(good))
	require.NoError(t, gk.SetTuning(good))
	for _, bad := range []ops.Tuning{{StripWidth: 3}, {Workgroup: 100}, {Argmax: 7}} {
		err := f.SetTuning(bad)
		assert.ErrorIs(t, err, ops.ErrTuning)
		assert.Contains(t, err.Error(), "PoolingMax")
		err = gk.SetTuning(bad)
		assert.ErrorIs(t, err, ops.ErrTuning)
		assert.Contains(t, err.Error(), "PoolingAverageGradient")
	}
	assert.Equal(t, good, f.Tuning())
	assert.Equal(t, good, gk.Tuning())
}

// tuneRun runs c's forward (recording the argmax for the max kinds when
// record) and its gradient under tu, on float16 images when half: the
// gradient once by EncodeNew and once by Encode into a dx with the clip
// dxClip; it returns y and the two dx.
func tuneRun(t *testing.T, dev *vk.Device, c poolCase, tu ops.Tuning, half, record bool, dxClip ops.Region, input, dy []float32) (y []float32, dx [2][]float32) {
	t.Helper()
	img := func(d padding.Descriptor, data []float32) *ops.Image {
		if half {
			return newHalfImage(t, dev, d, data)
		}
		return newImage(t, dev, d, data)
	}
	f, k, err := newForward(dev, c.kind, c.geom)
	require.NoError(t, err, c)
	c.configure(f, k)
	require.NoError(t, f.SetTuning(tu))
	assert.Equal(t, tu, f.Tuning())
	f.SetRecordArgmax(record)
	gk, err := ops.NewPoolingGradient(dev, c.kind, c.geom)
	require.NoError(t, err)
	require.NoError(t, gk.SetTuning(tu))
	assert.Equal(t, tu, gk.Tuning())
	srcIm, dyIm := img(c.src, input), img(c.dst, dy)
	dstIm := img(c.dst, filled(c.dst.N*c.dst.C*c.dst.H*c.dst.W, poisonValue))
	dxClipped := img(c.src, filled(c.src.N*c.src.C*c.src.H*c.src.W, poisonValue))
	var dxNew *ops.Image
	require.NoError(t, run(t, dev, func(cb *vk.CommandBuffer) error {
		st, err := f.EncodeWithState(cb, srcIm, dstIm)
		if err != nil {
			return err
		}
		t.Cleanup(func() { st.Close() })
		if dxNew, err = gk.EncodeNew(cb, dyIm, srcIm, st); err != nil {
			return err
		}
		gk.Properties().ClipRect = dxClip
		return gk.Encode(cb, dyIm, srcIm, st, dxClipped)
	}), c)
	defer dxNew.Close()
	y, err = dstIm.Read(context.Background())
	require.NoError(t, err)
	dx[0], err = dxNew.Read(context.Background())
	require.NoError(t, err)
	dx[1], err = dxClipped.Read(context.Background())
	require.NoError(t, err)
	return y, dx
}

// The tunings that store vectors (strips of 8 as quads, gathers' vector
// stores, float16 octet loads) and the fast max pass (over NaNs and
// infinities) keep the results too, float32 and float16,
// on images whose rows let them: strips of 8 in rows of 16 and of 12 (the
// last quad outside), gathers with odd window grids (padding) and a dx
// clip that cuts vectors at both ends. Each tuning meets each case once,
// in float32 or float16 by turns (every tuning runs half the cases in
// each, every case half the tunings in each; all of them in float32 where
// the device has no float16 storage), but the gathers' 16-byte stores,
// which only float16 has, run every case in float16: the suite's cold lavapipe compiles
// a pipeline per case, tuning and precision, and the full cross product
// cost about 4 minutes of CI.
func TestTuningKeepsResultsVectors(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	r := rand.New(rand.NewSource(2121))
	k3 := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	k2 := ops.Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	d2 := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 2}
	k3s1 := ops.Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
	cases := []poolCase{
		// Centres on even columns: the first tap at -1, as PyTorch's pad 1.
		{kind: ops.KindMax, geom: k3, edge: ops.EdgeClamp, src: padding.Descriptor{N: 2, C: 3, H: 9, W: 32}, dst: padding.Descriptor{N: 2, C: 3, H: 5, W: 16}},
		{kind: ops.KindAverage, geom: k3, edge: ops.EdgeClamp, zeroPad: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1},
			src: padding.Descriptor{N: 2, C: 3, H: 9, W: 32}, dst: padding.Descriptor{N: 2, C: 3, H: 5, W: 16}},
		{kind: ops.KindL2Norm, geom: k3, edge: ops.EdgeZero, src: padding.Descriptor{N: 2, C: 3, H: 9, W: 24}, dst: padding.Descriptor{N: 2, C: 3, H: 5, W: 12}},
		{kind: ops.KindDilatedMax, geom: d2, edge: ops.EdgeClamp, src: padding.Descriptor{N: 2, C: 2, H: 9, W: 32}, dst: padding.Descriptor{N: 2, C: 2, H: 5, W: 16}},
		// Windows from column 0, as pad 0.
		{kind: ops.KindMax, geom: k2, edge: ops.EdgeZero, off: ops.Offset{X: 1, Y: 1}, src: padding.Descriptor{N: 2, C: 3, H: 8, W: 24}, dst: padding.Descriptor{N: 2, C: 3, H: 4, W: 12}},
		{kind: ops.KindAverage, geom: k2, edge: ops.EdgeZero, off: ops.Offset{X: 1, Y: 1}, src: padding.Descriptor{N: 2, C: 3, H: 8, W: 32}, dst: padding.Descriptor{N: 2, C: 3, H: 4, W: 16}},
		{kind: ops.KindL2Norm, geom: k2, edge: ops.EdgeClamp, off: ops.Offset{X: 1, Y: 1}, src: padding.Descriptor{N: 2, C: 3, H: 8, W: 32}, dst: padding.Descriptor{N: 2, C: 3, H: 4, W: 16}},
		// Stride 1: gathers of 4 cells.
		{kind: ops.KindMax, geom: k3s1, edge: ops.EdgeClamp, src: padding.Descriptor{N: 1, C: 3, H: 6, W: 16}, dst: padding.Descriptor{N: 1, C: 3, H: 6, W: 16}},
	}
	tunings := []ops.Tuning{
		{StripWidth: 8},
		{StripWidth: 8, LoadWidth: 8, Argmax: ops.ArgmaxFastTwoPhase},
		{NoGatherVectorStores: true},
		{GatherCells: 1},
		{GatherCells: 2},
		{GatherCells: 4, StripWidth: 8, LoadWidth: 8},
		{GatherCells: 3},
		{NoFastMax: true},
		{StripWidth: 2, LoadWidth: 2},
		{StripWidth: 1, LoadWidth: 1},
		{NoFastMax: true, StripWidth: 8, LoadWidth: 8},
		// The defaults before fastmax, gvec and the fast argmax pass.
		{NoFastMax: true, NoGatherVectorStores: true, Argmax: ops.ArgmaxTwoPhase},
		// The last setting of bench/pool_f16_sweep.sh's run of 2026-11-27.
		{StripWidth: 8, LoadWidth: 8, GatherCells: 4},
		// Planes per invocation (4 of 6, 4 and 3 planes: the last partly
		// past them).
		{StripPlanes: 4, GatherPlanes: 4},
		{StripPlanes: 2, GatherPlanes: 2, StripWidth: 8, LoadWidth: 8, GatherCells: 4},
		{StripPlanes: 4, GatherPlanes: 2, NoFastMax: true, NoGatherVectorStores: true},
		// float16 taps of the max forwards' fast pass converted to float32
		// (where the default computes on halves: devices with
		// shaderFloat16).
		{NoHalfArithmetic: true},
		// Several destination rows per invocation of the pass on halves
		// (5 rows: the last invocation partly past them; 2 pixel rows of
		// every clip below), on quads, octets and pairs.
		{StripRows: 2},
		{StripRows: 4, StripWidth: 8, LoadWidth: 8},
		{StripRows: 2, StripWidth: 2, LoadWidth: 2},
		{StripWidth: 2, LoadWidth: 2, StripPlanes: 2},
		// The gathers' loads plane by plane, and ahead over 8 planes.
		{GatherAhead: 1},
		{GatherAhead: 8, GatherPlanes: 8},
		{GatherAhead: 3, GatherPlanes: 4, GatherCells: 4},
		// The gathers' 16-byte stores of 8 halves (float16 on devices with
		// shaderFloat16: every case runs it in float16, none in float32),
		// and pairs only; the 16-byte stores are the float16 default at
		// stride 2 where a strip has 8 pixels (the dilated case).
		{GatherCells: 4, GatherVectorWidth: 8},
		{GatherVectorWidth: 2},
		// Strips of 8 as two quads (the default before 16-byte stores at
		// stride 2).
		{GatherCells: 4, GatherVectorWidth: 4},
	}
	halfOK := dev.Limits().Float16Storage
	if !halfOK {
		t.Log("float16 images not supported: float32 only")
	}
	for hi, half := range []bool{false, true} {
		if half && !halfOK {
			continue
		}
		for ci, c := range cases {
			n := c.src.N * c.src.C * c.src.H * c.src.W
			input := gradInput(r, c.kind, n)
			if c.kind.IsMax() {
				// NaNs, infinities and ties: the fast max pass's fallback.
				input = argmaxInput(r, ci, n)
			}
			dy := randomData(r, c.dst.N*c.dst.C*c.dst.H*c.dst.W)
			if half {
				input, dy = toHalf(input), toHalf(dy)
			}
			clip := ops.Region{X: 3, Y: 1, Width: c.src.W - 6, Height: c.src.H - 2, Depth: c.src.N}
			for _, record := range []bool{false, true} {
				if record && !c.kind.IsMax() {
					continue
				}
				y0, dx0 := tuneRun(t, dev, c, ops.Tuning{}, half, record, clip, input, dy)
				for ti, tu := range tunings {
					if octets := tu.GatherVectorWidth == 8; octets && !half || halfOK && !octets && (ci+ti+hi)%2 == 1 {
						continue // this case runs tu in the other precision
					}
					y, dx := tuneRun(t, dev, c, tu, half, record, clip, input, dy)
					assert.True(t, sameBits(y0, y), "half=%v record=%v %v: forward under %v", half, record, c, tu)
					assert.True(t, sameBits(dx0[0], dx[0]), "half=%v record=%v %v: gradient under %v", half, record, c, tu)
					assert.True(t, sameBits(dx0[1], dx[1]), "half=%v record=%v %v: clipped gradient under %v", half, record, c, tu)
				}
			}
		}
	}
}
