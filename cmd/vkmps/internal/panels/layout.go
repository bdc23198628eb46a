package panels

import "math"

// Canvas constants (view_panels.comp has the same background).
const (
	Margin     = 8  // pixels around and between the panels
	Background = 24 // grey level of the canvas behind the panels
)

// Shape is a tensor's N, C, H, W.
type Shape struct{ N, C, H, W int }

// Picture is how a tensor is drawn before scaling, as the demo's PNGs
// (cmd/vkmps/internal/tensorio): Panels grid cells of H x W pixels in
// Cols columns, 1 pixel apart, batch items stacked 1 pixel apart.
type Picture struct {
	Shape
	Panels, Cols  int
	Width, Height int
}

// PictureOf returns the picture of a tensor of shape s: an image (RGB for
// 3 or 4 channels, else one grey panel per channel) or a heatmap (one
// panel per channel).
func PictureOf(s Shape, heatmap bool) Picture {
	p := Picture{Shape: s, Panels: s.C}
	if !heatmap && (s.C == 3 || s.C == 4) {
		p.Panels = 1
	}
	p.Cols = int(math.Ceil(math.Sqrt(float64(p.Panels))))
	rows := (p.Panels + p.Cols - 1) / p.Cols
	p.Width = p.Cols*s.W + p.Cols - 1
	itemH := rows*s.H + rows - 1
	p.Height = s.N*itemH + s.N - 1
	return p
}

// Rect is where a picture is drawn: its top-left pixel and size.
type Rect struct{ X, Y, W, H int }

// Layout is a canvas of Width x Height pixels: Pictures[i] drawn at
// Rects[i] for the input (0), the result (1) and the gradient (2). A rect
// of width or height 0 is not drawn (the canvas is too small).
type Layout struct {
	Width, Height int
	Pictures      [3]Picture
	Rects         [3]Rect
}

// NewLayout lays out the panels for an input of shape x and a result of
// shape y on a canvas of w x h pixels.
func NewLayout(w, h int, x, y Shape) Layout {
	l := Layout{Width: w, Height: h}
	l.Pictures = [3]Picture{PictureOf(x, false), PictureOf(y, false), PictureOf(x, true)}
	aw, ah := (w-4*Margin)/3, h-2*Margin
	if aw < 1 || ah < 1 {
		return l
	}
	for i, p := range l.Pictures {
		// The largest size of the picture's aspect that fits aw x ah.
		dw, dh := aw, p.Height*aw/p.Width
		if p.Width*ah <= p.Height*aw {
			dw, dh = p.Width*ah/p.Height, ah
		}
		if dw < 1 || dh < 1 {
			continue
		}
		l.Rects[i] = Rect{X: Margin + i*(aw+Margin) + (aw-dw)/2, Y: Margin + (ah-dh)/2, W: dw, H: dh}
	}
	return l
}

// Source returns the picture pixel that canvas pixel (px, py) shows in
// panel i (nearest neighbour, the shader's integer formula), and whether
// (px, py) lies in the panel at all.
func (l Layout) Source(i, px, py int) (sx, sy int, ok bool) {
	r := l.Rects[i]
	if r.W < 1 || r.H < 1 || px < r.X || py < r.Y || px >= r.X+r.W || py >= r.Y+r.H {
		return 0, 0, false
	}
	p := l.Pictures[i]
	return (px - r.X) * p.Width / r.W, (py - r.Y) * p.Height / r.H, true
}
