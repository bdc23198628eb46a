package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/progress"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/graph"
)

// trainLoop runs training steps on a compiled graph whose runs each take
// one step (forward, gradients, updates: Graph.Optimize): it feeds a fixed
// batch or mini-batches of a data set, keeps the GPU busy by preparing and
// submitting step k+1 before waiting for step k (a pipelined executor),
// and logs, draws and reports the loss.
type trainLoop struct {
	ex    *graph.Executor
	loss  string // the loss image's name
	steps int
	// feeds is the fixed batch of every step, or nil with batches.
	feeds   map[string][]float32
	batches *graph.Batches
	// log receives {"step": i, "loss": v} lines; nil for none.
	log io.Writer
	bar *progress.Bar
	// afterEpoch runs when the steps of an epoch (of batches) are done.
	afterEpoch func(ctx context.Context, epoch int) error
	// afterStep sees each step's loss (the forward's, before its update).
	afterStep func(step int, loss float64)

	losses []float64
	wait   time.Duration // host time spent waiting for the GPU
	gpu    time.Duration // GPU time of the steps (executor with Timestamps)
	// stepGPU is each step's GPU time (executor with Timestamps), in
	// order.
	stepGPU []time.Duration
	wall    time.Duration // the steps' wall time (evaluations excluded)
	evals   time.Duration
}

// stepRecord is one line of --log.
type stepRecord struct {
	Step  int     `json:"step"`
	Loss  float64 `json:"loss"`
	Epoch *int    `json:"epoch,omitempty"`
}

// next returns the feeds of the next step and its epoch.
func (l *trainLoop) next(buf map[string][]float32) (map[string][]float32, int, error) {
	if l.batches == nil {
		return l.feeds, 0, nil
	}
	ep, err := l.batches.Next(buf)
	return buf, ep, err
}

// run takes the steps.
func (l *trainLoop) run(ctx context.Context) error {
	start := time.Now()
	defer func() { l.wall = time.Since(start) - l.evals }()
	buf := map[string][]float32{} // Start copies the feeds at once: one buffer serves
	feeds, epoch, err := l.next(buf)
	if err != nil {
		return err
	}
	pend, err := l.ex.Start(ctx, feeds)
	if err != nil {
		return err
	}
	for step := 1; step <= l.steps; step++ {
		var next *graph.Pending
		var nextFeeds map[string][]float32
		nextEpoch := epoch
		if step < l.steps {
			// Prepare and submit step+1 while step runs on the GPU, unless
			// an epoch ends first and must be evaluated.
			if nextFeeds, nextEpoch, err = l.next(buf); err != nil {
				return err
			}
			if nextEpoch == epoch || l.afterEpoch == nil {
				if next, err = l.ex.Start(ctx, nextFeeds); err != nil {
					return err
				}
			}
		}
		w := time.Now()
		out, err := pend.Wait(ctx)
		l.wait += time.Since(w)
		if err != nil {
			return err
		}
		l.gpu += pend.GPUTime()
		l.stepGPU = append(l.stepGPU, pend.GPUTime())
		v := float64(out[l.loss][0])
		l.losses = append(l.losses, v)
		if l.log != nil {
			rec := stepRecord{Step: step, Loss: v}
			if l.batches != nil {
				e := epoch + 1
				rec.Epoch = &e
			}
			b, _ := json.Marshal(rec)
			if _, err := fmt.Fprintf(l.log, "%s\n", b); err != nil {
				return fmt.Errorf("--log: %w", err)
			}
		}
		if l.afterStep != nil {
			l.afterStep(step, v)
		}
		l.bar.Describe(fmt.Sprintf("step %d/%d loss %.4g", step, l.steps, l.runningLoss()))
		l.bar.Add(1)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("training diverged: the loss of step %d is %v (try a lower --lr)", step, v)
		}
		if step < l.steps && next == nil {
			if err := l.evaluate(ctx, epoch); err != nil {
				return err
			}
			if next, err = l.ex.Start(ctx, nextFeeds); err != nil {
				return err
			}
		}
		pend, epoch = next, nextEpoch
	}
	if l.afterEpoch != nil && l.batches != nil {
		return l.evaluate(ctx, epoch)
	}
	return nil
}

