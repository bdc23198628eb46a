package tensorio

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
)

// gap is the width of the black lines between panels and batch items.
const gap = 1

// WritePNG draws t as a picture normalised over the whole tensor (min →
// 0, max → 255) and encodes it to w: 1 channel grey, 3 RGB, 4 RGBA, other
// channel counts a grid of grey panels; batch items stacked vertically.
// See the package documentation for the details.
func WritePNG(w io.Writer, t Tensor) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if w == nil {
		return newError(ErrOutput, "nil writer")
	}
	lo, hi := finiteRange(t.Data)
	level := func(v float32) uint8 {
		switch {
		case math.IsNaN(float64(v)) || math.IsInf(float64(v), -1):
			return 0
		case math.IsInf(float64(v), 1):
			return 255
		case hi == lo:
			return 128
		}
		return uint8(math.Round((float64(v) - lo) / (hi - lo) * 255))
	}
	if t.C != 3 && t.C != 4 {
		// Grey: one panel per item for C == 1, else one per channel.
		g, err := newGrid(t, t.C)
		if err != nil {
			return err
		}
		img := image.NewGray(image.Rect(0, 0, g.width, g.height))
		g.each(func(i, x, y, n, c int) {
			img.Pix[y*img.Stride+x] = level(t.Data[i])
		})
		return png.Encode(w, img)
	}
	// RGB or RGBA: one panel per item, channel c is component c. The
	// pixels start opaque black, which the gaps keep.
	g, err := newGrid(t, 1)
	if err != nil {
		return err
	}
	r := image.Rect(0, 0, g.width, g.height)
	var img image.Image
	var pix []uint8
	var stride int
	if t.C == 3 {
		im := image.NewRGBA(r)
		img, pix, stride = im, im.Pix, im.Stride
	} else {
		im := image.NewNRGBA(r)
		img, pix, stride = im, im.Pix, im.Stride
	}
	opaque(pix)
	g.each(func(i, x, y, n, c int) {
		pix[y*stride+4*x+c] = level(t.Data[i])
	})
	return png.Encode(w, img)
}

// WriteHeatmapPNG draws t as a gradient heatmap and encodes it to w: one
// panel per channel, blue (0,0,255) at -s, white at 0, red (255,0,0) at
// +s with s = max|v| over the whole tensor, NaN green. See the package
// documentation.
func WriteHeatmapPNG(w io.Writer, t Tensor) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if w == nil {
		return newError(ErrOutput, "nil writer")
	}
	lo, hi := finiteRange(t.Data)
	s := math.Max(math.Abs(lo), math.Abs(hi))
	g, err := newGrid(t, t.C)
	if err != nil {
		return err
	}
	img := image.NewRGBA(image.Rect(0, 0, g.width, g.height))
	opaque(img.Pix)
	g.each(func(i, x, y, n, c int) {
		img.SetRGBA(x, y, Diverging(float64(t.Data[i]), s))
	})
	return png.Encode(w, img)
}

// Diverging returns the heatmap colour of v on the symmetric scale
// [-s, s]: blue (0,0,255) at -s, white at 0, red (255,0,0) at +s, linear
// in between and clamped outside; -Inf and +Inf are blue and red, NaN
// green (0,255,0). With s <= 0 every finite number is white.
func Diverging(v, s float64) color.RGBA {
	var t float64 // v on [-1, 1]
	switch {
	case math.IsNaN(v):
		return color.RGBA{0, 255, 0, 255}
	case math.IsInf(v, 0):
		t = math.Copysign(1, v)
	case s > 0:
		t = math.Max(-1, math.Min(1, v/s))
	}
	c := uint8(math.Round(255 * (1 - math.Abs(t))))
	if t < 0 {
		return color.RGBA{c, c, 255, 255}
	}
	return color.RGBA{255, c, c, 255}
}

// finiteRange returns the least and greatest finite values of data, or
// (0, 0) when none is finite.
func finiteRange(data []float32) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range data {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		lo, hi = math.Min(lo, f), math.Max(hi, f)
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// opaque sets the alpha of every RGBA pixel in pix to 255.
func opaque(pix []uint8) {
	for i := 3; i < len(pix); i += 4 {
		pix[i] = 255
	}
}

// grid lays out panels of H x W pixels: panels per batch item in
// ceil(sqrt(panels)) columns, items stacked vertically, gap pixels apart.
type grid struct {
	t             Tensor
	panels, cols  int
	itemHeight    int
	width, height int
}

func newGrid(t Tensor, panels int) (grid, error) {
	cols := int(math.Ceil(math.Sqrt(float64(panels))))
	rows := (panels + cols - 1) / cols
	g := grid{t: t, panels: panels, cols: cols}
	g.width = cols*t.W + (cols-1)*gap
	g.itemHeight = rows*t.H + (rows-1)*gap
	// Check in float64: the sums can overflow int for absurd shapes.
	if float64(g.width)*(float64(t.N)*float64(g.itemHeight)+float64(t.N-1)*gap) > MaxPixels {
		return grid{}, newError(ErrTooLarge, "a PNG of %s is more than %d pixels: write .npy instead", t.ShapeString(), MaxPixels)
	}
	g.height = t.N*g.itemHeight + (t.N-1)*gap
	return g, nil
}

// each calls f for every element of the tensor with its index i in
// Data, its pixel (x, y), and its batch item n and channel c. With one
// panel per item, every channel maps to the same pixel.
func (g grid) each(f func(i, x, y, n, c int)) {
	t := g.t
	i := 0
	for n := 0; n < t.N; n++ {
		for c := 0; c < t.C; c++ {
			p := 0
			if g.panels > 1 {
				p = c
			}
			x0 := (p % g.cols) * (t.W + gap)
			y0 := n*(g.itemHeight+gap) + (p/g.cols)*(t.H+gap)
			for y := 0; y < t.H; y++ {
				for x := 0; x < t.W; x++ {
					f(i, x0+x, y0+y, n, c)
					i++
				}
			}
		}
	}
}
