package tensorio_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// TestReadPNGChannels checks the channel count and values for every PNG
// colour type: one channel per stored sample, v/255 or v/65535.
func TestReadPNGChannels(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 3, 2))
	copy(gray.Pix, []uint8{0, 51, 255, 1, 128, 254})

	gray16 := image.NewGray16(image.Rect(0, 0, 2, 1))
	gray16.SetGray16(0, 0, color.Gray16{65535})
	gray16.SetGray16(1, 0, color.Gray16{1})

	rgb := image.NewRGBA(image.Rect(0, 0, 2, 1)) // opaque: written as RGB
	rgb.SetRGBA(0, 0, color.RGBA{255, 0, 51, 255})
	rgb.SetRGBA(1, 0, color.RGBA{1, 2, 3, 255})

	rgba := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	rgba.SetNRGBA(0, 0, color.NRGBA{255, 0, 51, 0})
	rgba.SetNRGBA(1, 0, color.NRGBA{1, 2, 3, 255})

	rgba16 := image.NewNRGBA64(image.Rect(0, 0, 1, 1))
	rgba16.SetNRGBA64(0, 0, color.NRGBA64{65535, 0, 257, 1})

	pal := image.NewPaletted(image.Rect(0, 0, 2, 1), color.Palette{color.RGBA{255, 0, 0, 255}, color.RGBA{0, 0, 51, 255}})
	pal.SetColorIndex(1, 0, 1)

	const s = 1.0 / 255
	tests := []struct {
		name string
		file []byte
		c    int
		want []float32 // channel planes
	}{
		{"grey", encodePNG(t, gray), 1, []float32{0, 51 * s, 1, s, 128 * s, 254 * s}},
		{"grey 16-bit", encodePNG(t, gray16), 1, []float32{1, 1.0 / 65535}},
		{"grey+alpha", rawPNG(2, 1, 8, 4, [][]byte{{10, 255, 20, 0}}), 2, []float32{10 * s, 20 * s, 1, 0}},
		{"grey+alpha 16-bit", rawPNG(1, 1, 16, 4, [][]byte{{0, 1, 255, 255}}), 2, []float32{1.0 / 65535, 1}},
		{"grey tRNS", rawPNG(2, 1, 8, 0, [][]byte{{7, 9}}, "tRNS", "\x00\x09"), 2, []float32{7 * s, 9 * s, 1, 0}},
		{"grey 1-bit", rawPNG(3, 1, 1, 0, [][]byte{{0b10100000}}), 1, []float32{1, 0, 1}},
		{"RGB", encodePNG(t, rgb), 3, []float32{1, s, 0, 2 * s, 51 * s, 3 * s}},
		{"RGB tRNS", rawPNG(1, 1, 8, 2, [][]byte{{1, 2, 3}}, "tRNS", "\x00\x01\x00\x02\x00\x03"), 4, []float32{s, 2 * s, 3 * s, 0}},
		{"RGBA", encodePNG(t, rgba), 4, []float32{1, s, 0, 2 * s, 51 * s, 3 * s, 0, 1}},
		{"RGBA 16-bit", encodePNG(t, rgba16), 4, []float32{1, 0, 257.0 / 65535, 1.0 / 65535}},
		{"palette", encodePNG(t, pal), 3, []float32{1, 0, 0, 0, 0, 51 * s}},
		{"palette with alpha", rawPNG(3, 1, 8, 3, [][]byte{{0, 1, 2}}, "PLTE", "\xff\x00\x00\x00\x00\x33\x01\x02\x03", "tRNS", "\xff\x00\x80"),
			4, []float32{1, 0, s, 0, 0, 2 * s, 0, 51 * s, 3 * s, 1, 0, 128 * s}},
		{"palette with an opaque tRNS", rawPNG(2, 1, 8, 3, [][]byte{{0, 1}}, "PLTE", "\xff\x00\x00\x00\x00\x33", "tRNS", "\xff"),
			3, []float32{1, 0, 0, 0, 0, 51 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := tensorio.ReadPNG(bytes.NewReader(tt.file))
			require.NoError(t, err)
			assert.Equal(t, 1, x.N)
			assert.Equal(t, tt.c, x.C)
			assert.Equal(t, 3, x.Rank, "a PNG is (C,H,W)")
			assert.Equal(t, x.N*x.C*x.H*x.W, len(x.Data))
			assert.InDeltaSlice(t, tt.want, x.Data, 1e-7)

			// The check sees the channels before the pixels are decoded.
			path := filepath.Join(t.TempDir(), "x.png")
			require.NoError(t, os.WriteFile(path, tt.file, 0o644))
			var seen [4]int
			y, err := tensorio.ReadContext(context.Background(), path, func(n, c, h, w int) error {
				seen = [4]int{n, c, h, w}
				return nil
			})
			require.NoError(t, err)
			assert.Equal(t, [4]int{1, tt.c, x.H, x.W}, seen)
			assert.Equal(t, x.Data, y.Data)
		})
	}
}

