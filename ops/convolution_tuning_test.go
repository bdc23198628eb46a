package ops_test

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk/vktest"
)

// The text form: every key, read and written back; every class of bad
// text refused with ErrTuning.
func TestConvolutionTuningText(t *testing.T) {
	good := []struct {
		text string
		want ops.ConvolutionTuning
		back string
	}{
		{"", ops.ConvolutionTuning{}, ""},
		{"tile=0", ops.ConvolutionTuning{Path: ops.ConvolutionPathTiled}, "tile=0"},
		{" tile=2 , splits=8 ", ops.ConvolutionTuning{Path: ops.ConvolutionPathTiled, Tile: 2, Splits: 8}, "tile=2,splits=8"},
		{"direct=1,units=132", ops.ConvolutionTuning{Path: ops.ConvolutionPathDirect, ComputeUnits: 132}, "direct=1,units=132"},
		{"direct=0", ops.ConvolutionTuning{}, ""},
		{"coopmat=1", ops.ConvolutionTuning{Path: ops.ConvolutionPathCoopMat}, "coopmat=1"},
		{"coopmat=0,small=0", ops.ConvolutionTuning{NoCoopMat: true, NoSmallChannels: true}, "coopmat=0,small=0"},
		{"small=1", ops.ConvolutionTuning{}, ""},
		{"cooptile=3", ops.ConvolutionTuning{Path: ops.ConvolutionPathCoopMat, CoopTile: 3}, "cooptile=3"},
		{"coopmat=1, cooptile=2,units=8", ops.ConvolutionTuning{Path: ops.ConvolutionPathCoopMat, CoopTile: 2, ComputeUnits: 8}, "cooptile=2,units=8"},
		{"cooptile=1,coopmat=1", ops.ConvolutionTuning{Path: ops.ConvolutionPathCoopMat, CoopTile: 1}, "cooptile=1"},
		{"cooptile=0", ops.ConvolutionTuning{Path: ops.ConvolutionPathCoopMat}, "coopmat=1"},
		{"winograd=1", ops.ConvolutionTuning{Winograd: true}, "winograd=1"},
		{"winograd=1,tile=2", ops.ConvolutionTuning{Path: ops.ConvolutionPathTiled, Tile: 2, Winograd: true}, "tile=2,winograd=1"},
		{"winograd=0, coopmat=0", ops.ConvolutionTuning{NoWinograd: true, NoCoopMat: true}, "coopmat=0,winograd=0"},
		{"winocoop=1", ops.ConvolutionTuning{WinogradCoopMat: true}, "winocoop=1"},
		{"winocoop=0", ops.ConvolutionTuning{NoWinogradCoopMat: true}, "winocoop=0"},
		{"packed=0", ops.ConvolutionTuning{NoCoopPacked: true}, "packed=0"},
		{"packed=1", ops.ConvolutionTuning{}, ""},
		{"phasetaps=0", ops.ConvolutionTuning{NoPhaseTaps: true}, "phasetaps=0"},
		{"tapsplit=1,splits=2", ops.ConvolutionTuning{TapSplit: true, Splits: 2}, "splits=2,tapsplit=1"},
		{"tapsplit=0", ops.ConvolutionTuning{NoTapSplit: true}, "tapsplit=0"},
		{"col2im=1", ops.ConvolutionTuning{Col2im: true}, "col2im=1"},
		{"col2im=0,tapsplit=1", ops.ConvolutionTuning{NoCol2im: true, TapSplit: true}, "tapsplit=1,col2im=0"},
		{"winoxhalf=1,dwvec=0", ops.ConvolutionTuning{WinogradXHalf: true, NoDepthwiseVectors: true}, "dwvec=0,winoxhalf=1"},
		{"winoxhalf=0", ops.ConvolutionTuning{NoWinogradXHalf: true}, "winoxhalf=0"},
		{"im2col=1,dwvec=0", ops.ConvolutionTuning{Im2col: true, NoDepthwiseVectors: true}, "dwvec=0,im2col=1"},
		{"im2col=0", ops.ConvolutionTuning{NoIm2col: true}, "im2col=0"},
		{"dwvec=0, dwstrip=8", ops.ConvolutionTuning{DepthwiseStrip: 8, NoDepthwiseVectors: true}, "dwstrip=8,dwvec=0"},
		{"dwvec=1,dwstrip=1", ops.ConvolutionTuning{DepthwiseStrip: 1}, "dwstrip=1"},
		{"winoquads=0", ops.ConvolutionTuning{NoWinogradQuads: true}, "winoquads=0"},
		{"winoquads=1", ops.ConvolutionTuning{}, ""},
		{"winocf=0,winoquads=0", ops.ConvolutionTuning{NoWinogradQuads: true, NoWinogradChannelsFast: true}, "winoquads=0,winocf=0"},
		{"coopdirect=1,winoxhalf=0", ops.ConvolutionTuning{CoopDirect: true, NoWinogradXHalf: true}, "winoxhalf=0,coopdirect=1"},
		{"coopdirect=0", ops.ConvolutionTuning{}, ""},
		{"coopstage=1,coopdirect=1", ops.ConvolutionTuning{CoopDirect: true, CoopStage: true}, "coopdirect=1,coopstage=1"},
		{"coopstage=0", ops.ConvolutionTuning{NoCoopStage: true}, "coopstage=0"},
		{"coopshape=2,coopdirect=1", ops.ConvolutionTuning{CoopDirect: true, CoopShape: 2}, "coopdirect=1,coopshape=2"},
		{"coopshape=4,coopkhr=1", ops.ConvolutionTuning{CoopKHR: true, CoopShape: 4}, "coopkhr=1,coopshape=4"},
		{"winopart=4,splits=2", ops.ConvolutionTuning{Splits: 2, WinogradPart: 4}, "splits=2,winopart=4"},
		{"winocoop=0,coopmat=0", ops.ConvolutionTuning{NoWinogradCoopMat: true, NoCoopMat: true}, "coopmat=0,winocoop=0"},
		{"winocoop=1,winograd=1,cooptile=2", ops.ConvolutionTuning{Path: ops.ConvolutionPathCoopMat, CoopTile: 2, Winograd: true, WinogradCoopMat: true},
			"cooptile=2,winograd=1,winocoop=1"},
	}
	for _, c := range good {
		got, err := ops.ParseConvolutionTuning(c.text)
		require.NoError(t, err, c.text)
		assert.Equal(t, c.want, got, c.text)
		assert.Equal(t, c.back, got.String(), c.text)
		again, err := ops.ParseConvolutionTuning(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, again)
	}
	bad := []string{"tile", "tile=x", "tile=-1", "tile=99", "splits=0", "splits=5000", "units=0", "units=70000",
		"tile=1,tile=1", "tile=1,direct=1", "direct=2", "coopmat=1,coopmat=0", "coopmat=1,tile=0", "small=3", "wgs=256",
		"cooptile=-1", "cooptile=99", "cooptile=x", "cooptile=1,tile=0", "tile=0,cooptile=1", "direct=1,cooptile=1", "coopmat=0,cooptile=1",
		"cooptile=1,coopmat=0", "cooptile=1,cooptile=2", "winograd=2", "winograd=1,winograd=0", "winograd=x",
		"winocoop=1,winocoop=0", "winocoop=2", "packed=2", "phasetaps=3", "tapsplit=2", "tapsplit=1,tapsplit=0", "col2im=2", "col2im=1,col2im=0", "winoxhalf=2", "im2col=2", "im2col=1,im2col=0", "winoxhalf=1,winoxhalf=0", "dwstrip=0", "dwstrip=9", "dwvec=2", "winoquads=2", "winocf=3", "winocoop=1,winograd=0", "coopmat=0,winocoop=1",
		"winopart=0", "winopart=-1", "winopart=70000", "coopshape=0", "coopshape=6", "coopkhr=0", "coopkhr=2", "coopdirect=2", "coopstage=2", "coopstage=1,coopstage=0"}
	for _, s := range bad {
		_, err := ops.ParseConvolutionTuning(s)
		assert.True(t, errors.Is(err, ops.ErrTuning), "%q: %v", s, err)
	}
	for _, tu := range []ops.ConvolutionTuning{{Path: -1}, {Path: 9}, {Tile: 1}, {Path: ops.ConvolutionPathTiled, Tile: ops.ConvolutionTileCount()},
		{Splits: -1}, {ComputeUnits: -2}, {WinogradPart: -1}, {Path: ops.ConvolutionPathCoopMat, NoCoopMat: true},
		{CoopTile: 1}, {Path: ops.ConvolutionPathTiled, CoopTile: 1}, {Path: ops.ConvolutionPathCoopMat, CoopTile: -1},
		{Path: ops.ConvolutionPathCoopMat, CoopTile: ops.ConvolutionCoopTileCount()}, {Winograd: true, NoWinograd: true},
		{WinogradCoopMat: true, NoWinograd: true}, {WinogradCoopMat: true, NoCoopMat: true},
		{WinogradCoopMat: true, NoWinogradCoopMat: true}, {DepthwiseStrip: -1}, {DepthwiseStrip: 9}, {CoopShape: -1}, {CoopShape: 6}, {CoopStage: true, NoCoopStage: true}} {
		assert.True(t, errors.Is(tu.Validate(), ops.ErrTuning), "%+v", tu)
	}
	assert.Equal(t, "", ops.ConvolutionTileName(-1))
	assert.Equal(t, "128x128x8/8x8", ops.ConvolutionTileName(0))
	assert.Equal(t, "", ops.ConvolutionCoopTileName(-1))
	assert.Equal(t, "", ops.ConvolutionCoopTileName(ops.ConvolutionCoopTileCount()))
	assert.Equal(t, "64x64x32/2x2", ops.ConvolutionCoopTileName(0))
}

