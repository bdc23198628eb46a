package panels

import (
	"bytes"
	"context"
	"image/png"
	"math/rand"
	"testing"
	"time"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/demoimage"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

func TestKeys(t *testing.T) {
	s := Defaults()
	for _, step := range []struct {
		key           string
		changed, quit bool
		want          Settings
	}{
		{"k", true, false, Settings{Kernel: 4, Stride: 2, Dilation: 2}},
		{"2", true, false, Settings{Op: 1, Kernel: 4, Stride: 2, Dilation: 2}},
		{"S", true, false, Settings{Op: 1, Kernel: 4, Stride: 1, Dilation: 2}},
		{"S", false, false, Settings{Op: 1, Kernel: 4, Stride: 1, Dilation: 2}}, // at the limit
		{"O", true, false, Settings{Op: 0, Kernel: 4, Stride: 1, Dilation: 2}},
		{"O", true, false, Settings{Op: 3, Kernel: 4, Stride: 1, Dilation: 2}},
		{"d", true, false, Settings{Op: 3, Kernel: 4, Stride: 1, Dilation: 3}},
		{"P", true, false, Settings{Op: 3, Kernel: 4, Stride: 1, Dilation: 3, Padding: len(Paddings) - 1}},
		{"x", false, false, Settings{Op: 3, Kernel: 4, Stride: 1, Dilation: 3, Padding: len(Paddings) - 1}},
		{"r", true, false, Defaults()},
		{"escape", false, true, Defaults()},
		{"q", false, true, Defaults()},
	} {
		changed, quit := s.Key(step.key)
		if changed != step.changed || quit != step.quit || s != step.want {
			t.Fatalf("key %q: changed %v quit %v settings %+v, want %v %v %+v", step.key, changed, quit, s, step.changed, step.quit, step.want)
		}
	}
	if got := Defaults().String(); got != "PoolingMax 3x3 stride 2, padding same" {
		t.Errorf("title %q", got)
	}
	s = Settings{Op: 3, Kernel: 3, Stride: 1, Dilation: 2, Padding: 6}
	if got := s.String(); got != "DilatedPoolingMax 3x3 stride 1 dilation 2, padding pytorch" {
		t.Errorf("title %q", got)
	}
}

func TestLayout(t *testing.T) {
	// RGB 256x256 beside a 128x128 result and a 2x2 heatmap grid.
	l := NewLayout(800, 300, Shape{1, 3, 256, 256}, Shape{1, 3, 128, 128})
	if p := l.Pictures[2]; p.Cols != 2 || p.Width != 513 || p.Height != 513 {
		t.Errorf("heatmap picture %+v", p)
	}
	for i, r := range l.Rects {
		if r.W < 1 || r.X+r.W > 800 || r.Y+r.H > 300 || r.W != (800-4*Margin)/3 {
			t.Errorf("rect %d %+v", i, r)
		}
		if i > 0 && r.X < l.Rects[i-1].X+l.Rects[i-1].W+Margin {
			t.Errorf("rect %d %+v overlaps %+v", i, r, l.Rects[i-1])
		}
	}
	// Too small a canvas draws nothing.
	if l := NewLayout(20, 10, Shape{1, 1, 4, 4}, Shape{1, 1, 2, 2}); l.Rects != [3]Rect{} {
		t.Errorf("tiny canvas: %+v", l.Rects)
	}
}

// demoPicture returns the demo's picture as the viewer reads it.
func demoPicture(t testing.TB) (Shape, []float32) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, demoimage.Render()); err != nil {
		t.Fatal(err)
	}
	x, err := tensorio.ReadPNG(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return Shape{x.N, x.C, x.H, x.W}, x.Data
}

