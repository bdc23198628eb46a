package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/vk"
)

// Tiles. The pooling shaders work in tiles (glsl/pooling_common.glsl,
// glsl/pooling_grad_common.glsl): a forward workgroup first copies the
// source region its TW x TH destination pixels read into shared memory; a
// gradient workgroup stages the contributions of the windows that touch its
// TW x TH dx pixels. Tile shapes depend on the geometry only, so one
// pipeline serves every image size.

// tileBudget is the shared memory a tile aims to use: small enough for
// several workgroups per multiprocessor.
const tileBudget = 16 << 10

// tileWidth is the tile width: a multiple of 4, so argmax words (up to four
// codes each) never straddle two tiles.
const tileWidth = 32

// forwardShared returns the bytes of shared memory a forward tile of
// tw x th pixels uses (glsl/pooling_common.glsl's tile, plus a code per
// pixel for the argmax shader).
func forwardShared(g Geometry, tw, th int) int {
	kx, ky := g.effective()
	iw := (tw-1)*g.StrideX + kx
	cp := (iw + g.StrideX - 1) / g.StrideX
	ih := (th-1)*g.StrideY + ky
	return 4 * (ih*cp*g.StrideX + tw*th)
}

// forwardTile returns the forward tile height for g: up to 16 rows of
// tileWidth pixels within tileBudget, at least one row.
func forwardTile(g Geometry) (tw, th int) {
	th = 16
	for th > 1 && forwardShared(g, tileWidth, th) > tileBudget {
		th /= 2
	}
	return tileWidth, th
}

// forwardTileSpec is forwardTile as specialization constants.
func forwardTileSpec(g Geometry) (uint32, uint32) {
	tw, th := forwardTile(g)
	return uint32(tw), uint32(th)
}

// gradShared is the gather tile's shared memory (a value and a code per
// staged window).
func gradShared(g Geometry, tw, th int) int {
	kx, ky := g.effective()
	ww := (tw+kx-2)/g.StrideX + 2
	wh := (th+ky-2)/g.StrideY + 2
	return 8 * ww * wh
}

// gradTile returns the gather tile: tileWidth x up to 16 dx pixels.
func gradTile(g Geometry) (tw, th int) {
	th = 16
	for th > 1 && gradShared(g, tileWidth, th) > tileBudget {
		th /= 2
	}
	return tileWidth, th
}

// checkShared reports ErrDeviceLimit when the smallest tiles of g do not
// fit the device's shared memory per workgroup.
func checkShared(name string, g Geometry, lim vk.Limits) error {
	have := int(lim.MaxComputeSharedMemorySize)
	need := max(forwardShared(g, tileWidth, 1), gradShared(g, tileWidth, 1))
	if need > have {
		kx, ky := g.effective()
		return fmt.Errorf("%w: %s: a %dx%d window (extent %dx%d) needs %d bytes of shared memory per workgroup; this device has %d",
			ErrDeviceLimit, name, g.KernelWidth, g.KernelHeight, kx, ky, need, have)
	}
	return nil
}

// MaxWindowExtent is the largest square window extent, (k-1)*d+1 pixels a
// side at stride 1, whose tiles fit the shared memory of a device with
// limits lim: about 85 on lavapipe's 32 KiB, 105 on NVIDIA's 48 KiB.
// Larger windows are an ErrDeviceLimit.
func MaxWindowExtent(lim vk.Limits) int {
	e := 1
	for {
		g := Geometry{KernelWidth: e + 1, KernelHeight: e + 1, StrideX: 1, StrideY: 1, DilationX: 1, DilationY: 1}
		if checkShared("", g, lim) != nil {
			return e
		}
		e++
	}
}

// tileGroups returns the workgroup grid for tiles tiles of each of z
// planes: x first, then y when x would exceed the device's limit.
func tileGroups(lim *vk.Limits, tiles, z int) [3]uint32 {
	maxX := int(lim.MaxComputeWorkGroupCount[0])
	if tiles <= maxX {
		return [3]uint32{uint32(tiles), 1, uint32(z)}
	}
	y := (tiles + maxX - 1) / maxX
	x := (tiles + y - 1) / y
	return [3]uint32{uint32(x), uint32(y), uint32(z)}
}

// tilesOf returns the tiles of tw x th covering a w x h region.
func tilesOf(w, h, tw, th int) int { return ((w + tw - 1) / tw) * ((h + th - 1) / th) }
