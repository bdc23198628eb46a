package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
	"github.com/vkmps/vkmps/vk"
)

// benchConvLayer is a layer of bench --conv: names and shapes are
// bench/torch_training_baseline.py's CONV table, so that rows join
// PyTorch's (by "conv" and "mode").
type benchConvLayer struct {
	Name                                  string
	N, C, H, W, O, K, Stride, Pad, Groups int
}

// benchConvStandard are ResNet-18/50's and VGG's layers and a depthwise
// one (issue 15's list).
var benchConvStandard = []benchConvLayer{
	{"resnet stem 7x7/2", 32, 3, 224, 224, 64, 7, 2, 3, 1},
	{"resnet 3x3 64", 32, 64, 56, 56, 64, 3, 1, 1, 1},
	{"resnet 3x3 128@28", 32, 128, 28, 28, 128, 3, 1, 1, 1},
	{"resnet 3x3 256@14", 32, 256, 14, 14, 256, 3, 1, 1, 1},
	{"resnet 3x3 512@7", 32, 512, 7, 7, 512, 3, 1, 1, 1},
	{"resnet 1x1 512@7", 32, 512, 7, 7, 2048, 1, 1, 0, 1},
	{"vgg 3x3 128@112", 16, 128, 112, 112, 128, 3, 1, 1, 1},
	{"depthwise 3x3 256@56", 32, 256, 56, 56, 256, 3, 1, 1, 256},
}

// benchConvSmall is --small's quick set (seconds on lavapipe): the same
// kinds of layer, small.
var benchConvSmall = []benchConvLayer{
	{"small stem 5x5/2", 2, 3, 20, 20, 8, 5, 2, 2, 1},
	{"small 3x3 16", 2, 16, 12, 12, 16, 3, 1, 1, 1},
	{"small 1x1 32@7", 2, 32, 7, 7, 64, 1, 1, 0, 1},
	{"small depthwise 3x3 16", 2, 16, 12, 12, 16, 3, 1, 1, 16},
}

// benchConvRow is one layer and format: its three passes' GPU times.
type benchConvRow struct {
	Layer          benchConvLayer
	DType          ops.Format
	OH, OW         int
	Fwd, Dx, Dw    benchTiming
	MACs, MinBytes float64 // multiply-adds of the direct definition; bytes of input + output
}

// benchConvRowJSON is a layer's JSON line; conv, mode and the *_us and
// *_tflops fields are torch_training_baseline.py's, with its meaning.
type benchConvRowJSON struct {
	Conv      string  `json:"conv"`
	Mode      string  `json:"mode"` // fp32 or fp16, as PyTorch's
	DType     string  `json:"dtype"`
	Shape     [4]int  `json:"shape"`
	Out       [4]int  `json:"out"`
	Kernel    int     `json:"kernel"`
	Stride    int     `json:"stride"`
	Pad       int     `json:"pad"`
	Groups    int     `json:"groups"`
	FwdUs     float64 `json:"fwd_us"`
	DxUs      float64 `json:"dx_us"`
	DwUs      float64 `json:"dw_us"`
	FwdTflops float64 `json:"fwd_tflops"`
	DxTflops  float64 `json:"dx_tflops"`
	DwTflops  float64 `json:"dw_tflops"`
	// *_GBps: input + output bytes over the median time (4 significant
	// digits, so that a slow device's rate stays positive), and that as a
	// percentage of the copy bandwidth (the ceiling of depthwise layers).
	FwdGBps    float64 `json:"fwd_GBps"`
	FwdPctCopy float64 `json:"fwd_pct_copy"`
	DxGBps     float64 `json:"dx_GBps"`
	DwGBps     float64 `json:"dw_GBps"`
}

