package ops

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

func TestParseTuning(t *testing.T) {
	for s, want := range map[string]Tuning{
		"":         {},
		" , ":      {},
		"vstore=1": {},
		"ox=2, gathercx=3,wg=128,vw=8,vstore=0,argmax=1": {StripWidth: 2, GatherCells: 3, Workgroup: 128, LoadWidth: 8, NoVectorStores: true, Argmax: ArgmaxTapByTap},
		" wg = 1024 ,argmax=2,":                          {Workgroup: 1024, Argmax: ArgmaxTwoPhase},
		"argmax=3":                                       {Argmax: ArgmaxFastTapByTap},
		"argmax=4":                                       {Argmax: ArgmaxFastTwoPhase},
		"gvec=1,gathercx=2":                              {GatherCells: 2},
		"pz=4,gatherpz=2":                                {StripPlanes: 4, GatherPlanes: 2},
		"oy=2,half=1":                                    {StripRows: 2},
		"half=0":                                         {NoHalfArithmetic: true},
		"fastmax=1,argmax=4":                             {Argmax: ArgmaxFastTwoPhase},
		"gvec=0,fastmax=0":                               {NoGatherVectorStores: true, NoFastMax: true},
		"gatherahead=2,gatherpz=4":                       {GatherAhead: 2, GatherPlanes: 4},
		"gvw=8,gathercx=4":                               {GatherVectorWidth: 8, GatherCells: 4},
	} {
		got, err := ParseTuning(s)
		require.NoError(t, err, "%q", s)
		assert.Equal(t, want, got, "%q", s)
		back, err := ParseTuning(got.String())
		require.NoError(t, err, "%q", got.String())
		assert.Equal(t, got, back, "String reads back: %q", got.String())
		assert.Equal(t, want == Tuning{}, got.IsDefault())
	}
	assert.Equal(t, "ox=2,gathercx=3,wg=128,vw=8,vstore=0,argmax=1",
		Tuning{StripWidth: 2, GatherCells: 3, Workgroup: 128, LoadWidth: 8, NoVectorStores: true, Argmax: 1}.String())
	assert.Equal(t, "", Tuning{}.String())
}

// Every value that the old parser silently dropped is now an error naming
// it (issue 20).
func TestParseTuningRefuses(t *testing.T) {
	for s, msg := range map[string]string{
		"ox=3":                    "strip width (ox) 3",
		"ox=16":                   "strip width (ox) 16",
		"ox=3x":                   `ox="3x": not an integer`,
		"ox=0":                    "ox=0: leave the key out",
		"gathercx=9":              "gather cells (gathercx) 9",
		"pz=3":                    "strip planes (pz) 3",
		"oy=3":                    "strip rows (oy) 3",
		"oy=8":                    "strip rows (oy) 8",
		"half=2":                  "half=2: want 0 or 1",
		"gatherpz=16":             "gather planes (gatherpz) 16",
		"gathercx=-1":             "gather cells (gathercx) -1",
		"wg=100":                  "workgroup (wg) 100",
		"wg=2048":                 "workgroup (wg) 2048",
		"wg=16":                   "workgroup (wg) 16",
		"vw=3":                    "load width (vw) 3",
		"argmax=5":                "argmax pass 5",
		"vstore=2":                "vstore=2: want 0 or 1",
		"gvec=2":                  "gvec=2: want 0 or 1",
		"gatherahead=9":           "gather planes ahead (gatherahead) 9",
		"gatherahead=0":           "gatherahead=0: leave the key out",
		"gvw=16":                  "gather vector width (gvw) 16",
		"gvw=1":                   "gather vector width (gvw) 1",
		"gvw=0":                   "gvw=0: leave the key out",
		"fastmax=2":               "fastmax=2: want 0 or 1",
		"bogus=1":                 `unknown key "bogus"`,
		"bnchunk=4096":            `unknown key "bnchunk"`,
		"novalue":                 `"novalue" is not key=value`,
		"=2":                      `unknown key ""`,
		"ox=2,ox=4":               "ox given twice",
		"ox=4;wg=64":              `ox="4;wg=64": not an integer`,
		"ox=2 wg=64":              `ox="2 wg=64": not an integer`,
		"ox=99999999999999999999": "not an integer",
	} {
		_, err := ParseTuning(s)
		require.Error(t, err, "%q", s)
		assert.True(t, errors.Is(err, ErrTuning), "%q: %v", s, err)
		assert.Contains(t, err.Error(), msg, "%q", s)
	}
	for _, bad := range []Tuning{{StripWidth: 5}, {GatherCells: 9}, {Workgroup: 48}, {LoadWidth: -1}, {Argmax: 5}, {Argmax: -1}} {
		assert.ErrorIs(t, bad.Validate(), ErrTuning, "%+v", bad)
	}
}

