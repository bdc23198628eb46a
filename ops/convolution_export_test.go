package ops

// Test hooks of the convolution family (compiled into tests only).

// ConvTileCount is the number of GEMM tile shapes shipped.
func ConvTileCount() int { return len(gemmTiles) }

// ConvTileName names tile i.
func ConvTileName(i int) string { return gemmTiles[i].cfg.String() }

// ConvForcePath forces the GEMMs of a family kernel onto a path: "tiled"
// with tile index tile, "direct", "depthwise" (depthwise kernels where the
// shape allows, else as chosen), "coopmat" (cooperative matrices for the
// float16 GEMMs whose results are images, else as chosen),
// "coopmat-emulated" (the same through the shader's emulated build, on
// any device), "small" (the
// data gradient's gather kernel for few input channels where the shape
// allows, else as chosen) or "" to choose again. It reports false for a
// kernel of another family, a tile the device cannot run, or cooperative
// matrices on a device without them.
func ConvForcePath(k any, path string, tile int) bool {
	e, ok := k.(interface{ engine() *convEngine })
	if !ok {
		return false
	}
	eng := e.engine()
	switch path {
	case "":
		eng.force = nil
	case "tiled":
		if tile < 0 || tile >= len(gemmTiles) || !gemmTiles[tile].cfg.fits(eng.dev.Limits()) {
			return false
		}
		eng.force = &convChoice{path: convPathTiled, tile: tile}
	case "direct":
		eng.force = &convChoice{path: convPathDirect}
	case "depthwise":
		eng.force = &convChoice{path: convPathDepthwise}
	case "coopmat":
		if !convCoopMatSupported(eng.dev.Limits()) {
			return false
		}
		eng.force = &convChoice{path: convPathCoopMat}
	case "coopmat-emulated":
		eng.force = &convChoice{path: convPathCoopMat, emu: true}
	case "small":
		eng.force = &convChoice{path: convPathSmall}
	default:
		return false
	}
	return true
}

// ConvLastPath names the path of the last GEMM whose result is an image
// that a family kernel encoded ("tiled", "direct", "depthwise",
// "coopmat", "small").
func ConvLastPath(k any) string {
	return k.(interface{ engine() *convEngine }).engine().last.String()
}
