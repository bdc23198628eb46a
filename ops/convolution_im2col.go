package ops

import (
	"fmt"
	"unsafe"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// An explicit im2col: convolutions whose windows are wide over few input
// channels (the ResNet stem: 3 channels under 7x7 at stride 2) spend the
// implicit GEMM's time in its gathers, every value of B found and loaded
// on its own, at 24 TFLOP/s on an H100 in float32 and float16 alike. The
// im2col pass (glsl/convolution_im2col.comp) writes each output pixel's
// window as a column of ld values (K rounded up to a multiple of 4),
// and the GEMM (convolution_gemm.comp's MODE_B 2, a fully connected
// layer's rows) loads them as quads along k, on the tiles or on
// cooperative matrices as gemmChoose picks for a plain GEMM. Its columns
// live in the convolution scratch, for at most im2colScratchMax bytes of
// batch images at a time.

// im2colScratchMax bounds the columns of one part of the batch.
var im2colScratchMax = 64 << 20

// useIm2col reports whether forward-mode GEMM j (B an im2col of its
// source, choice its implicit path) runs as an explicit im2col and a GEMM
// over the columns: never for a pointwise GEMM (its source is the columns
// already), groups, a forced direct path, or under im2col=0; always under
// im2col=1; by default not.
func (e *convEngine) useIm2col(j *convImageGemm, choice convChoice) bool {
	if j.modeB != gemmBIm2col || j.groups != 1 || j.depthwise || j.col2im != nil || e.tune.NoIm2col || convVecB(j) {
		return false
	}
	if choice.path == convPathDirect || e.tune.Path == ConvolutionPathDirect || (e.force != nil && e.force.path == convPathDirect) {
		return false
	}
	return e.tune.Im2col
}

// im2colPass is the im2col of one GEMM: its pipeline, the output pixels
// per batch image, the columns' depth ld, the batch images per part and
// the columns' binding. (It keeps no pointer to the GEMM: one would move
// every GEMM encodeImageGemm makes on the fly to the heap.)
type im2colPass struct {
	e      *convEngine
	pl     *vk.Pipeline
	pixels int
	ld     int
	per    int
	elem   int            // bytes per value
	out    vk.BufferRange // the columns of one part
	layout convIm2colPush
}

// convIm2colPush is glsl/convolution_im2col.comp's push constants.
type convIm2colPush struct {
	InW, InH, InX0, InY0     int32
	FirstX, FirstY           int32
	OutW, OutH               int32
	InStride                 uint32
	ImBase, ImBatch, ImPlane uint32
	K, Ld, N, RowQuads       uint32
}

// newIm2colPass prepares the im2col of j's source (float16 values where
// f16) in the engine's scratch.
func (e *convEngine) newIm2colPass(j *convImageGemm, f16 bool) (im2colPass, error) {
	lim := e.limits()
	pixels := j.out.w * j.out.h
	c := im2colPass{e: e, pixels: pixels, ld: (j.k + 3) / 4 * 4, elem: 4}
	if f16 {
		c.elem = 2
	}
	perImage := uint64(pixels) * uint64(c.ld) * uint64(c.elem)
	room := min(uint64(im2colScratchMax), lim.MaxStorageBufferRange)
	if perImage > lim.MaxStorageBufferRange {
		return c, fmt.Errorf("%w: %s: the im2col columns of one batch image (%d bytes) exceed the device's storage-buffer range (%d)",
			ErrDeviceLimit, e.label, perImage, lim.MaxStorageBufferRange)
	}
	c.per = max(1, min(j.batches, int(room/perImage)))
	scr, err := e.scratchImage(int((uint64(c.per)*perImage + 3) / 4))
	if err != nil {
		return c, err
	}
	whole, base, err := convWholeRange(lim, "im2col columns", scr)
	if err != nil {
		return c, err
	}
	if base != 0 {
		return c, fmt.Errorf("%w: %s: im2col scratch %s does not start on a binding boundary", ErrDevice, e.label, scr)
	}
	c.out = scr.buf.Range(whole.Offset, uint64(c.per)*perImage)
	if c.pl, err = e.pipeline(convPipeKey{shader: spirv.ConvolutionIm2col, f16: f16, tile: -1, geom: j.geom}); err != nil {
		return c, err
	}
	c.layout = convIm2colPush{
		InW: int32(j.in.w), InH: int32(j.in.h), InX0: int32(j.in.x0), InY0: int32(j.in.y0),
		FirstX: int32(j.firstX), FirstY: int32(j.firstY), OutW: int32(j.out.w), OutH: int32(j.out.h),
		InStride: uint32(j.in.stride()), ImBatch: uint32(j.in.batch()), ImPlane: uint32(j.in.plane()),
		K: uint32(j.k), Ld: uint32(c.ld),
	}
	return c, nil
}

// encode records the im2col of the nb batch images of source binding src
// (their first value at base) into the columns.
func (c *im2colPass) encode(cb *vk.CommandBuffer, src vk.BufferRange, base uint32, nb int) error {
	lim := c.e.limits()
	pc := c.layout
	pc.ImBase, pc.N = base, uint32(nb*c.pixels)
	quads := uint64(pc.N) * uint64(c.ld/4)
	wgs := (quads + 63) / 64
	gx := min(wgs, uint64(lim.MaxComputeWorkGroupCount[0]))
	gy := (wgs + gx - 1) / gx
	if gy > uint64(lim.MaxComputeWorkGroupCount[1]) {
		return fmt.Errorf("%w: %s: %d im2col workgroups exceed the device's workgroup counts", ErrDeviceLimit, c.e.label, wgs)
	}
	pc.RowQuads = uint32(gx * 64)
	push := unsafe.Slice((*byte)(unsafe.Pointer(&pc)), unsafe.Sizeof(pc))
	out := c.out
	out.Size = min(out.Size, uint64(nb*c.pixels)*uint64(c.ld)*uint64(c.elem))
	if err := cb.Dispatch(c.pl, []vk.BufferRange{src, out}, push, [3]uint32{uint32(gx), uint32(gy), 1}); err != nil {
		return fmt.Errorf("%s: %w", c.e.label, err)
	}
	return nil
}