// Every kernel of the family takes a tuning, refuses an invalid one
// keeping its setting, and computes the same results (within the
// tolerances) under every setting: tiles with split counts, the direct
// path, few or many compute units, no gather kernel for few channels.
func TestConvolutionTuningKeepsResults(t *testing.T) {
	heavy(t)
	dev := vktest.Open(t)
	type tunable interface {
		SetTuning(ops.ConvolutionTuning) error
		Tuning() ops.ConvolutionTuning
	}
	d := ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 3, OutputFeatureChannels: 7}
	ks := []tunable{must(ops.NewConvolution(dev, d)), must(ops.NewConvolutionGradient(dev, d)), must(ops.NewConvolutionTranspose(dev, d)),
		must(ops.NewConvolutionTransposeGradient(dev, d)), must(ops.NewFullyConnected(dev, d)), must(ops.NewFullyConnectedGradient(dev, d))}
	good := ops.ConvolutionTuning{Path: ops.ConvolutionPathTiled, Tile: 1, Splits: 3}
	for _, k := range ks {
		require.NoError(t, k.SetTuning(good))
		err := k.SetTuning(ops.ConvolutionTuning{Splits: -1})
		assert.True(t, errors.Is(err, ops.ErrTuning), "%v", err)
		assert.Equal(t, good, k.Tuning())
		k.(interface{ Close() error }).Close()
	}
	c := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 2, InputFeatureChannels: 3, OutputFeatureChannels: 10,
		StrideX: 2, StrideY: 1, DilationX: 1, DilationY: 1}, n: 3, h: 11, w: 9,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 0, Right: 1}, bias: true}
	// Stride 1, bias and a neuron: every GEMM of it splits K under a split
	// count (the forward and data gradient finish their outputs in a
	// second pass).
	plain := convCase{d: ops.ConvolutionDescriptor{KernelWidth: 3, KernelHeight: 3, InputFeatureChannels: 5, OutputFeatureChannels: 9,
		StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1, Neuron: ops.NewNeuronDescriptor(ops.NeuronTanH)}, n: 2, h: 9, w: 12,
		pads: padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, bias: true}
	fc := fcCase{n: 7, c: 6, h: 3, w: 3, o: 11, flat: true, bias: true}
	for _, text := range []string{"tile=1,splits=3", "tile=3,splits=1", "tile=2,splits=4096", "splits=2", "direct=1", "units=1", "units=1000", "small=0"} {
		tu, err := ops.ParseConvolutionTuning(text)
		require.NoError(t, err)
		t.Run(text, func(t *testing.T) {
			set := func(k any) { require.NoError(t, k.(tunable).SetTuning(tu)) }
			r := rand.New(rand.NewSource(5))
			convRunCase(t, dev, c, r, false, set)
			convRunCase(t, dev, plain, r, dev.Limits().Float16Storage && text == "splits=2", set)
			fcCheck(t, dev, fc, r, false, set)
		})
	}
}
