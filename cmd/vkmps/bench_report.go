package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// benchHeader is the first JSON line: what ran where and when.
type benchHeader struct {
	Tool          string  `json:"vkmps"` // "bench"
	Device        string  `json:"device"`
	DeviceType    string  `json:"device_type"`
	Vendor        string  `json:"vendor"`
	Driver        string  `json:"driver"`
	DriverVersion string  `json:"driver_version"`
	DriverInfo    string  `json:"driver_info"`
	Vulkan        string  `json:"vulkan"`
	Date          string  `json:"date"` // RFC 3339, UTC
	DType         string  `json:"dtype"`
	Layout        string  `json:"layout"`
	Iters         int     `json:"iters"`
	MinTimeUs     float64 `json:"min_time_us"`
	MaxReps       int     `json:"max_reps"`
	Repeat        int     `json:"repeat"`
	WarmupMs      float64 `json:"warmup_ms"`
	// Tuning is the kernels' work-shape overrides ($VKMPS_TUNE, in
	// ops.ParseTuning's form); empty when the kernels chose.
	Tuning string `json:"tuning,omitempty"`
	// CopyEndGBps is the copy bandwidth measured again after the last
	// pass (with --repeat > 1); 0 when not measured.
	CopyEndGBps float64 `json:"copy_end_GBps,omitempty"`
	// CopyEndFreshGBps is the same on newly allocated buffers.
	CopyEndFreshGBps float64 `json:"copy_end_fresh_GBps,omitempty"`
}

func newBenchHeader(info vk.Info, cfg benchConfig) benchHeader {
	var dts []string
	for _, f := range cfg.dtypes {
		dts = append(dts, f.String())
	}
	if len(dts) == 0 {
		dts = []string{"float32"}
	}
	return benchHeader{Tool: "bench", Device: info.Name, DeviceType: info.Type.String(), Vendor: info.Vendor,
		Driver: info.DriverName, DriverVersion: info.DriverVersion, DriverInfo: info.DriverInfo,
		Vulkan: info.APIVersion.String(), Date: time.Now().UTC().Format(time.RFC3339), DType: strings.Join(dts, ","), Layout: "nchw",
		Iters: cfg.iters, MinTimeUs: float64(cfg.minTime) / 1e3, MaxReps: cfg.maxReps, Repeat: max(1, cfg.repeat),
		Tuning: cfg.tuning.String()}
}

// benchRowJSON is a kernel's JSON line. The fields up to pad, fwd_us,
// bwd_us, fwd_GBps and bwd_GBps_min_traffic are the PyTorch script's, with
// its meaning; the rest are vkmps's.
type benchRowJSON struct {
	Op       string `json:"op"`
	Layout   string `json:"layout"`
	Shape    [4]int `json:"shape"`
	Kernel   int    `json:"kernel"`
	Stride   int    `json:"stride"`
	Pad      int    `json:"pad"`
	Dilation int    `json:"dilation"`
	Argmax   bool   `json:"argmax"`
	Pads     [4]int `json:"pads"`
	DType    string `json:"dtype"`

	Skipped string `json:"skipped,omitempty"`

	OutShape   *[4]int  `json:"out_shape,omitempty"`
	FwdUs      *float64 `json:"fwd_us,omitempty"`
	BwdUs      *float64 `json:"bwd_us,omitempty"`
	FwdGBps    *float64 `json:"fwd_GBps,omitempty"`
	BwdGBps    *float64 `json:"bwd_GBps_min_traffic,omitempty"`
	FwdUsMin   *float64 `json:"fwd_us_min,omitempty"`
	BwdUsMin   *float64 `json:"bwd_us_min,omitempty"`
	FwdBytes   uint64   `json:"fwd_bytes,omitempty"`
	BwdBytes   uint64   `json:"bwd_bytes,omitempty"`
	FwdPctCopy *float64 `json:"fwd_pct_copy,omitempty"`
	BwdPctCopy *float64 `json:"bwd_pct_copy,omitempty"`
	FwdReps    int      `json:"fwd_reps,omitempty"`
	BwdReps    int      `json:"bwd_reps,omitempty"`
	// Float16 rows of a run that also timed float32: float32 time /
	// float16 time of the same kernel (the throughput ratio).
	FwdXFloat32 *float64 `json:"fwd_speedup_vs_float32,omitempty"`
	BwdXFloat32 *float64 `json:"bwd_speedup_vs_float32,omitempty"`
}

// benchCopyJSON is the last JSON line, as the PyTorch script's.
type benchCopyJSON struct {
	Op          string  `json:"op"` // "d2d-copy"
	GBps        float64 `json:"GBps"`
	Bytes       uint64  `json:"bytes"`
	Us          float64 `json:"us"`
	UsMin       float64 `json:"us_min"`
	Reps        int     `json:"reps"`
	Method      string  `json:"method"`
	CmdCopyGBps float64 `json:"cmd_copy_GBps"`
}

func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// roundSig rounds x to sig significant digits, so that a small positive
// rate (a slow device's) stays positive; 0 stays 0.
func roundSig(x float64, sig int) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return roundTo(x, sig-1-int(math.Floor(math.Log10(math.Abs(x)))))
}