// The choices the pooling passes make follow the tuning they are given,
// and only it: two kernels with different tunings coexist.
func TestTuningSteersThePasses(t *testing.T) {
	g := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	assert.Equal(t, 4, stripWidth(g, passValues, Tuning{}))
	assert.Equal(t, 2, stripWidth(g, passValues, Tuning{StripWidth: 2}))
	assert.Equal(t, 4, stripWidth(g, passArgmax, Tuning{StripWidth: 2}), "argmax passes take 4 or 8")
	assert.Equal(t, 8, stripWidth(g, passArgmax, Tuning{StripWidth: 8}))
	wide := Geometry{KernelWidth: 9, KernelHeight: 1, StrideX: 12, StrideY: 1, DilationX: 1, DilationY: 1}
	assert.Equal(t, 2, stripWidth(wide, passValues, Tuning{}))
	assert.Equal(t, 2, stripWidth(wide, passValues, Tuning{StripWidth: 8}), "a width that does not fit is not forced")
	assert.Equal(t, 1, stripWidth(wide, passValues, Tuning{StripWidth: 1}))
	assert.True(t, argmaxTwoPhase(Tuning{}), "two-phase by default")
	assert.False(t, argmaxTwoPhase(Tuning{Argmax: ArgmaxTapByTap}))
	assert.True(t, argmaxTwoPhase(Tuning{Argmax: ArgmaxTwoPhase}))
	assert.True(t, argmaxFast(Tuning{}), "the fast pass by default")
	assert.False(t, argmaxFast(Tuning{Argmax: ArgmaxTwoPhase}))
	assert.False(t, argmaxFast(Tuning{Argmax: ArgmaxTapByTap}))
	assert.True(t, argmaxFast(Tuning{Argmax: ArgmaxFastTapByTap}))
	assert.False(t, argmaxTwoPhase(Tuning{Argmax: ArgmaxFastTapByTap}), "fast tap by tap falls back to tap by tap")
	assert.True(t, argmaxFast(Tuning{Argmax: ArgmaxFastTwoPhase}))
	assert.True(t, argmaxTwoPhase(Tuning{Argmax: ArgmaxFastTwoPhase}))
	// Planes per invocation: by type, fewer where the dispatch would be
	// small (ResNet-18's global pool gradient: 16384 planes of one strip),
	// as many as a tuning asks whatever the size.
	big := 1 << 22
	assert.Equal(t, 4, gatherPlanes(Tuning{}, Float16, big))
	assert.Equal(t, 2, gatherPlanes(Tuning{}, Float32, big))
	assert.Equal(t, 1, gatherPlanes(Tuning{}, Float16, 16384))
	assert.Equal(t, 2, gatherPlanes(Tuning{}, Float16, 1<<18))
	assert.Equal(t, 4, gatherPlanes(Tuning{GatherPlanes: 4}, Float32, 10))
	assert.Equal(t, 1, stripPlanes(Tuning{}, passValues, Float16, big), "value passes keep one plane")
	assert.Equal(t, 4, stripPlanes(Tuning{}, passArgmaxOnly, Float16, big))
	assert.Equal(t, 2, stripPlanes(Tuning{}, passArgmax, Float32, big))
	assert.Equal(t, 1, stripPlanes(Tuning{}, passArgmax, Float32, 1000))
	assert.Equal(t, 2, stripPlanes(Tuning{StripPlanes: 2}, passValues, Float32, 1000))
	// Rows per invocation of the max forwards' pass on halves: 4 where
	// its strips are stored as vectors, fewer where the dispatch would be
	// small, a tuning's whatever the size.
	maxRows := &passes{kind: KindMax, geom: g}
	assert.Equal(t, 4, maxRows.stripRows(passValues, Float16, true, true, big))
	assert.Equal(t, 2, maxRows.stripRows(passValues, Float16, true, true, 1<<18))
	assert.Equal(t, 1, maxRows.stripRows(passValues, Float16, true, true, 1<<17+1))
	assert.Equal(t, 1, maxRows.stripRows(passValues, Float16, true, false, big), "strips stored value by value: one row")
	assert.Equal(t, 1, maxRows.stripRows(passValues, Float16, false, true, big), "other passes: one row")
	assert.Equal(t, 1, maxRows.stripRows(passArgmax, Float16, true, true, big), "the argmax passes on halves: one row")
	assert.Equal(t, 1, maxRows.stripRows(passArgmaxOnly, Float16, true, true, big))
	avgRows := &passes{kind: KindAverage, geom: g}
	assert.Equal(t, 4, avgRows.stripRows(passValues, Float16, false, false, big), "float16 average, 3x3 windows at stride 2")
	assert.Equal(t, 1, avgRows.stripRows(passValues, Float32, false, false, big))
	avgRows.tune = Tuning{StripRows: 2}
	assert.Equal(t, 2, avgRows.stripRows(passValues, Float32, false, false, big))
	maxRows.tune = Tuning{StripRows: 4}
	assert.Equal(t, 4, maxRows.stripRows(passValues, Float16, true, true, 10))
	assert.Equal(t, 4, gatherCells(Geometry{StrideX: 1}, Tuning{}))
	assert.Equal(t, 3, gatherCells(Geometry{StrideX: 1}, Tuning{GatherCells: 3}))
	assert.Equal(t, 4, vectorStore(Tuning{}, 4, 8, 0, 0, 8))
	assert.Equal(t, 0, vectorStore(Tuning{NoVectorStores: true}, 4, 8, 0, 0, 8))
	assert.Equal(t, 4, vectorStore(Tuning{}, 8, 28, 0, 0, 28), "strips of 8 as two quads")
	assert.Equal(t, 0, vectorStore(Tuning{}, 8, 27, 0, 0, 27))
	assert.Equal(t, 2, vectorStore(Tuning{}, 2, 6, 0, 0, 6))
	assert.Equal(t, 0, vectorStore(Tuning{}, 1, 8, 0, 0, 8))
	lim := vk.Limits{MinStorageBufferOffsetAlignment: 16}
	k3 := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	dx := &Image{w: 112, format: Float32}
	gv, gpar := gatherVector(k3, Tuning{NoGatherVectorStores: true}, 1, false, lim, 0, -1, dx)
	assert.Equal(t, [2]int{0, 0}, [2]int{gv, gpar}, "off under gvec=0")
	gv, gpar = gatherVector(k3, Tuning{}, 1, false, lim, 0, -1, dx)
	assert.Equal(t, [2]int{2, 1}, [2]int{gv, gpar}, "one cell of 2 at stride 2: pairs, from the cells' second pixel")
	gv, gpar = gatherVector(k3, Tuning{}, 2, false, lim, 0, -1, dx)
	assert.Equal(t, [2]int{4, 1}, [2]int{gv, gpar})
	gv, _ = gatherVector(k3, Tuning{}, 2, true, lim, 0, -1, dx)
	assert.Equal(t, 0, gv, "never for the loop builds")
	gv, _ = gatherVector(k3, Tuning{}, 2, false, lim, 0, -1, &Image{w: 110, format: Float32})
	assert.Equal(t, 2, gv, "rows of a multiple of 2")
	gv, _ = gatherVector(k3, Tuning{}, 2, false, vk.Limits{MinStorageBufferOffsetAlignment: 4}, 0, -1, dx)
	assert.Equal(t, 0, gv, "ranges that may start off a pair")
	// 16-byte stores of halves: at stride 2 or when asked for, over
	// float16, with shaderFloat16, on strips of 8 pixels.
	hx := &Image{w: 112, format: Float16}
	lim16 := vk.Limits{MinStorageBufferOffsetAlignment: 16, Float16Arithmetic: true}
	oct := Tuning{GatherCells: 4, GatherVectorWidth: 8}
	gv, gpar = gatherVector(k3, oct, 4, false, lim16, 0, -1, hx)
	assert.Equal(t, [2]int{8, 1}, [2]int{gv, gpar})
	gv, _ = gatherVector(k3, Tuning{GatherCells: 4}, 4, false, lim16, 0, -1, hx)
	assert.Equal(t, 8, gv, "8 by default at stride 2")
	gv, _ = gatherVector(k3, Tuning{GatherCells: 4, GatherVectorWidth: 4}, 4, false, lim16, 0, -1, hx)
	assert.Equal(t, 4, gv, "at most gvw")
	k4 := Geometry{KernelWidth: 4, KernelHeight: 4, StrideX: 4, StrideY: 4, DilationX: 1, DilationY: 1}
	gv, _ = gatherVector(k4, Tuning{}, 2, false, lim16, 0, -1, hx)
	assert.Equal(t, 4, gv, "8 only when set at other strides")
	gv, _ = gatherVector(k4, Tuning{GatherVectorWidth: 8}, 2, false, lim16, 0, -1, hx)
	assert.Equal(t, 8, gv)
	gv, _ = gatherVector(k3, oct, 4, false, lim16, 0, -1, dx)
	assert.Equal(t, 4, gv, "8 over float16 only")
	gv, _ = gatherVector(k3, oct, 4, false, lim, 0, -1, hx)
	assert.Equal(t, 4, gv, "8 needs shaderFloat16")
	gv, _ = gatherVector(k3, oct, 2, false, lim16, 0, -1, hx)
	assert.Equal(t, 4, gv, "strips of 4 pixels")
	gv, _ = gatherVector(k3, oct, 4, false, lim16, 0, -1, &Image{w: 116, format: Float16})
	assert.Equal(t, 4, gv, "rows of a multiple of 4, not 8")
	gv, _ = gatherVector(k3, oct, 4, false, vk.Limits{MinStorageBufferOffsetAlignment: 8, Float16Arithmetic: true}, 0, -1, hx)
	assert.Equal(t, 4, gv, "ranges that may start off 16 bytes")
	gv, _ = gatherVector(k3, Tuning{GatherVectorWidth: 2}, 2, false, lim, 0, -1, dx)
	assert.Equal(t, 2, gv, "at most gvw")
	cx, more := gatherVectorCells(k3, Tuning{}, Float32)
	assert.Equal(t, 2, cx, "two cells at stride 2 where vectors are stored")
	assert.True(t, more)
	cx, _ = gatherVectorCells(k3, Tuning{}, Float16)
	assert.Equal(t, 2, cx, "3x3 windows at stride 2: two windows per pixel along x")
	d2 := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 2}
	cx, _ = gatherVectorCells(d2, Tuning{}, Float16)
	assert.Equal(t, 4, cx, "dilated 3x3 windows at stride 2, float16: three windows per pixel")
	cx, _ = gatherVectorCells(d2, Tuning{}, Float32)
	assert.Equal(t, 2, cx)
	cx, more = gatherVectorCells(k3, Tuning{GatherCells: 3}, Float16)
	assert.Equal(t, 3, cx)
	assert.False(t, more)
	cx, more = gatherVectorCells(k3, Tuning{NoGatherVectorStores: true}, Float16)
	assert.Equal(t, 1, cx)
	assert.False(t, more)
	cx, more = gatherVectorCells(Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}, Tuning{}, Float16)
	assert.Equal(t, 4, cx)
	assert.False(t, more)
	src := &Image{w: 16, format: Float16}
	assert.Equal(t, 4, loadWidth(g, 4, src, Tuning{}))
	assert.Equal(t, 8, loadWidth(g, 4, src, Tuning{LoadWidth: 8}))
	assert.Equal(t, 2, loadWidth(g, 4, src, Tuning{LoadWidth: 2}))
	assert.Equal(t, 256, Tuning{}.workgroupTarget())
	assert.Equal(t, 64, Tuning{Workgroup: 64}.workgroupTarget())
}

