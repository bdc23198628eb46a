// Package demoimage draws the picture `vkmps demo` pools: a small
// landscape (a sky gradient, a sun, mountains, a house, a checkerboard
// field and a band of colour bars) with sharp edges, smooth gradients and
// fine texture, so that every pooling kernel and its gradient show
// something different. Render uses integer arithmetic only, so it draws
// the same pixels on every machine; the render command writes the PNG
// that cmd/vkmps embeds (go generate in cmd/vkmps).
package demoimage

import (
	"image"
	"image/color"
)

// Size is the side of the picture in pixels.
const Size = 256

// Render returns the Size x Size opaque RGB picture.
func Render() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, Size, Size))
	for y := range Size {
		for x := range Size {
			img.SetNRGBA(x, y, pixel(x, y))
		}
	}
	return img
}

const (
	horizon = 150 // first row of the field
	barsTop = 232 // first row of the colour bars
)

// pixel is the colour at (x, y), drawn back to front.
func pixel(x, y int) color.NRGBA {
	switch {
	case y >= barsTop:
		return bar(x, y)
	case y >= horizon:
		return field(x, y)
	}
	c := sky(y)
	// The sun: a disc with a darker rim.
	if d := sq(x-190) + sq(y-58); d <= sq(30) {
		c = color.NRGBA{255, 214, 40, 255}
		if d > sq(26) {
			c = color.NRGBA{240, 120, 20, 255}
		}
	}
	// Two mountains, the nearer one in front, with snow caps.
	if m, ok := mountain(x, y, 105, 58, 90, color.NRGBA{120, 85, 165, 255}); ok {
		c = m
	}
	if m, ok := mountain(x, y, 168, 75, 70, color.NRGBA{60, 130, 95, 255}); ok {
		c = m
	}
	// A house: a red wall with a window and a door, and a brown roof.
	switch {
	case x >= 16 && x < 76 && y >= 110 && y < horizon:
		c = color.NRGBA{200, 40, 40, 255}
		if x >= 26 && x < 44 && y >= 118 && y < 134 {
			c = color.NRGBA{250, 250, 230, 255}
			if x == 34 || x == 35 || y == 125 || y == 126 {
				c = color.NRGBA{60, 40, 30, 255} // window bars
			}
		}
		if x >= 52 && x < 66 && y >= 124 {
			c = color.NRGBA{90, 55, 30, 255}
		}
	case y >= 80 && y < 110 && abs(x-46) <= (y-80)*35/30:
		c = color.NRGBA{120, 70, 40, 255}
	}
	return c
}

// sky fades from deep blue at the top to orange at the horizon.
func sky(y int) color.NRGBA {
	t := y * 255 / horizon
	return color.NRGBA{uint8(20 + t*220/255), uint8(40 + t*110/255), uint8(140 - t*100/255), 255}
}

// mountain is a triangle with its peak at (px, horizon-height) and
// half-width at the base halfBase, in colour c with white above a snow
// line near the peak.
func mountain(x, y, px, height, halfBase int, c color.NRGBA) (color.NRGBA, bool) {
	top := horizon - height
	if y < top || y >= horizon || abs(x-px)*height > (y-top)*halfBase {
		return color.NRGBA{}, false
	}
	if y-top < height/5 {
		return color.NRGBA{245, 245, 250, 255}, true
	}
	// Shade the left flank.
	if x < px {
		c.R, c.G, c.B = uint8(int(c.R)*4/5), uint8(int(c.G)*4/5), uint8(int(c.B)*4/5)
	}
	return c, true
}

// field is a checkerboard of grass whose squares grow towards the viewer,
// with a path of yellow tiles.
func field(x, y int) color.NRGBA {
	side := 6 + (y-horizon)/6
	if (x/side+(y-horizon)/side)%2 == 0 {
		return color.NRGBA{70, 160, 60, 255}
	}
	if abs(x-128) < 10+(y-horizon)/2 && ((x+y)/4)%2 == 0 {
		return color.NRGBA{230, 200, 80, 255}
	}
	return color.NRGBA{30, 100, 40, 255}
}

// bar is one of eight colour bars, a hue wheel in steps, fading to black
// at the bottom edge.
func bar(x, y int) color.NRGBA {
	colours := [8]color.NRGBA{
		{255, 0, 0, 255}, {255, 128, 0, 255}, {255, 255, 0, 255}, {0, 200, 0, 255},
		{0, 200, 200, 255}, {0, 0, 255, 255}, {128, 0, 255, 255}, {255, 0, 200, 255},
	}
	c := colours[x*8/Size]
	k := Size - 1 - y // 0 on the last row
	scale := min(k*255/(Size-1-barsTop), 255)
	c.R, c.G, c.B = uint8(int(c.R)*scale/255), uint8(int(c.G)*scale/255), uint8(int(c.B)*scale/255)
	return c
}

func sq(v int) int { return v * v }

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