func ptr[T any](v T) *T { return &v }

func us(t time.Duration) float64 { return roundTo(float64(t)/1e3, 2) }

func pct(v, of float64) float64 {
	if of <= 0 {
		return 0
	}
	return roundTo(100*v/of, 1)
}

// float32Twin returns the float32 row of r's shape, op and argmax setting,
// when r is a float16 row and that row ran.
func float32Twin(rows []benchRow, r benchRow) (benchRow, bool) {
	if r.dtype != ops.Float16 || r.Skipped != "" {
		return benchRow{}, false
	}
	for _, o := range rows {
		if o.dtype == ops.Float32 && o.shape == r.shape && o.op == r.op && o.argmax == r.argmax && o.Skipped == "" {
			return o, true
		}
	}
	return benchRow{}, false
}

// speedup is a / b, rounded, or 0 when b is 0.
// speedup is a/b to 3 significant digits (a ratio under 0.005, a loaded
// lavapipe's, stays positive: TestBenchFloat16 failed a CI run on 0.00).
func speedup(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return roundSig(float64(a)/float64(b), 3)
}

func (r benchRow) toJSON(cp benchCopy, rows []benchRow) benchRowJSON {
	s := r.shape
	j := benchRowJSON{Op: r.op, Layout: "nchw", Shape: [4]int{s.N, s.C, s.H, s.W}, Kernel: s.K, Stride: s.S, Pad: s.P,
		Dilation: r.Dilation, Argmax: r.argmax, Pads: r.Pads, DType: r.dtype.String(), Skipped: r.Skipped}
	if t, ok := float32Twin(rows, r); ok {
		j.FwdXFloat32, j.BwdXFloat32 = ptr(speedup(t.Fwd.Median, r.Fwd.Median)), ptr(speedup(t.Bwd.Median, r.Bwd.Median))
	}
	if r.Skipped != "" {
		return j
	}
	j.OutShape = &[4]int{r.Out.N, r.Out.C, r.Out.H, r.Out.W}
	j.FwdUs, j.BwdUs = ptr(us(r.Fwd.Median)), ptr(us(r.Bwd.Median))
	j.FwdUsMin, j.BwdUsMin = ptr(us(r.Fwd.Min)), ptr(us(r.Bwd.Min))
	j.FwdGBps, j.BwdGBps = ptr(roundTo(r.FwdGBps, 1)), ptr(roundTo(r.BwdGBps, 1))
	j.FwdBytes, j.BwdBytes = r.FwdBytes, r.BwdBytes
	j.FwdPctCopy, j.BwdPctCopy = ptr(pct(r.FwdGBps, cp.GBps)), ptr(pct(r.BwdGBps, cp.GBps))
	j.FwdReps, j.BwdReps = r.Fwd.Reps, r.Bwd.Reps
	return j
}

func (cp benchCopy) toJSON() benchCopyJSON {
	return benchCopyJSON{Op: "d2d-copy", GBps: roundTo(cp.GBps, 1), Bytes: cp.Bytes, Us: us(cp.Shader.Median),
		UsMin: us(cp.Shader.Min), Reps: cp.Shader.Reps,
		Method:      fmt.Sprintf("vkmps copy shader (glsl/copy.comp, vec4, local size %d), bytes read + written", cp.Local),
		CmdCopyGBps: roundTo(cp.CmdGBps, 1)}
}

// benchWriteJSON writes the JSON lines to path atomically, or to stdout
// for "-".
func benchWriteJSON(stdout io.Writer, path string, h benchHeader, rows []benchRow, cp benchCopy) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(h); err != nil {
		return err
	}
	for _, r := range rows {
		if err := enc.Encode(r.toJSON(cp, rows)); err != nil {
			return err
		}
	}
	if err := enc.Encode(cp.toJSON()); err != nil {
		return err
	}
	if path == "-" {
		_, err := stdout.Write(buf.Bytes())
		return err
	}
	return tensorio.WriteFile(path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
}

