package panels

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/vk"
)

// Reference computes on the CPU (ops/ref) what the last Update computed:
// the forward result and the gradient with dy = y, with the geometry the
// GPU encode resolved (the gradient state).
func (r *Renderer) Reference() (y, dx []float32, err error) {
	if !r.valid {
		return nil, nil, fmt.Errorf("panels: Reference before a successful Update")
	}
	st := r.state
	g := st.Geometry
	kind := map[ops.PoolingKind]ref.Kind{ops.KindMax: ref.Max, ops.KindAverage: ref.Average,
		ops.KindL2Norm: ref.L2Norm, ops.KindDilatedMax: ref.DilatedMax}[st.Kind]
	geom := ref.Geometry{Kind: kind, KernelW: g.KernelWidth, KernelH: g.KernelHeight,
		StrideX: g.StrideX, StrideY: g.StrideY, DilationX: g.DilationX, DilationY: g.DilationY,
		OffsetX: st.Offset.X, OffsetY: st.Offset.Y, OffsetZ: st.Offset.Z, EdgeMode: st.EdgeMode,
		ZeroPad: st.ZeroPad, ExcludeEdges: st.ExcludeEdges, Pads: st.EdgePads,
		Clip: ref.Clip{X: st.Clip.X, Y: st.Clip.Y, Z: st.Clip.Z, W: st.Clip.Width, H: st.Clip.Height, D: st.Clip.Depth}}
	xs := r.xShape
	_, ys := r.Shapes()
	in, err := ref.TensorOf(xs.N, xs.C, xs.H, xs.W, r.xData)
	if err != nil {
		return nil, nil, err
	}
	want := ref.NewTensor[float32](ys.N, ys.C, ys.H, ys.W)
	if err := ref.Pool(geom, in, &want); err != nil {
		return nil, nil, err
	}
	wantDx := ref.NewTensor[float32](xs.N, xs.C, xs.H, xs.W)
	if err := ref.PoolGradient(geom, in, want, &wantDx); err != nil {
		return nil, nil, err
	}
	return want.Data, wantDx.Data, nil
}

// Compose draws the canvas of layout l on the CPU from the input x, the
// result y and the gradient dx, each picture rendered by tensorio exactly
// as `vkmps demo` writes its PNGs, then scaled as the GPU scales it.
func Compose(l Layout, x, y, dx []float32) (*image.RGBA, error) {
	var pics [3]image.Image
	for i, t := range []struct {
		data    []float32
		heatmap bool
	}{{x, false}, {y, false}, {dx, true}} {
		s := l.Pictures[i].Shape
		tt := tensorio.Tensor{N: s.N, C: s.C, H: s.H, W: s.W, Data: t.data}
		var buf bytes.Buffer
		write := tensorio.WritePNG
		if t.heatmap {
			write = tensorio.WriteHeatmapPNG
		}
		if err := write(&buf, tt); err != nil {
			return nil, err
		}
		im, err := png.Decode(&buf)
		if err != nil {
			return nil, err
		}
		if b := im.Bounds(); b.Dx() != l.Pictures[i].Width || b.Dy() != l.Pictures[i].Height {
			return nil, fmt.Errorf("panels: picture %d is %dx%d, the layout says %dx%d", i, b.Dx(), b.Dy(), l.Pictures[i].Width, l.Pictures[i].Height)
		}
		pics[i] = im
	}
	out := image.NewRGBA(image.Rect(0, 0, l.Width, l.Height))
	bg := color.RGBA{Background, Background, Background, 255}
	for py := 0; py < l.Height; py++ {
		for px := 0; px < l.Width; px++ {
			c := bg
			for i, pic := range pics {
				if sx, sy, ok := l.Source(i, px, py); ok {
					c = opaqueRGB(pic.At(sx, sy))
				}
			}
			out.SetRGBA(px, py, c)
		}
	}
	return out, nil
}

// opaqueRGB returns c's colour channels, unpremultiplied, opaque (the
// viewer ignores alpha).
func opaqueRGB(c color.Color) color.RGBA {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return color.RGBA{n.R, n.G, n.B, 255}
}

// FromPixels converts w x h pixels of 4 bytes in order (a readback of a
// swapchain image or the canvas buffer) to an opaque image.
func FromPixels(pix []byte, w, h int, order vk.PixelOrder) (*image.RGBA, error) {
	if len(pix) < w*h*4 {
		return nil, fmt.Errorf("panels: %d bytes for %dx%d pixels", len(pix), w, h)
	}
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	copy(im.Pix, pix[:w*h*4])
	for i := 0; i < len(im.Pix); i += 4 {
		if order == vk.PixelBGRA {
			im.Pix[i], im.Pix[i+2] = im.Pix[i+2], im.Pix[i]
		}
		im.Pix[i+3] = 255
	}
	return im, nil
}

// Mismatch summarises a comparison of two canvases.
type Mismatch struct {
	Pixels   int    // pixels with a channel off by more than the tolerance
	Worst    int    // the largest channel difference
	First    string // where the first such pixel is, and its colours
	PerPanel [4]int // bad pixels in panels 0..2 and (3) the background
}

// Compare compares got with want, channel by channel, allowing tol levels
// of difference (rounding of the normalisation: the GPU computes in
// float32 from its own results, the CPU in float64 from the reference's).
func Compare(l Layout, got, want *image.RGBA, tol int) (Mismatch, error) {
	var m Mismatch
	if got.Bounds() != want.Bounds() {
		return m, fmt.Errorf("panels: got a %v picture, want %v", got.Bounds().Size(), want.Bounds().Size())
	}
	for py := 0; py < l.Height; py++ {
		for px := 0; px < l.Width; px++ {
			a, b := got.RGBAAt(px, py), want.RGBAAt(px, py)
			d := max(absDiff(a.R, b.R), absDiff(a.G, b.G), absDiff(a.B, b.B))
			m.Worst = max(m.Worst, d)
			if d <= tol {
				continue
			}
			m.Pixels++
			panel := 3
			for i := range 3 {
				if _, _, ok := l.Source(i, px, py); ok {
					panel = i
				}
			}
			m.PerPanel[panel]++
			if m.First == "" {
				m.First = fmt.Sprintf("pixel (%d, %d) in %s: got %v, want %v", px, py, PanelName(panel), a, b)
			}
		}
	}
	return m, nil
}

// PanelName names panel i (3: the background).
func PanelName(i int) string {
	return [...]string{"the input panel", "the result panel", "the gradient panel", "the background"}[i]
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}
