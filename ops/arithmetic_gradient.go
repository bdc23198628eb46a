package ops

import (
	"fmt"

	"github.com/vkmps/vkmps/spirv"
	"github.com/vkmps/vkmps/vk"
)

// ArithmeticGradient is the backward pass of Arithmetic for one of its
// sources (MPSCNNArithmeticGradient with isSecondarySourceFilter; MPS's
// MPSCNNAddGradient, MPSCNNSubtractGradient and MPSCNNMultiplyGradient,
// and a Divide gradient MPS lacks). Given dy, the gradient of the loss
// with respect to the forward's result, and both forward sources x
// (primary) and y (secondary), it writes the gradient of x, or of y when
// isSecondarySourceFilter:
//
//	add:      dx = dy*ps                 dy' = dy*ss
//	subtract: dx = dy*ps                 dy' = -dy*ss
//	multiply: dx = dy*ps*(ss*y)          dy' = dy*(ps*x)*ss
//	divide:   dx = dy*ps/(ss*y)          dy' = -dy*ss*(ps*x)/(ss*y)^2
//
// (dy' the secondary's gradient; ps, ss the descriptor's scales), each
// multiplied by the clamp's mask: 1 where Minimum <= the pre-clamp value
// <= Maximum, the bounds included (PyTorch's clamp rule; MPS keeps its
// mask in an MPSCNNArithmeticGradientState, vkmps recomputes it from x and
// y), 0 elsewhere; an infinite bound masks nothing. Where the source was
// broadcast along an axis (size 1 where the result has more), the
// gradient is summed over that axis, so the destination has the source's
// shape. The sums run in a fixed order (two passes, no atomics): a run
// repeats bit for bit on one device. The descriptor must be the
// forward's; its fields are the kernel's properties, read at every
// Encode.
type ArithmeticGradient struct {
	ArithmeticDescriptor
	secondary  bool
	dev        *vk.Device
	local      int
	pipes      [numArithmeticOps][3][2]*vk.Pipeline // element-wise, by op, mode, format
	reducePipe [numArithmeticOps][2][2]*vk.Pipeline // by op, mode, format
	sumPipe    [2]*vk.Pipeline
	planePipes map[arithPlanesKey]*vk.Pipeline // arithmetic_grad_planes.comp's
	partials   *vk.Buffer
}

// arithPlanesKey names a pipeline of arithmetic_grad_planes.comp.
type arithPlanesKey struct {
	op                        ArithmeticOp
	f16, vec4, rx, ry, xw, yw bool
}

// NewArithmeticGradient makes the gradient kernel of the primary source
// of the arithmetic d, or of its secondary when isSecondarySourceFilter.
// Close releases its scratch memory.
func NewArithmeticGradient(dev *vk.Device, d ArithmeticDescriptor, isSecondarySourceFilter bool) (*ArithmeticGradient, error) {
	k := &ArithmeticGradient{ArithmeticDescriptor: d, secondary: isSecondarySourceFilter}
	label := k.label()
	if dev == nil {
		return nil, fmt.Errorf("%w: %s: nil device", ErrDevice, label)
	}
	if err := d.Validate(label); err != nil {
		return nil, err
	}
	k.dev, k.local = dev, workgroup(dev.Limits())
	// A power of two: the workgroup reduction halves it.
	for k.local&(k.local-1) != 0 {
		k.local &= k.local - 1
	}
	return k, nil
}

// IsSecondarySourceFilter reports whether the kernel computes the
// secondary source's gradient (MPS's isSecondarySourceFilter).
func (k *ArithmeticGradient) IsSecondarySourceFilter() bool { return k.secondary }

func (k *ArithmeticGradient) label() string {
	side := 0
	if k.secondary {
		side = 1
	}
	if k.Op.Valid() {
		return arithGradLabels[side][k.Op]
	}
	return "ArithmeticGradient"
}

// Close releases the kernel's scratch memory; safe twice.
func (k *ArithmeticGradient) Close() error {
	if k.partials == nil {
		return nil
	}
	err := k.partials.Close()
	k.partials = nil
	return err
}

type arithReducePush struct {
	XS, YS                         [4]uint32
	Outputs, Reduce, Chunk, Slices uint32
	C, H, W                        uint32
	XBase, YBase, GBase            uint32
	GSN                            uint32
	PBase, StrideO, StrideJ        uint32
	Flags                          uint32
	PS, SS, Bias, Lo, Hi           float32
}

