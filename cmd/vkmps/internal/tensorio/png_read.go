package tensorio

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"io"
)

const (
	// MaxPixels is the most pixels a PNG image read or written may have
	// (about 11585 x 11585); larger data goes through .npy.
	MaxPixels = 1 << 27

	// maxPNGFile bounds the bytes read from a PNG stream.
	maxPNGFile = 2 << 30

	// maxDeflateRatio bounds how far deflate can expand data (1032:1 in
	// theory); an image claiming more raw bytes than this times its file
	// size is a decompression bomb.
	maxDeflateRatio = 1100
)

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// ReadPNG decodes a PNG image from r into a (1,C,H,W) tensor of Rank 3
// with values in 0..1, one channel per stored sample (see the package
// documentation). Errors are *Error without a path.
func ReadPNG(r io.Reader) (Tensor, error) {
	if r == nil {
		return Tensor{}, newError(ErrPNG, "no data: nil reader")
	}
	return readPNG(r, nil)
}

// ReadPNGFile reads the PNG image at path; errors name path.
func ReadPNGFile(path string) (Tensor, error) {
	return readFile(nil, path, PNG, nil)
}

// readPNG reads a PNG stream: its signature first (so that a stream that
// is no PNG is refused at once), then the rest, up to maxPNGFile bytes.
func readPNG(r io.Reader, check Check) (Tensor, error) {
	head := make([]byte, len(pngMagic))
	if _, err := io.ReadFull(r, head); err != nil || !bytes.Equal(head, pngMagic) {
		if isInterrupt(err) {
			return Tensor{}, err
		}
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return Tensor{}, newError(ErrPNG, "cannot read: %v", err)
		}
		return Tensor{}, newError(ErrPNG, "not a PNG file: it does not start with the PNG signature")
	}
	rest, err := io.ReadAll(io.LimitReader(r, maxPNGFile+1-int64(len(head))))
	if err != nil {
		if isInterrupt(err) {
			return Tensor{}, err
		}
		return Tensor{}, newError(ErrPNG, "cannot read: %v", err)
	}
	data := append(head, rest...)
	if len(data) > maxPNGFile {
		return Tensor{}, newError(ErrTooLarge, "PNG file larger than %d bytes", maxPNGFile)
	}
	return decodePNG(data, check)
}

// decodePNG decodes a whole PNG file. Its size, its channels and the
// caller's check are settled from the header chunks before any pixel is
// decoded.
func decodePNG(data []byte, check Check) (Tensor, error) {
	// The IHDR chunk comes first: length 13, "IHDR", width, height, bit
	// depth, colour type (PNG spec 11.2.2).
	if !bytes.HasPrefix(data, pngMagic) {
		return Tensor{}, newError(ErrPNG, "not a PNG file: it does not start with the PNG signature")
	}
	if len(data) < 33 || string(data[12:16]) != "IHDR" {
		return Tensor{}, newError(ErrPNG, "%v: no IHDR chunk", ErrPNG)
	}
	depth, ctype := int64(data[24]), data[25]
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Tensor{}, newError(ErrPNG, "%v: %v", ErrPNG, err)
	}
	w, h := int64(cfg.Width), int64(cfg.Height)
	if w < 1 || h < 1 {
		return Tensor{}, newError(ErrShape, "image is %dx%d pixels", w, h)
	}
	if w*h > MaxPixels {
		return Tensor{}, newError(ErrTooLarge, "image is %dx%d pixels, more than %d", w, h, MaxPixels)
	}
	samples := map[byte]int64{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
	raw := h * (1 + (w*samples*depth+7)/8)
	if raw > maxDeflateRatio*int64(len(data)) {
		return Tensor{}, newError(ErrTooLarge, "image claims %dx%d pixels, more than its %d bytes can hold", w, h, len(data))
	}
	channels := pngHeaderChannels(data, ctype)
	if check != nil {
		if err := check(1, channels, int(h), int(w)); err != nil {
			return Tensor{}, err
		}
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return Tensor{}, newError(ErrPNG, "%v: %v", ErrPNG, err)
	}
	ch := pngChannels(ctype, img)
	t := Tensor{N: 1, C: len(ch), H: int(h), W: int(w), Rank: 3}
	t.Data = make([]float32, t.Len())
	fillFromImage(t, img, ch)
	return t, nil
}