// checkCanvas draws a w x h canvas with r's current results on the GPU
// and compares it with Compose of the CPU reference.
func checkCanvas(t *testing.T, ctx context.Context, dev *vk.Device, r *Renderer, w, h int, order vk.PixelOrder) {
	t.Helper()
	cb, err := dev.NewCommandBuffer()
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	out, l, err := r.Draw(cb, w, h, order)
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Commit(); err != nil {
		t.Fatal(err)
	}
	pix := make([]byte, out.Size)
	if err := out.Buffer.Read(ctx, out.Offset, pix); err != nil {
		t.Fatal(err)
	}
	got, err := FromPixels(pix, w, h, order)
	if err != nil {
		t.Fatal(err)
	}
	y, dx, err := r.Reference()
	if err != nil {
		t.Fatal(err)
	}
	_, x := r.Input()
	want, err := Compose(l, x, y, dx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compare(l, got, want, 2)
	if err != nil {
		t.Fatal(err)
	}
	if m.Pixels > 0 {
		t.Errorf("%v on %dx%d (%v): %d pixels differ by more than 2 levels (per panel %v, worst %d); first: %s",
			r.Settings(), w, h, order, m.Pixels, m.PerPanel, m.Worst, m.First)
	}
}

func TestDrawMatchesReference(t *testing.T) {
	dev := vktest.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, x := demoPicture(t)
	r, err := NewRenderer(ctx, dev, s, x)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	set := Defaults()
	// The viewer's keys, one change at a time: every op and padding.
	for i, key := range []string{"", "2", "3", "4", "d", "p", "p", "1", "k", "k", "s", "p", "p", "p", "p", "3"} {
		set.Key(key)
		if err := r.Update(ctx, set); err != nil {
			t.Fatalf("after key %q (%v): %v", key, set, err)
		}
		// The GPU results themselves, as `vkmps demo` checks them.
		gy, gdx, err := r.Results(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wy, wdx, err := r.Reference()
		if err != nil {
			t.Fatal(err)
		}
		if maxAbsDiff(gy, wy) > 2e-5 || maxAbsDiff(gdx, wdx) > 2e-5 {
			t.Errorf("%v: GPU differs from the reference by %g (y) and %g (dx)", set, maxAbsDiff(gy, wy), maxAbsDiff(gdx, wdx))
		}
		w, h := 613, 211
		if i%3 == 1 {
			w, h = 1184, 400
		}
		order := vk.PixelBGRA
		if i%2 == 1 {
			order = vk.PixelRGBA
		}
		checkCanvas(t, ctx, dev, r, w, h, order)
	}
}

// TestDrawGrids draws pictures that are not RGB: grey, two channels, and
// five channels of two batch items, with values outside [0, 1].
func TestDrawGrids(t *testing.T) {
	dev := vktest.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rng := rand.New(rand.NewSource(11))
	for _, s := range []Shape{{1, 1, 37, 23}, {1, 2, 16, 31}, {2, 5, 19, 17}} {
		data := make([]float32, s.N*s.C*s.H*s.W)
		for i := range data {
			data[i] = float32(rng.NormFloat64() * 3)
		}
		r, err := NewRenderer(ctx, dev, s, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range []Settings{Defaults(), {Op: 2, Kernel: 2, Stride: 1, Dilation: 2, Padding: 2}} {
			if err := r.Update(ctx, set); err != nil {
				t.Fatalf("%v: %v", set, err)
			}
			checkCanvas(t, ctx, dev, r, 500, 307, vk.PixelBGRA)
		}
		r.Close()
	}
}

// TestUpdateErrorKeepsResults: settings the picture cannot take leave the
// previous results.
func TestUpdateErrorKeepsResults(t *testing.T) {
	dev := vktest.Open(t)
	ctx := context.Background()
	r, err := NewRenderer(ctx, dev, Shape{1, 1, 4, 4}, make([]float32, 16))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Update(ctx, Defaults()); err != nil {
		t.Fatal(err)
	}
	bad := Settings{Op: 0, Kernel: 9, Stride: 1, Dilation: 1, Padding: 2} // a 9x9 window, valid, on 4x4
	if err := r.Update(ctx, bad); err == nil {
		t.Fatalf("%v on a 4x4 picture: no error", bad)
	}
	if r.Settings() != Defaults() {
		t.Errorf("settings %v after a failed update", r.Settings())
	}
	if _, y := r.Shapes(); y != (Shape{1, 1, 2, 2}) {
		t.Errorf("result shape %v", y)
	}
}

func maxAbsDiff(a, b []float32) float64 {
	m := 0.0
	for i := range min(len(a), len(b)) {
		d := float64(a[i]) - float64(b[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
	}
	if len(a) != len(b) {
		return 1e9
	}
	return m
}