// Encode records the gradient of the primary (secondary) source into dst,
// which has that source's shape; dy has the forward result's shape
// (ArithmeticResultDescriptor of the sources), the four images one
// format, and dst shares no storage with the others. Every source is
// given, whichever the formula reads.
func (k *ArithmeticGradient) Encode(cb *vk.CommandBuffer, dy, primary, secondary, dst *Image) error {
	label := k.label()
	roles := [4]string{"source gradient", "primary", "secondary", "destination gradient"}
	ims := [4]*Image{dy, primary, secondary, dst}
	if err := checkElementwise(cb, k.dev, label, roles[:], ims[:], 1); err != nil {
		return err
	}
	if err := k.Validate(label); err != nil {
		return err
	}
	if err := arithCheckResult(label, primary, secondary, dy, "source gradient"); err != nil {
		return err
	}
	src, role := primary, "primary"
	grad := 1
	if k.secondary {
		src, role, grad = secondary, "secondary", 2
	}
	if !sameShapes(src, dst) {
		return fmt.Errorf("%w: %s: destination gradient %s, want the %s source's shape %dx%dx%dx%d", ErrShape, label, dst, role, src.n, src.c, src.h, src.w)
	}
	var enc arithEncoder
	enc.init(k.dev, k.local, label, &k.pipes[k.Op], spirv.Arithmetic, k.ArithmeticDescriptor, grad)
	if sameShapes(src, dy) {
		return enc.elementwise(cb, primary, secondary, dy, dst)
	}
	return k.reduce(cb, &enc, dy, primary, secondary, dst)
}