func TestReadPNGErrors(t *testing.T) {
	hugeIHDR := rawPNG(100000, 100000, 8, 0, nil)
	bomb := rawPNG(10000, 10000, 8, 0, nil)
	valid := rawPNG(2, 2, 8, 0, [][]byte{{1, 2}, {3, 4}})
	tests := []struct {
		name  string
		file  []byte
		class error
		msg   string
	}{
		{"empty", nil, tensorio.ErrPNG, "not a PNG file: it does not start with the PNG signature"},
		{"npy", npyBytes("<f4", false, []int{1, 1}, make([]byte, 4)), tensorio.ErrPNG, "not a PNG file: it does not start with the PNG signature"},
		{"signature only", valid[:8], tensorio.ErrPNG, "not a valid PNG image: no IHDR chunk"},
		{"truncated", valid[:40], tensorio.ErrPNG, "not a valid PNG image: unexpected EOF"},
		{"bad crc", append(append([]byte{}, valid[:30]...), append([]byte{valid[30] ^ 1}, valid[31:]...)...), tensorio.ErrPNG, "not a valid PNG image: png: invalid format: invalid checksum"},
		{"zero width", rawPNG(0, 1, 8, 0, nil), tensorio.ErrPNG, "not a valid PNG image: png: invalid format: non-positive dimension"},
		{"bad colour type", rawPNG(1, 1, 8, 5, [][]byte{{0}}), tensorio.ErrPNG, "not a valid PNG image: png: unsupported feature: bit depth 8, color type 5"},
		{"too many pixels", hugeIHDR, tensorio.ErrTooLarge, "image is 100000x100000 pixels, more than 134217728"},
		{"bomb", bomb, tensorio.ErrTooLarge, "image claims 10000x10000 pixels, more than its 68 bytes can hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tensorio.ReadPNG(bytes.NewReader(tt.file))
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.class)
			assert.Equal(t, tt.msg, err.Error())
		})
	}
}

func decodeWritten(t *testing.T, x tensorio.Tensor, heatmap bool) image.Image {
	t.Helper()
	var b bytes.Buffer
	if heatmap {
		require.NoError(t, tensorio.WriteHeatmapPNG(&b, x))
	} else {
		require.NoError(t, tensorio.WritePNG(&b, x))
	}
	img, err := png.Decode(&b)
	require.NoError(t, err)
	return img
}

func nrgba(img image.Image, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
}

func TestWritePNGGrey(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	x := tensorio.Tensor{N: 1, C: 1, H: 2, W: 3, Data: []float32{-1, 0, 3, nan, inf, float32(math.Inf(-1))}}
	img := decodeWritten(t, x, false)
	g, ok := img.(*image.Gray)
	require.True(t, ok, "1 channel is a grey PNG, got %T", img)
	assert.Equal(t, image.Rect(0, 0, 3, 2), g.Bounds())
	// min -1 → 0, max 3 → 255, 0 → round(255/4) = 64; NaN, -Inf → 0, +Inf → 255.
	assert.Equal(t, []uint8{0, 64, 255, 0, 255, 0}, g.Pix)

	x.Data = []float32{5, 5, 5, 5, 5, 5}
	g = decodeWritten(t, x, false).(*image.Gray)
	assert.Equal(t, []uint8{128, 128, 128, 128, 128, 128}, g.Pix, "constant → mid grey")
}

