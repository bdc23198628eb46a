package ops

import (
	"fmt"
	"testing"

	"github.com/vkmps/vkmps/spirv"
)

// TestConvPipelineStatistics prints the driver compiler's statistics
// (registers, instructions, spills, where it reports them) of the
// family's GEMM pipelines for a 3x3 convolution: the image GEMM and the
// weight gradient on every tile, the Winograd products (convolution and
// weight gradient) on every tile, the small-channel gather, and on every
// cooperative-matrix tile the GEMM and the Winograd products. A diagnosis aid for the GPU machine, run with
//
//	VKMPS_CONV_STATS=1 go test ./ops -run TestConvPipelineStatistics -v
func TestConvPipelineStatistics(t *testing.T) {
	dev := statsDevice(t, "VKMPS_CONV_STATS")
	e, err := convNewEngine(dev, "statistics", NeuronDescriptor{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	geom := [6]int32{3, 3, 1, 1, 1, 1}
	type named struct {
		name string
		key  convPipeKey
	}
	var keys []named
	for i, tile := range gemmTiles {
		c := tile.cfg
		if !c.fits(dev.Limits()) {
			continue
		}
		local := int32(c.threads())
		for _, f16 := range []bool{false, true} {
			if f16 && !dev.Limits().Float16Storage {
				continue
			}
			suffix := ""
			if f16 {
				suffix = " float16"
			}
			keys = append(keys,
				named{"forward " + c.String() + suffix, convPipeKey{shader: spirv.ConvolutionGemm, f16: f16, tile: int8(i), local: local, geom: geom, vecA: true}},
				named{"data gradient " + c.String() + suffix, convPipeKey{shader: spirv.ConvolutionGemm, f16: f16, tile: int8(i), local: local, geom: geom,
					modeA: gemmATransposed, modeB: gemmBGather}},
				named{"weight gradient " + c.String() + suffix, convPipeKey{shader: spirv.ConvolutionGemmWeights, f16: f16, tile: int8(i), local: local, geom: geom}})
		}
	}
	for i, tile := range gemmTiles {
		if !tile.cfg.fits(dev.Limits()) {
			continue
		}
		local := int32(tile.cfg.threads())
		keys = append(keys,
			named{"Winograd products " + tile.cfg.String(), convPipeKey{shader: spirv.ConvolutionWinogradGemm, tile: int8(i), local: local, vecB: true}},
			named{"Winograd weight-gradient products " + tile.cfg.String(), convPipeKey{shader: spirv.ConvolutionWinogradGemm, tile: int8(i), local: local, modeA: 1, vecA: true}},
			named{"Winograd products, quad stores " + tile.cfg.String(), convPipeKey{shader: spirv.ConvolutionWinogradGemm, tile: int8(i), local: local, vecB: true, vecC: true}},
			named{"Winograd weight-gradient products, quad stores " + tile.cfg.String(), convPipeKey{shader: spirv.ConvolutionWinogradGemm, tile: int8(i), local: local, modeA: 1, vecA: true, vecC: true}},
			named{"Winograd weight-gradient products, channels fastest " + tile.cfg.String(), convPipeKey{shader: spirv.ConvolutionWinogradGemm, tile: int8(i), local: local, modeA: 1, vecA: true, vecB: true, vecC: true, cf: true}})
	}
	// The depthwise kernels of a 3x3 layer on blocks of 4 x 4 outputs
	// (quads; 8 halves a load for the float16 weight gradient's strips
	// of 8), 16 x 16 workgroups for the forward.
	for _, f16 := range []bool{false, true} {
		if f16 && !dev.Limits().Float16Storage {
			continue
		}
		wox, wvw := int8(4), int8(4)
		if f16 {
			wox, wvw = 8, 8
		}
		keys = append(keys,
			named{fmt.Sprintf("depthwise forward f16=%v", f16), convPipeKey{shader: spirv.ConvolutionDepthwise, f16: f16, tile: -1, local: 16, ly: 16, lz: 1,
				geom: geom, mult: 1, ox: 4, oy: 4, vw: 4, phase: 3}},
			named{fmt.Sprintf("depthwise weight gradient f16=%v", f16), convPipeKey{shader: spirv.ConvolutionDepthwiseWeights, f16: f16, tile: -1,
				local: convDepthwiseLocal, geom: geom, mult: 1, bias: true, ox: wox, oy: 4, vw: wvw, phase: wvw - 1}})
	}
	keys = append(keys, named{"small-channel gather 7x7/2", convPipeKey{shader: spirv.ConvolutionDataSmall, tile: -1, local: 32, ly: 8, lz: 1,
		geom: [6]int32{7, 7, 2, 2, 1, 1}, ox: 8, cin: 3}})
	for i := range convCoopTiles {
		if c, ok := convCoopTileFor(dev.Limits(), i); ok {
			keys = append(keys, named{fmt.Sprintf("cooperative matrices float16 %v of %dx%dx%d", c, c.cm, c.cn, c.ck),
				convPipeKey{shader: spirv.ConvolutionGemmCoopmat, f16: true, coop: true, tile: -1, ctile: int8(i),
					local: int32(c.threads()), geom: geom, vecA: true}},
				named{fmt.Sprintf("Winograd products, cooperative matrices %v", c),
					convPipeKey{shader: spirv.ConvolutionWinogradCoopmat, coop: true, tile: -1, ctile: int8(i), local: int32(c.threads()), vecB: true}},
				named{fmt.Sprintf("Winograd weight-gradient products, cooperative matrices %v", c),
					convPipeKey{shader: spirv.ConvolutionWinogradCoopmat, coop: true, tile: -1, ctile: int8(i), local: int32(c.threads()), modeA: 1, vecA: true, vecB: true}})
		}
	}
	for _, k := range keys {
		p, err := e.pipeline(k.key)
		if err != nil {
			t.Errorf("%s: %v", k.name, err)
			continue
		}
		st, err := p.Statistics()
		if err != nil {
			t.Errorf("%s: %v", k.name, err)
			continue
		}
		t.Logf("%s (%v):\n%s", k.name, p, st)
	}
}