// benchTable prints the header and one line per case.
func benchTable(w io.Writer, h benchHeader, rows []benchRow, cp benchCopy) {
	fmt.Fprintf(w, "device:  %s (%s, %s, Vulkan %s)\n", h.Device, h.DeviceType, h.Vendor, h.Vulkan)
	drv := h.Driver
	if drv == "" {
		drv = h.Vendor
	}
	fmt.Fprintf(w, "driver:  %s %s", drv, h.DriverVersion)
	if h.DriverInfo != "" {
		fmt.Fprintf(w, " (%s)", h.DriverInfo)
	}
	fmt.Fprintf(w, "\ndate:    %s\n", h.Date)
	if h.Tuning != "" {
		fmt.Fprintf(w, "tuning:  %s (from $%s; not the kernels' own choices)\n", h.Tuning, tuneVar)
	}
	fmt.Fprintf(w, "copy:    %.1f GB/s with the copy shader (2 x %s in %.2f µs); vkCmdCopyBuffer %.1f GB/s",
		cp.GBps, bytesString(cp.Bytes), us(cp.Shader.Median), cp.CmdGBps)
	if h.CopyEndGBps > 0 {
		fmt.Fprintf(w, "; at the end %.1f GB/s again, %.1f GB/s on new buffers", h.CopyEndGBps, h.CopyEndFreshGBps)
	}
	fmt.Fprintf(w, "\ntiming:  GPU timestamps, median (min) of %d runs of K back-to-back kernels, per kernel, after %gms of warm-up", h.Iters, h.WarmupMs)
	if h.Repeat > 1 {
		fmt.Fprintf(w, "; best of %d passes over every kernel", h.Repeat)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "traffic: fwd input+output, bwd input+dy+dx (+argmax: indices+dy+dx); %%copy of the copy bandwidth\n\n")
	// Numbers align right; the shape and op columns are padded to align left.
	sw, ow := len("shape"), len("op")
	for _, r := range rows {
		sw, ow = max(sw, len(r.shape.String())), max(ow, len(r.label()))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tk\ts\tp\td\t%-*s\tfwd µs\tmin\tGB/s\t%%copy\tbwd µs\tmin\tGB/s\t%%copy\t\n", sw, "shape", ow, "op")
	for _, r := range rows {
		s := r.shape
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%d\t%d\t%-*s\t", sw, s, s.K, s.S, r.Pads[0], r.Dilation, ow, r.label())
		if r.Skipped != "" {
			fmt.Fprintf(tw, "skipped: %s\t\n", r.Skipped)
			continue
		}
		fmt.Fprintf(tw, "%.2f\t%.2f\t%.1f\t%.1f\t%.2f\t%.2f\t%.1f\t%.1f\t\n",
			us(r.Fwd.Median), us(r.Fwd.Min), r.FwdGBps, pct(r.FwdGBps, cp.GBps),
			us(r.Bwd.Median), us(r.Bwd.Min), r.BwdGBps, pct(r.BwdGBps, cp.GBps))
	}
	tw.Flush()
	// float16 against float32, when the run timed both.
	first := true
	for _, r := range rows {
		t, ok := float32Twin(rows, r)
		if !ok {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nfloat16 speed-up over float32 (float32 time / float16 time, median):\n")
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "%-*s\t%-*s\tfwd\tbwd\t\n", sw, "shape", ow, "op")
			first = false
		}
		fmt.Fprintf(tw, "%-*s\t%-*s\t%.2fx\t%.2fx\t\n", sw, r.shape, ow, t.label(),
			speedup(t.Fwd.Median, r.Fwd.Median), speedup(t.Bwd.Median, r.Bwd.Median))
	}
	if !first {
		tw.Flush()
	}
}

// benchPlot draws a grouped bar chart, forward and backward per case, of
// GB/s (with the copy bandwidth as a line) or of µs, to path (PNG,
// atomically).
func benchPlot(path string, h benchHeader, rows []benchRow, cp benchCopy, metric string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("vkmps bench: %s, %s %s, %s", h.Device, h.Driver, h.DriverVersion, h.Date[:10])
	n := len(rows)
	fwd, bwd := make(plotter.Values, n), make(plotter.Values, n)
	labels := make([]string, n)
	for i, r := range rows {
		s := r.shape
		labels[i] = fmt.Sprintf("%s %s k%ds%dp%d", r.label(), s, s.K, s.S, r.Pads[0])
		if r.Skipped != "" {
			continue
		}
		if metric == "us" {
			fwd[i], bwd[i] = float64(r.Fwd.Median)/1e3, float64(r.Bwd.Median)/1e3
		} else {
			fwd[i], bwd[i] = r.FwdGBps, r.BwdGBps
		}
	}
	width := vg.Points(10)
	bf, err := plotter.NewBarChart(fwd, width)
	if err != nil {
		return err
	}
	bf.Color, bf.Offset, bf.LineStyle.Width = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, -width/2, 0
	bb, err := plotter.NewBarChart(bwd, width)
	if err != nil {
		return err
	}
	bb.Color, bb.Offset, bb.LineStyle.Width = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, width/2, 0
	p.Add(bf, bb)
	p.Legend.Add("forward", bf)
	p.Legend.Add("backward", bb)
	p.Legend.Top, p.Legend.Left = true, true
	top := 0.0
	for i := range fwd {
		top = max(top, fwd[i], bwd[i])
	}
	if metric == "us" {
		p.Y.Label.Text = "µs per kernel (median, GPU timestamps)"
	} else {
		p.Y.Label.Text = "GB/s (traffic model)"
		line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: cp.GBps}, {X: float64(n) - 0.5, Y: cp.GBps}})
		if err != nil {
			return err
		}
		line.Color, line.Dashes = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("copy %.0f GB/s", cp.GBps), line)
		top = max(top, cp.GBps)
	}
	// Room above the bars and the line for the legend.
	p.Y.Min, p.Y.Max = 0, 1.3*top
	p.NominalX(labels...)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(vg.Length(max(6, 0.45*float64(n)+1.5))*vg.Inch, 6*vg.Inch, "png")
	if err != nil {
		return err
	}
	return tensorio.WriteFile(path, func(w io.Writer) error { _, err := wt.WriteTo(w); return err })
}