// pngHeaderChannels returns the channels the image will have (as
// pngChannels finds them after decoding) from its colour type and its
// tRNS chunk, which comes before the pixel data: grey 1, grey+alpha 2,
// RGB 3, RGBA 4, palette 3 or 4 when its tRNS makes an entry
// transparent; a tRNS colour adds alpha to grey and RGB.
func pngHeaderChannels(data []byte, ctype byte) int {
	var trns []byte
	hasTRNS := false
	for off := 8; off+12 <= len(data); {
		n := int(binary.BigEndian.Uint32(data[off:]))
		typ := string(data[off+4 : off+8])
		if typ == "IDAT" || n < 0 || n > len(data)-off-12 {
			break
		}
		if typ == "tRNS" {
			hasTRNS, trns = true, data[off+8:off+8+n]
		}
		off += 12 + n
	}
	switch ctype {
	case 0:
		if hasTRNS {
			return 2
		}
		return 1
	case 2:
		if hasTRNS {
			return 4
		}
		return 3
	case 3:
		for _, a := range trns {
			if a != 0xff {
				return 4
			}
		}
		return 3
	case 4:
		return 2
	}
	return 4
}

// pngChannels returns which of the NRGBA components (0..3) become
// channels, from the colour type and what the decoder made of it: a
// tRNS chunk turns grey and RGB images into NRGBA ones with alpha.
func pngChannels(ctype byte, img image.Image) []int {
	grey, greyAlpha, rgb, rgba := []int{0}, []int{0, 3}, []int{0, 1, 2}, []int{0, 1, 2, 3}
	switch im := img.(type) {
	case *image.Gray, *image.Gray16:
		return grey
	case *image.RGBA, *image.RGBA64:
		return rgb
	case *image.Paletted:
		for _, c := range im.Palette {
			if _, _, _, a := c.RGBA(); a != 0xffff {
				return rgba
			}
		}
		return rgb
	}
	if ctype == 0 || ctype == 4 {
		return greyAlpha
	}
	return rgba
}

// fillFromImage copies the channels ch of img into t, as v/255 or
// v/65535 rounded once to float32 (the same value for an 8-bit v either
// way, since 257v/65535 = v/255).
func fillFromImage(t Tensor, img image.Image, ch []int) {
	plane := t.H * t.W
	b := img.Bounds()
	switch im := img.(type) {
	case *image.Gray:
		for y := 0; y < t.H; y++ {
			for x, v := range im.Pix[y*im.Stride : y*im.Stride+t.W] {
				t.Data[y*t.W+x] = float32(float64(v) / 255)
			}
		}
		return
	case *image.NRGBA, *image.RGBA:
		// 8-bit, non-premultiplied (RGBA only comes opaque from PNG).
		pix, stride := pixStride(im)
		for y := 0; y < t.H; y++ {
			row := pix[y*stride:]
			for x := 0; x < t.W; x++ {
				for c, k := range ch {
					t.Data[c*plane+y*t.W+x] = float32(float64(row[4*x+k]) / 255)
				}
			}
		}
		return
	}
	for y := 0; y < t.H; y++ {
		for x := 0; x < t.W; x++ {
			p := asNRGBA64(img.At(b.Min.X+x, b.Min.Y+y))
			v := [4]uint16{p.R, p.G, p.B, p.A}
			for c, k := range ch {
				t.Data[c*plane+y*t.W+x] = float32(float64(v[k]) / 65535)
			}
		}
	}
}

// asNRGBA64 returns c's stored, non-premultiplied samples. The colour
// model would go through premultiplied RGBA, which loses the colour of
// transparent pixels (a tRNS palette entry, say) and rounds the rest.
func asNRGBA64(c color.Color) color.NRGBA64 {
	switch c := c.(type) {
	case color.NRGBA:
		return color.NRGBA64{uint16(c.R) * 257, uint16(c.G) * 257, uint16(c.B) * 257, uint16(c.A) * 257}
	case color.NRGBA64:
		return c
	}
	return color.NRGBA64Model.Convert(c).(color.NRGBA64)
}

func pixStride(img image.Image) ([]byte, int) {
	if im, ok := img.(*image.NRGBA); ok {
		return im.Pix, im.Stride
	}
	im := img.(*image.RGBA)
	return im.Pix, im.Stride
}