func (r benchConvRow) toJSON(cp benchCopy) benchConvRowJSON {
	l := r.Layer
	mode := "fp32"
	if r.DType == ops.Float16 {
		mode = "fp16"
	}
	tf := func(t benchTiming) float64 {
		if t.Median <= 0 {
			return 0
		}
		return roundTo(2*r.MACs/float64(t.Median.Nanoseconds())/1e3, 3)
	}
	bw := func(t benchTiming) float64 { return roundSig(gbps(uint64(r.MinBytes), t.Median), 4) }
	j := benchConvRowJSON{Conv: l.Name, Mode: mode, DType: r.DType.String(), Shape: [4]int{l.N, l.C, l.H, l.W},
		Out: [4]int{l.N, l.O, r.OH, r.OW}, Kernel: l.K, Stride: l.Stride, Pad: l.Pad, Groups: l.Groups,
		FwdUs: us(r.Fwd.Median), DxUs: us(r.Dx.Median), DwUs: us(r.Dw.Median),
		FwdTflops: tf(r.Fwd), DxTflops: tf(r.Dx), DwTflops: tf(r.Dw),
		FwdGBps: bw(r.Fwd), DxGBps: bw(r.Dx), DwGBps: bw(r.Dw)}
	if cp.GBps > 0 {
		j.FwdPctCopy = roundTo(100*j.FwdGBps/cp.GBps, 1)
	}
	return j
}

// benchConvHeader is the first JSON line of bench --conv: the pooling
// bench's header with the section and the convolution tuning.
type benchConvHeader struct {
	benchHeader
	Section    string `json:"section"` // "conv"
	ConvTuning string `json:"conv_tuning,omitempty"`
}

// convLayer measures one layer in format dt: the forward (no bias), the
// data gradient and the weight gradient (no bias gradient), as cuDNN's
// rows, each kernel given tune.
func (b *benchRunner) convLayer(l benchConvLayer, dt ops.Format, tune ops.ConvolutionTuning) (row benchConvRow, err error) {
	row = benchConvRow{Layer: l, DType: dt}
	d := ops.ConvolutionDescriptor{KernelWidth: l.K, KernelHeight: l.K, InputFeatureChannels: l.C, OutputFeatureChannels: l.O,
		Groups: l.Groups, StrideX: l.Stride, StrideY: l.Stride}
	k, err := ops.NewConvolution(b.dev, d)
	if err != nil {
		return row, err
	}
	defer k.Close()
	g, err := ops.NewConvolutionGradient(b.dev, d)
	if err != nil {
		return row, err
	}
	defer g.Close()
	if err := k.SetTuning(tune); err != nil {
		return row, err
	}
	if err := g.SetTuning(tune); err != nil {
		return row, err
	}
	k.Padding = padding.Explicit(padding.Pads{Top: l.Pad, Left: l.Pad, Bottom: l.Pad, Right: l.Pad}, false, false)
	src := ops.ImageDescriptor{N: l.N, C: l.C, H: l.H, W: l.W, Format: dt}
	out, err := k.DestinationImageDescriptor(src)
	if err != nil {
		return row, err
	}
	g.SetForwardOffset(k.Offset.X, k.Offset.Y)
	row.OH, row.OW = out.H, out.W
	wd := d.WeightsDescriptor()
	var ims []*ops.Image
	defer func() {
		for _, im := range ims {
			im.Close()
		}
	}()
	image := func(d ops.ImageDescriptor, label string, fill bool) (*ops.Image, error) {
		d.Label = "bench " + label
		im, err := ops.NewImage(b.dev, d)
		if err != nil {
			return nil, err
		}
		ims = append(ims, im)
		if fill {
			err = im.Write(b.ctx, b.random(im.Len()))
		}
		return im, err
	}
	x, err := image(src, "source", true)
	if err != nil {
		return row, err
	}
	w, err := image(ops.ImageDescriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, "weights", true)
	if err != nil {
		return row, err
	}
	y, err := image(ops.ImageDescriptor{N: l.N, C: l.O, H: out.H, W: out.W, Format: dt}, "result", false)
	if err != nil {
		return row, err
	}
	dy, err := image(ops.ImageDescriptor{N: l.N, C: l.O, H: out.H, W: out.W, Format: dt}, "result gradient", true)
	if err != nil {
		return row, err
	}
	dx, err := image(src, "source gradient", false)
	if err != nil {
		return row, err
	}
	dW, err := image(ops.ImageDescriptor{N: wd.N, C: wd.C, H: wd.H, W: wd.W}, "weight gradient", false)
	if err != nil {
		return row, err
	}
	row.MACs = float64(l.N*l.O*out.H*out.W) * float64(l.C/l.Groups*l.K*l.K)
	row.MinBytes = float64(dt.Size()) * float64(l.N) * float64(l.C*l.H*l.W+l.O*out.H*out.W)
	for _, p := range []struct {
		t   *benchTiming
		enc func(cb *vk.CommandBuffer) error
	}{
		{&row.Fwd, func(cb *vk.CommandBuffer) error { return k.Encode(cb, x, w, nil, y) }},
		{&row.Dx, func(cb *vk.CommandBuffer) error { return g.EncodeData(cb, dy, w, dx) }},
		{&row.Dw, func(cb *vk.CommandBuffer) error { return g.EncodeWeights(cb, dy, x, dW, nil) }},
	} {
		if *p.t, err = b.time(p.enc); err != nil {
			return row, err
		}
		b.bar.Add(1)
	}
	return row, nil
}