func TestWritePNGColour(t *testing.T) {
	// 3 channels, 1x2 pixels: R plane, G plane, B plane.
	x := tensorio.Tensor{N: 1, C: 3, H: 1, W: 2, Data: []float32{0, 1, 0.5, 0, 1, 0.2}}
	img := decodeWritten(t, x, false)
	_, isRGBA := img.(*image.RGBA)
	assert.True(t, isRGBA, "opaque RGB, got %T", img)
	assert.Equal(t, color.NRGBA{0, 128, 255, 255}, nrgba(img, 0, 0))
	assert.Equal(t, color.NRGBA{255, 0, 51, 255}, nrgba(img, 1, 0))

	x = tensorio.Tensor{N: 1, C: 4, H: 1, W: 1, Data: []float32{1, 0, 0.2, 0.6}}
	img = decodeWritten(t, x, false)
	_, isNRGBA := img.(*image.NRGBA)
	assert.True(t, isNRGBA, "RGBA, got %T", img)
	assert.Equal(t, color.NRGBA{255, 0, 51, 153}, nrgba(img, 0, 0))
}

// TestWritePNGGrid: channel counts other than 1, 3, 4 are grey panels in
// ceil(sqrt(C)) columns with 1-pixel black gaps; batch items stack.
func TestWritePNGGrid(t *testing.T) {
	// 5 channels of 2x2, each constant c*10 (+ a 100 to fix the range).
	x := tensorio.Tensor{N: 1, C: 5, H: 2, W: 2, Data: make([]float32, 20)}
	for i := range x.Data {
		x.Data[i] = float32(i/4) * 0.25 // channel c is c/4: 0 .. 1
	}
	g := decodeWritten(t, x, false).(*image.Gray)
	assert.Equal(t, image.Rect(0, 0, 3*2+2, 2*2+1), g.Bounds(), "3 columns, 2 rows")
	at := func(px, py int) uint8 { return g.GrayAt(px, py).Y }
	assert.Equal(t, uint8(0), at(0, 0), "channel 0 top-left")
	assert.Equal(t, uint8(64), at(3, 1), "channel 1 second column")
	assert.Equal(t, uint8(128), at(6, 0), "channel 2 third column")
	assert.Equal(t, uint8(191), at(1, 3), "channel 3 second row")
	assert.Equal(t, uint8(255), at(4, 4), "channel 4")
	assert.Equal(t, uint8(0), at(7, 4), "empty sixth panel is black")
	assert.Equal(t, uint8(0), at(5, 3), "vertical gap")
	assert.Equal(t, uint8(0), at(4, 2), "horizontal gap")

	// 2 channels (e.g. grey+alpha): 2 panels side by side.
	x = tensorio.Tensor{N: 1, C: 2, H: 1, W: 1, Data: []float32{0, 1}}
	g = decodeWritten(t, x, false).(*image.Gray)
	assert.Equal(t, []uint8{0, 0, 255}, g.Pix)

	// Batch of 2 grey images: stacked with a gap row.
	x = tensorio.Tensor{N: 2, C: 1, H: 1, W: 2, Data: []float32{0, 1, 1, 0}}
	g = decodeWritten(t, x, false).(*image.Gray)
	assert.Equal(t, image.Rect(0, 0, 2, 3), g.Bounds())
	assert.Equal(t, []uint8{0, 255, 0, 0, 255, 0}, g.Pix)

	// Batch of 2 RGB images.
	x = tensorio.Tensor{N: 2, C: 3, H: 1, W: 1, Data: []float32{1, 0, 0, 0, 0, 1}}
	img := decodeWritten(t, x, false)
	assert.Equal(t, image.Rect(0, 0, 1, 3), img.Bounds())
	assert.Equal(t, color.NRGBA{255, 0, 0, 255}, nrgba(img, 0, 0))
	assert.Equal(t, color.NRGBA{0, 0, 0, 255}, nrgba(img, 0, 1), "gap")
	assert.Equal(t, color.NRGBA{0, 0, 255, 255}, nrgba(img, 0, 2))
}