// reduce records the gradient of a broadcast source: partial sums of
// slices of each output's broadcast set, then their sum in order.
func (k *ArithmeticGradient) reduce(cb *vk.CommandBuffer, enc *arithEncoder, dy, x, y, dst *Image) error {
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	f := dst.format
	// Which axes are reduced, and how many values each output sums.
	res := [4]int{dy.n, dy.c, dy.h, dy.w}
	srcDims := [4]int{dst.n, dst.c, dst.h, dst.w}
	var pc arithReducePush
	reduce := 1
	for a := range res {
		if srcDims[a] == 1 && res[a] > 1 {
			pc.Flags |= 1 << a
			reduce *= res[a]
		}
	}
	outputs := dst.n * dst.c * dst.h * dst.w
	xWhole, yWhole := x.h == dy.h && x.w == dy.w, y.h == dy.h && y.w == dy.w
	if pc.Flags&(4|8) == 4|8 && (xWhole || x.h*x.w == 1) && (yWhole || y.h*y.w == 1) && reduce >= 4*k.local {
		return k.reducePlanes(cb, enc, dy, x, y, dst, reduce, xWhole, yWhole)
	}
	// Workgroups share an output where a spatial axis is reduced (its
	// values are neighbours) and there are enough values; otherwise an
	// invocation takes a slice of one output, neighbours neighbouring
	// outputs.
	mode, slices := 0, 1
	if pc.Flags&(4|8) != 0 && reduce >= k.local {
		mode = 1
		slices = min(max(reduce/(4*k.local), 1), 256)
	} else {
		slices = min(max(65536/outputs, 1), max(reduce/32, 1), 1024)
	}
	chunk := (reduce + slices - 1) / slices
	if err := k.ensurePartials(uint64(outputs*slices) * 4); err != nil {
		return err
	}
	// Bind every image whole.
	var binds [4]vk.BufferRange
	var bases [4]uint32
	for i, im := range [3]*Image{x, y, dy} {
		s := imageSpan(im, 0, 0)
		if size := s.bytes(im.n, im.c); size > lim.MaxStorageBufferRange-(align-2) {
			return fmt.Errorf("%w: %s: %s (%d bytes) exceeds the device's max storage buffer range (%d bytes); a broadcast source's gradient binds its images whole",
				ErrDeviceLimit, enc.label, im, size, lim.MaxStorageBufferRange)
		}
		binds[i], bases[i] = s.bind(align, 0, 0, im.n, im.c)
	}
	binds[3] = k.partials.Range(0, uint64(outputs*slices)*4)
	rx, ry := enc.reads()
	if rx {
		pc.Flags |= 16
	}
	if ry {
		pc.Flags |= 32
	}
	if (xWhole || x.h*x.w == 1) && (yWhole || y.h*y.w == 1) {
		pc.Flags |= 64
	}
	if xWhole {
		pc.Flags |= 128
	}
	if yWhole {
		pc.Flags |= 256
	}
	d := k.ArithmeticDescriptor
	pc.Outputs, pc.Reduce, pc.Chunk, pc.Slices = uint32(outputs), uint32(reduce), uint32(chunk), uint32(slices)
	pc.C, pc.H, pc.W = uint32(dy.c), uint32(dy.h), uint32(dy.w)
	pc.XBase, pc.YBase, pc.GBase = bases[0], bases[1], bases[2]
	pc.XS, pc.YS, pc.GSN = arithStrides(x), arithStrides(y), uint32(dy.cTotal*dy.h*dy.w)
	pc.PS, pc.SS, pc.Bias, pc.Lo, pc.Hi = d.PrimaryScale, d.SecondaryScale, d.Bias, d.Minimum, d.Maximum
	if mode == 0 {
		pc.StrideO, pc.StrideJ = 1, uint32(outputs) // partials[j][o]: neighbours write neighbours
	} else {
		pc.StrideO, pc.StrideJ = uint32(slices), 1
	}
	pl, err := enc.pipeline(&k.reducePipe[d.Op][mode][f], spirv.ArithmeticGradReduce, f, mode)
	if err != nil {
		return err
	}
	groups := neuronGroups(lim, k.local, outputs*slices)
	if mode == 1 {
		groups = uint32(min(outputs*slices, 65535, int(lim.MaxComputeWorkGroupCount[0])))
	}
	if err := cb.Dispatch(pl, binds[:], pushBytes(&pc), [3]uint32{groups, 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", enc.label, err)
	}
	return k.sum(cb, enc, dst, binds[3], slices, pc.StrideO, pc.StrideJ)
}

// sum records arithmetic_grad_sum.comp: dst's outputs from their slices
// partial sums in partials (output o's slice j at o*strideO + j*strideJ).
func (k *ArithmeticGradient) sum(cb *vk.CommandBuffer, enc *arithEncoder, dst *Image, partials vk.BufferRange, slices int, strideO, strideJ uint32) error {
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	f := dst.format
	outputs := dst.n * dst.c * dst.h * dst.w
	if k.sumPipe[f] == nil {
		sh, err := build(spirv.ArithmeticGradSum, f == Float16)
		if err != nil {
			return fmt.Errorf("%s: %w", enc.label, err)
		}
		p, err := pipeline(k.dev, sh, map[string]uint32{"local_size_x": uint32(k.local)})
		if err != nil {
			return fmt.Errorf("%s: %w", enc.label, err)
		}
		k.sumPipe[f] = p
	}
	sp := gradSumPush{Count: uint32(outputs), Terms: uint32(slices), StrideO: strideO, StrideJ: strideJ,
		PerBatch: uint32(dst.c * dst.h * dst.w), BatchStride: uint32(dst.cTotal * dst.h * dst.w)}
	ds := imageSpan(dst, 0, 0)
	var sbinds [2]vk.BufferRange
	sbinds[0] = partials
	sbinds[1], sp.OutBase = ds.bind(align, 0, 0, dst.n, dst.c)
	if err := cb.Dispatch(k.sumPipe[f], sbinds[:], pushBytes(&sp), [3]uint32{neuronGroups(lim, k.local, outputs), 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", enc.label, err)
	}
	return nil
}

type arithPlanesPush struct {
	XSN, XSC, YSN, YSC, GSN uint32
	Plane, Outputs, OC      uint32
	Units, Chunk, Slices    uint32
	PlaneU, PlaneM, PlaneS  uint32
	QC, QCM, QCS            uint32
	XBase, YBase, GBase     uint32
	RN, RC                  uint32
	PS, SS, Bias, Lo, Hi    float32
}

// arithPlaneValues is about the values each workgroup of
// arithmetic_grad_planes.comp reduces: 64 KiB of float32 per image read,
// enough to hide the final tree, while a per-channel gradient still has
// thousands of workgroups.
const arithPlaneValues = 1 << 14

// arithPlaneUnroll is the units an invocation of
// arithmetic_grad_planes.comp loads at once (its constant U).
const arithPlaneUnroll = 4

// reducePlanes records the gradient of a source broadcast over whole
// planes (H and W reduced, the sources whole or 1x1 per plane):
// arithmetic_grad_planes.comp's partial sums, many workgroups per output,
// then their sum in order.
func (k *ArithmeticGradient) reducePlanes(cb *vk.CommandBuffer, enc *arithEncoder, dy, x, y, dst *Image, reduce int, xWhole, yWhole bool) error {
	lim := k.dev.Limits()
	align := max(lim.MinStorageBufferOffsetAlignment, 4)
	f := dst.format
	outputs := dst.n * dst.c
	plane := dy.h * dy.w
	rn, rc := dst.n == 1 && dy.n > 1, dst.c == 1 && dy.c > 1
	var pc arithPlanesPush
	var binds [4]vk.BufferRange
	var bases [3]uint32
	for i, im := range [3]*Image{x, y, dy} {
		s := imageSpan(im, 0, 0)
		if size := s.bytes(im.n, im.c); size > lim.MaxStorageBufferRange-(align-2) {
			return fmt.Errorf("%w: %s: %s (%d bytes) exceeds the device's max storage buffer range (%d bytes); a broadcast source's gradient binds its images whole",
				ErrDeviceLimit, enc.label, im, size, lim.MaxStorageBufferRange)
		}
		binds[i], bases[i] = s.bind(align, 0, 0, im.n, im.c)
	}
	rx, ry := enc.reads()
	key := arithPlanesKey{op: k.Op, f16: f == Float16, rx: rx, ry: ry, xw: xWhole, yw: yWhole}
	key.vec4 = plane%4 == 0 && bases[2]%4 == 0 && (!rx || !xWhole || bases[0]%4 == 0) && (!ry || !yWhole || bases[1]%4 == 0)
	vec := 1
	if key.vec4 {
		vec = 4
	}
	// Slices of whole steps (an invocation's arithPlaneUnroll units, the
	// workgroup's side by side) where there are enough units, so that
	// every invocation's loads go out together.
	units := reduce / vec
	slices := min(max((reduce+arithPlaneValues-1)/arithPlaneValues, 1), 512)
	chunk := (units + slices - 1) / slices
	if step := arithPlaneUnroll * k.local; chunk > step {
		chunk = (chunk + step - 1) / step * step
		slices = (units + chunk - 1) / chunk
	}
	if err := k.ensurePartials(uint64(outputs*slices) * 4); err != nil {
		return err
	}
	binds[3] = k.partials.Range(0, uint64(outputs*slices)*4)
	xs, ys := arithStrides(x), arithStrides(y)
	pc.XSN, pc.XSC, pc.YSN, pc.YSC = xs[0], xs[1], ys[0], ys[1]
	pc.GSN, pc.Plane, pc.Outputs = uint32(dy.cTotal*plane), uint32(plane), uint32(outputs)
	pc.OC, pc.QC = uint32(dy.c), 1
	if rc {
		pc.OC, pc.QC, pc.RC = 1, uint32(dy.c), 1
	}
	if rn {
		pc.RN = 1
	}
	pc.Units, pc.Slices = uint32(units), uint32(slices)
	pc.Chunk = uint32(chunk)
	pc.PlaneU = uint32(plane / vec)
	pc.PlaneM, pc.PlaneS = upMagic(pc.PlaneU)
	pc.QCM, pc.QCS = upMagic(pc.QC)
	pc.XBase, pc.YBase, pc.GBase = bases[0], bases[1], bases[2]
	d := k.ArithmeticDescriptor
	pc.PS, pc.SS, pc.Bias, pc.Lo, pc.Hi = d.PrimaryScale, d.SecondaryScale, d.Bias, d.Minimum, d.Maximum
	pl := k.planePipes[key]
	if pl == nil {
		sh, err := build(spirv.ArithmeticGradPlanes, key.f16)
		if err != nil {
			return fmt.Errorf("%s: %w", enc.label, err)
		}
		pl, err = pipeline(k.dev, sh, map[string]uint32{"local_size_x": uint32(k.local), "OP": uint32(d.Op), "GRAD": 2 - upBool(!k.secondary),
			"VEC": uint32(vec), "RX": upBool(rx), "RY": upBool(ry), "XWHOLE": upBool(xWhole), "YWHOLE": upBool(yWhole)})
		if err != nil {
			return fmt.Errorf("%s: %w", enc.label, err)
		}
		if k.planePipes == nil {
			k.planePipes = map[arithPlanesKey]*vk.Pipeline{}
		}
		k.planePipes[key] = pl
	}
	groups := uint32(min(outputs*slices, 65535, int(lim.MaxComputeWorkGroupCount[0])))
	if err := cb.Dispatch(pl, binds[:], pushBytes(&pc), [3]uint32{groups, 1, 1}); err != nil {
		return fmt.Errorf("%s: %w", enc.label, err)
	}
	return k.sum(cb, enc, dst, binds[3], slices, uint32(slices), 1)
}

// ensurePartials makes the scratch buffer at least size bytes.
func (k *ArithmeticGradient) ensurePartials(size uint64) error {
	if k.partials != nil && k.partials.Size() >= size {
		return nil
	}
	if k.partials != nil {
		k.partials.Close()
		k.partials = nil
	}
	b, err := k.dev.NewBuffer(size, k.label()+" partial sums")
	if err != nil {
		return err
	}
	k.partials = b
	return nil
}