// The direct passes' rows per invocation by kind, pass and format: 4 for
// the max forwards' pass on halves (devices with shaderFloat16) and the
// float16 average forward of windows that overlap along y, 1 elsewhere,
// on a dispatch as large as vkmps bench's 112x112 shape.
func TestStripRowsByPass(t *testing.T) {
	dev := vktest.Open(t)
	k3 := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	d2 := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 2}
	target := passTarget{dstW: 56, w: 56, h: 56, z: 2048, firstSrcCol: -1}
	half := 1
	if dev.Limits().Float16Arithmetic {
		half = 4
	}
	for _, c := range []struct {
		kind PoolingKind
		g    Geometry
		pass passKind
		f    Format
		want int
	}{
		{KindAverage, k3, passValues, Float16, 4},
		{KindAverage, Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}, passValues, Float16, 1},
		{KindAverage, k3, passValues, Float32, 1},
		{KindMax, k3, passValues, Float16, half},
		{KindMax, k3, passValues, Float32, 1},
		{KindMax, k3, passArgmax, Float16, 1},
		{KindMax, k3, passArgmax, Float32, 1},
		{KindDilatedMax, d2, passValues, Float16, half},
		{KindL2Norm, k3, passValues, Float16, 1},
	} {
		ps := newPasses(dev, c.kind, c.g)
		k := ps.key(c.pass, EdgeClamp, &Image{w: 112, format: c.f}, target)
		assert.Equal(t, c.want, int(k.oy), "%v %v pass %d", c.kind, c.f, c.pass)
		ps.setTuning(Tuning{StripRows: 2})
		k = ps.key(c.pass, EdgeClamp, &Image{w: 112, format: c.f}, target)
		assert.Equal(t, 2, int(k.oy), "%v %v pass %d under oy=2", c.kind, c.f, c.pass)
	}
	// A destination 27 wide (2x2 windows at stride 2 over 56, dilation
	// 2) takes its strips value by value: the max passes on halves then
	// keep one row; a tuning still sets them.
	narrow := passTarget{dstW: 27, w: 27, h: 27, z: 16384}
	d22 := Geometry{KernelWidth: 2, KernelHeight: 2, StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 2}
	for _, c := range []struct {
		kind PoolingKind
		g    Geometry
	}{{KindDilatedMax, d22}, {KindMax, k3}} {
		ps := newPasses(dev, c.kind, c.g)
		k := ps.key(passValues, EdgeClamp, &Image{w: 56, format: Float16}, narrow)
		assert.Equal(t, 0, int(k.vstore), "%v", c.kind)
		assert.Equal(t, 1, int(k.oy), "%v, 27 wide", c.kind)
		ps.setTuning(Tuning{StripRows: 4})
		k = ps.key(passValues, EdgeClamp, &Image{w: 56, format: Float16}, narrow)
		assert.Equal(t, 4, int(k.oy), "%v, 27 wide, oy=4", c.kind)
	}
	// 55 wide (dilated 3x3 at stride 2 over 112, pad 1): value by value
	// too, but 14 strips a row, wide enough for 4 rows on halves; 45 wide
	// (12 strips) too, 44 wide (11 strips, stored as quads) for its stores.
	for _, w := range []int{55, 45, 44} {
		ps := newPasses(dev, KindDilatedMax, d2)
		k := ps.key(passValues, EdgeClamp, &Image{w: 2 * w, format: Float16}, passTarget{dstW: w, w: w, h: w, z: 2048, firstSrcCol: -2})
		assert.Equal(t, half, int(k.oy), "%d wide", w)
	}
	ps := newPasses(dev, KindDilatedMax, d2)
	k := ps.key(passValues, EdgeClamp, &Image{w: 86, format: Float16}, passTarget{dstW: 43, w: 43, h: 43, z: 2048, firstSrcCol: -2})
	assert.Equal(t, 1, int(k.oy), "43 wide: 11 strips stored value by value")
}