func TestPNGRoundTrip(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 255 / (len(src.Pix) - 1)) // 0 and 255 both present
	}
	x, err := tensorio.ReadPNG(bytes.NewReader(encodePNG(t, src)))
	require.NoError(t, err)
	require.Equal(t, 4, x.C)
	img := decodeWritten(t, x, false)
	got, ok := img.(*image.NRGBA)
	require.True(t, ok)
	assert.Equal(t, src.Pix, got.Pix, "0..1 data spanning 0 and 1 comes back exactly")
}

func TestHeatmap(t *testing.T) {
	nan := float32(math.NaN())
	x := tensorio.Tensor{N: 1, C: 1, H: 1, W: 7, Data: []float32{-2, 0, 2, 1, -1, nan, float32(math.Inf(1))}}
	img := decodeWritten(t, x, true)
	want := []color.NRGBA{
		{0, 0, 255, 255},     // -max: blue
		{255, 255, 255, 255}, // 0: white
		{255, 0, 0, 255},     // +max: red
		{255, 128, 128, 255}, // +max/2
		{128, 128, 255, 255}, // -max/2
		{0, 255, 0, 255},     // NaN: green
		{255, 0, 0, 255},     // +Inf: red, not counted in the scale
	}
	for i, w := range want {
		assert.Equal(t, w, nrgba(img, i, 0), "pixel %d", i)
	}

	// The scale is symmetric: max |v| = 4 from the negative side.
	x.Data = []float32{-4, 2, 0, 0, 0, 0, 0}
	img = decodeWritten(t, x, true)
	assert.Equal(t, color.NRGBA{0, 0, 255, 255}, nrgba(img, 0, 0))
	assert.Equal(t, color.NRGBA{255, 128, 128, 255}, nrgba(img, 1, 0))

	// All zero: white. Three channels: three panels in a 2x2 grid.
	x = tensorio.Tensor{N: 1, C: 3, H: 1, W: 1, Data: []float32{0, 0, 0}}
	img = decodeWritten(t, x, true)
	assert.Equal(t, image.Rect(0, 0, 3, 3), img.Bounds())
	assert.Equal(t, color.NRGBA{255, 255, 255, 255}, nrgba(img, 0, 0))
	assert.Equal(t, color.NRGBA{255, 255, 255, 255}, nrgba(img, 2, 0))
	assert.Equal(t, color.NRGBA{255, 255, 255, 255}, nrgba(img, 0, 2))
	assert.Equal(t, color.NRGBA{0, 0, 0, 255}, nrgba(img, 1, 0), "gap")
	assert.Equal(t, color.NRGBA{0, 0, 0, 255}, nrgba(img, 2, 2), "empty panel")
}

func TestDiverging(t *testing.T) {
	assert.Equal(t, color.RGBA{0, 0, 255, 255}, tensorio.Diverging(-3, 3))
	assert.Equal(t, color.RGBA{0, 0, 255, 255}, tensorio.Diverging(-30, 3), "clamped")
	assert.Equal(t, color.RGBA{255, 255, 255, 255}, tensorio.Diverging(0, 3))
	assert.Equal(t, color.RGBA{255, 0, 0, 255}, tensorio.Diverging(3, 3))
	assert.Equal(t, color.RGBA{255, 255, 255, 255}, tensorio.Diverging(5, 0), "no scale: white")
	assert.Equal(t, color.RGBA{0, 0, 255, 255}, tensorio.Diverging(math.Inf(-1), 0))
	assert.Equal(t, color.RGBA{0, 255, 0, 255}, tensorio.Diverging(math.NaN(), 1))
}

func TestWritePNGErrors(t *testing.T) {
	var b bytes.Buffer
	bad := tensorio.Tensor{N: 1, C: 1, H: 2, W: 2, Data: make([]float32, 3)}
	assert.ErrorIs(t, tensorio.WritePNG(&b, bad), tensorio.ErrShape)
	assert.ErrorIs(t, tensorio.WriteHeatmapPNG(&b, bad), tensorio.ErrShape)
	assert.Zero(t, b.Len())
}