// benchConvRun measures cfg's convolution layers: the copy bandwidth,
// then every layer in every format, --repeat passes keeping each pass's
// best median.
func benchConvRun(e *env, r *benchRunner, info vk.Info, cfg benchConfig, head benchHeader) error {
	r.bar.Describe("copy bandwidth")
	cp, err := r.copyBandwidth(benchCopySize(info, cfg), false)
	if err != nil {
		return fmt.Errorf("copy bandwidth: %w", err)
	}
	var rows []benchConvRow
	for pass := 0; pass < cfg.repeat; pass++ {
		i := 0
		for _, l := range cfg.convLayers {
			for _, dt := range cfg.dtypes {
				r.bar.Describe(fmt.Sprintf("%s %s", l.Name, dt))
				row, err := r.convLayer(l, dt, cfg.convTuning)
				if err != nil {
					return fmt.Errorf("%s (%s): %w", l.Name, dt, err)
				}
				if pass == 0 {
					rows = append(rows, row)
				} else {
					best := &rows[i]
					for _, t := range [][2]*benchTiming{{&best.Fwd, &row.Fwd}, {&best.Dx, &row.Dx}, {&best.Dw, &row.Dw}} {
						if t[1].Median < t[0].Median {
							*t[0] = *t[1]
						}
					}
				}
				i++
			}
		}
	}
	r.bar.Finish()
	h := benchConvHeader{benchHeader: head, Section: "conv", ConvTuning: cfg.convTuning.String()}
	if cfg.jsonPath != "-" {
		benchConvTable(e.stdout, h, rows, cp)
	}
	if cfg.jsonPath == "" {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(h); err != nil {
		return err
	}
	for _, row := range rows {
		if err := enc.Encode(row.toJSON(cp)); err != nil {
			return err
		}
	}
	if err := enc.Encode(cp.toJSON()); err != nil {
		return err
	}
	if cfg.jsonPath == "-" {
		_, err := e.stdout.Write(buf.Bytes())
		return err
	}
	return tensorio.WriteFile(cfg.jsonPath, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
}

// benchConvTable prints the header and a line per layer and format: µs
// and TFLOP/s (2 x the direct definition's multiply-adds over the time:
// an effective rate for Winograd) of each pass, and the forward's GB/s.
func benchConvTable(w io.Writer, h benchConvHeader, rows []benchConvRow, cp benchCopy) {
	fmt.Fprintf(w, "device:  %s (%s, %s, Vulkan %s)\n", h.Device, h.DeviceType, h.Vendor, h.Vulkan)
	fmt.Fprintf(w, "driver:  %s %s\n", h.Driver, h.DriverVersion)
	fmt.Fprintf(w, "date:    %s\n", h.Date)
	if h.ConvTuning != "" {
		fmt.Fprintf(w, "tuning:  %s (--conv-tuning; not the kernels' own choices)\n", h.ConvTuning)
	}
	fmt.Fprintf(w, "copy:    %.1f GB/s (vkmps's copy shader: the ceiling of the memory-bound layers)\n", cp.GBps)
	fmt.Fprintf(w, "method:  GPU timestamps, median of %d runs; forward without bias, weight gradient without bias gradient\n\n", h.Iters)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "convolution\tdtype\tfwd µs\tTFLOP/s\tdx µs\tTFLOP/s\tdW µs\tTFLOP/s\tfwd GB/s\tof copy\t\n")
	for _, r := range rows {
		j := r.toJSON(cp)
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.3g\t%.1f\t%.3g\t%.1f\t%.3g\t%.3g\t%.1f%%\t\n", j.Conv, j.DType,
			j.FwdUs, j.FwdTflops, j.DxUs, j.DxTflops, j.DwUs, j.DwTflops, j.FwdGBps, j.FwdPctCopy)
	}
	tw.Flush()
}