// evaluate runs afterEpoch, its time kept out of the steps' wall time.
func (l *trainLoop) evaluate(ctx context.Context, epoch int) error {
	t := time.Now()
	err := l.afterEpoch(ctx, epoch)
	l.evals += time.Since(t)
	return err
}

// runningLoss is the mean of the last (up to) 20 losses.
func (l *trainLoop) runningLoss() float64 {
	n := min(20, len(l.losses))
	s := 0.0
	for _, v := range l.losses[len(l.losses)-n:] {
		s += v
	}
	return s / float64(max(n, 1))
}

// plotCurves draws the loss of every step (thin) with its running mean
// over plotSmooth steps (thick) to path; when extra is given (one value
// per epoch in [0, 1], such as the test accuracy), a second panel below
// shows it in percent per epoch, each point labelled.
func plotCurves(path, title string, losses []float64, extraName string, extra []float64) error {
	top := plot.New()
	top.Title.Text = title
	top.X.Label.Text = "step"
	top.Y.Label.Text = "training loss"
	top.Add(plotter.NewGrid())
	raw := make(plotter.XYs, len(losses))
	mean := make(plotter.XYs, len(losses))
	sum := 0.0
	for i, v := range losses {
		raw[i].X, raw[i].Y = float64(i+1), v
		sum += v
		if i >= plotSmooth {
			sum -= losses[i-plotSmooth]
		}
		mean[i].X, mean[i].Y = float64(i+1), sum/float64(min(i+1, plotSmooth))
	}
	thin, err := plotter.NewLine(raw)
	if err != nil {
		return err
	}
	thin.Color = color.RGBA{R: 0x9e, G: 0xc5, B: 0xe8, A: 0xff}
	thick, err := plotter.NewLine(mean)
	if err != nil {
		return err
	}
	thick.Color, thick.Width = color.RGBA{R: 0x1f, G: 0x4e, B: 0x99, A: 0xff}, vg.Points(1.5)
	top.Add(thin, thick)
	top.Legend.Add("per step", thin)
	top.Legend.Add(fmt.Sprintf("mean of %d steps", plotSmooth), thick)
	top.Legend.Top = true
	plots := [][]*plot.Plot{{top}}
	height := 5 * vg.Inch
	if len(extra) > 0 {
		low := plot.New()
		low.X.Label.Text = "epoch"
		low.Y.Label.Text = extraName + " (%)"
		low.Add(plotter.NewGrid())
		pts := make(plotter.XYs, len(extra))
		labels := make([]string, len(extra))
		for i, v := range extra {
			pts[i].X, pts[i].Y = float64(i+1), 100*v
			labels[i] = fmt.Sprintf("%.2f%%", 100*v)
		}
		line, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
		sc.Color, sc.Shape = line.Color, draw.CircleGlyph{}
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels})
		if err != nil {
			return err
		}
		lab.Offset = vg.Point{Y: vg.Points(5)}
		for i := range lab.TextStyle {
			lab.TextStyle[i].YAlign = draw.YBottom
			lab.TextStyle[i].XAlign = draw.XCenter
		}
		low.Add(line, sc, lab)
		low.X.Min, low.X.Max = 0.5, float64(len(extra))+0.5
		low.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
			var ts []plot.Tick
			for e := 1; e <= len(extra); e++ {
				ts = append(ts, plot.Tick{Value: float64(e), Label: fmt.Sprint(e)})
			}
			return ts
		})
		lo, hi := pts[0].Y, pts[0].Y
		for _, q := range pts {
			lo, hi = min(lo, q.Y), max(hi, q.Y)
		}
		pad := max((hi-lo)*0.25, 0.5)
		low.Y.Min, low.Y.Max = lo-pad, min(hi+pad, 100)
		plots = append(plots, []*plot.Plot{low})
		height = 8 * vg.Inch
	}
	img := vgimg.New(9*vg.Inch, height)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(12), PadY: vg.Points(18)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	return tensorio.WriteFile(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}

// plotSmooth is the window of the loss plot's running mean.
const plotSmooth = 50

// openLog creates the --log file (refusing an input), or returns nil.
func openLog(path string, inputs ...string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	if err := tensorio.CheckOutput(path, inputs...); err != nil {
		return nil, err
	}
	return os.Create(path)
}