// The passes on halves ("packedf16"): the max kinds' value passes and
// their fast two-phase argmax passes (the default), over float16 images
// loaded at least in pairs, dilated or not, on devices with
// shaderFloat16; not the other kinds, tunings or loads.
func TestHalfArithmeticPasses(t *testing.T) {
	dev := vktest.Open(t)
	if !dev.Limits().Float16Arithmetic {
		t.Skip("no shaderFloat16: no pass on halves")
	}
	k3 := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	d2 := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 2, DilationY: 2}
	d2y := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 2}
	for _, c := range []struct {
		kind PoolingKind
		g    Geometry
		pass passKind
		f    Format
		vw   int
		tune Tuning
		want bool
	}{
		{KindMax, k3, passValues, Float16, 4, Tuning{}, true},
		{KindMax, k3, passArgmax, Float16, 4, Tuning{}, true},
		{KindMax, k3, passArgmaxOnly, Float16, 2, Tuning{}, true},
		{KindDilatedMax, d2y, passArgmax, Float16, 4, Tuning{}, true},
		{KindMax, k3, passArgmax, Float16, 4, Tuning{Argmax: ArgmaxFastTwoPhase}, true},
		{KindMax, k3, passArgmax, Float32, 4, Tuning{}, false},
		{KindMax, k3, passArgmax, Float16, 1, Tuning{}, false},
		{KindDilatedMax, d2, passArgmax, Float16, 4, Tuning{}, true},
		{KindDilatedMax, d2, passValues, Float16, 4, Tuning{}, true},
		{KindMax, k3, passArgmax, Float16, 4, Tuning{NoHalfArithmetic: true}, false},
		{KindMax, k3, passArgmax, Float16, 4, Tuning{Argmax: ArgmaxFastTapByTap}, false},
		{KindMax, k3, passArgmaxOnly, Float16, 4, Tuning{Argmax: ArgmaxTwoPhase}, false},
		{KindMax, k3, passArgmax, Float16, 4, Tuning{NoFastMax: true}, true},
		{KindMax, k3, passValues, Float16, 4, Tuning{NoFastMax: true}, false},
		{KindAverage, k3, passValues, Float16, 4, Tuning{}, false},
		{KindL2Norm, k3, passRatio, Float16, 4, Tuning{}, false},
	} {
		ps := newPasses(dev, c.kind, c.g)
		ps.setTuning(c.tune)
		assert.Equal(t, c.want, ps.halfArithmetic(c.pass, c.f, c.vw), "%v %v pass %d vw %d %+v", c.kind, c.f, c.pass, c.vw, c.tune)
	}
}

// The argmax passes on halves aim at workgroups of argmaxHalfWorkgroup
// invocations, the others (and those passes under a Tuning's Workgroup)
// at the target.
func TestArgmaxHalfWorkgroup(t *testing.T) {
	dev := vktest.Open(t)
	k3 := Geometry{KernelWidth: 3, KernelHeight: 3, StrideX: 2, StrideY: 2, DilationX: 1, DilationY: 1}
	target := passTarget{dstW: 56, w: 56, h: 56, z: 2048, firstSrcCol: -1}
	size := func(pass passKind, f Format, tu Tuning) int {
		ps := newPasses(dev, KindMax, k3)
		ps.setTuning(tu)
		k := ps.key(pass, EdgeClamp, &Image{w: 112, format: f}, target)
		return int(k.lx) * int(k.ly) * int(k.lz)
	}
	half := workgroupTarget
	if dev.Limits().Float16Arithmetic {
		half = argmaxHalfWorkgroup
	}
	assert.Equal(t, half, size(passArgmax, Float16, Tuning{}))
	assert.Equal(t, half, size(passArgmaxOnly, Float16, Tuning{}))
	assert.Equal(t, workgroupTarget, size(passArgmax, Float32, Tuning{}))
	assert.Equal(t, workgroupTarget, size(passValues, Float16, Tuning{}))
	assert.Equal(t, workgroupTarget, size(passArgmax, Float16, Tuning{NoHalfArithmetic: true}))
	assert.Equal(t, 512, size(passArgmax, Float16, Tuning{Workgroup: 512}))
}
