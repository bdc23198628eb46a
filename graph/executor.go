package graph

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// Mode says whether a graph is compiled for training or for inference:
// batch normalization and dropout follow it.
type Mode int

const (
	// ModeInference: batch normalization uses its running statistics and
	// dropout is the identity. The default.
	ModeInference Mode = iota
	// ModeTraining: batch normalization normalizes with the batch's
	// statistics and updates its running ones; dropout drops.
	ModeTraining
)

func (m Mode) String() string {
	if m == ModeTraining {
		return "training"
	}
	return "inference"
}

// CompileOptions say what a compiled graph computes.
type CompileOptions struct {
	// Inputs gives the shape of every input the outputs depend on.
	Inputs map[string]ops.ImageDescriptor
	// Outputs are the images Run returns; empty means every image no
	// selected node consumes (the graph's sinks). Naming an intermediate
	// image keeps it and returns it ("intermediates on request").
	Outputs []*Image
	// RecordArgmax makes forward max pooling nodes whose gradient is in
	// the graph record their argmax, so the gradient does not re-read the
	// source (it costs a byte or two per output).
	RecordArgmax bool
	// Compute are images each run computes without returning them: the
	// parameter updates of Optimize, whose results are the parameters.
	Compute []*Image
	// Mode: inference (the default) or training.
	Mode Mode
	// Timestamps makes every run record GPU timestamps at its start and
	// end: Pending.GPUTime returns the GPU time of a run (GPU busy time
	// against wall time shows whether the host keeps the GPU fed).
	Timestamps bool
	// Profile also records a GPU timestamp after every node's work:
	// Pending.Profile returns each node's share of the run (barriers let
	// independent work overlap, so shares are approximate). Implies
	// Timestamps.
	Profile bool
	// Pipelined gives the executor two sets of host-side input and output
	// buffers and a command buffer for each, so that Start can feed and
	// submit the next run while the previous one executes (host and GPU
	// overlap: prepare batch k+1 while step k runs). Without it, Start
	// waits for the previous run first.
	Pipelined bool
	// Format is the format of every image but the parameters and their
	// gradients, which are float32: Float32 (the default) or Float16
	// (inputs and outputs are still given and returned as float32 values).
	Format ops.Format
	// ConvolutionTuning is given to every kernel the convolution,
	// transpose convolution and fully connected nodes build, their
	// gradients' included (see ops.ConvolutionTuning; the zero value, the
	// default, lets the kernels choose). For measuring alternatives on a
	// whole network: every valid tuning computes the same results within
	// the family's stated tolerances.
	ConvolutionTuning ops.ConvolutionTuning
	// Resident names inputs whose values stay on the device from run to
	// run: Executor.WriteInput sets them (before the first run, and again
	// whenever they change), runs take no feed for them and record no
	// upload of them. Inputs that do not change between steps (a synthetic
	// batch, a data set kept on the device) then cost no transfer per
	// run; on a discrete GPU, feeding ResNet-18's 32 x 3 x 224 x 224 batch
	// reads 19 MB over PCIe every run (about 0.4 ms on an H100).
	Resident []string
	// ScratchPerKernel gives every convolution-family kernel its own
	// scratch for its intermediate sums (split-K partial sums, Winograd
	// transforms). By default the weight gradients share one
	// ops.ConvolutionScratch and the other kernels another, each as large
	// as the largest need rather than the sum of all (ResNet-18's
	// training step at batch 8 on 224x224: 1.5 GB of device memory with a
	// scratch per kernel, against its 0.26 GB arena of images); sharing
	// orders kernels that touch the same scratch one after another, and
	// two let a weight gradient run beside the nodes recorded next
	// (deferWeightGradients).
	ScratchPerKernel bool
}

// MemoryPlan describes where a compiled graph keeps its images.
type MemoryPlan struct {
	// Arena is the size of the one buffer holding every intermediate
	// image: the peak of the plan.
	Arena uint64
	// Intermediates is what the intermediates would take without sharing.
	Intermediates uint64
	// Dedicated is the size of the inputs' and outputs' own images.
	Dedicated uint64
	// Offsets gives each intermediate image's byte offset in the arena.
	Offsets map[string]uint64
}

// Executor is a graph compiled for a device and fixed input shapes. Run
// records the whole graph into one command buffer the first time and
// replays it afterwards: one queue submission per run, no allocation after
// the first. An Executor serializes its runs.
type Executor struct {
	dev     *vk.Device
	steps   []*step
	order   []*Node
	desc    map[*Image]ops.ImageDescriptor
	storage map[*Image]*Image // alias root of each image
	images  map[*Image]*ops.Image
	inputs  []*slot
	outputs []*slot
	arena   *vk.Buffer
	owned   []*ops.Image
	hosts   []*vk.Buffer
	plan    MemoryPlan
	opts    CompileOptions

	mu      sync.Mutex
	sets    []*runSet // one, or two when pipelined
	next    int       // the set the next Start uses
	seq     uint64    // runs started
	closers []interface{ Close() error }
	closed  bool
	// optimizers of the graph's update nodes; recording counts the
	// command buffers recorded (each advances the time step once).
	optimizers map[*OptimizerSpec]*compiledOptimizer
	recording  int
	// scratch is the convolution-family kernels' shared scratch (nil
	// with ScratchPerKernel), weightScratch the weight gradients' (their
	// own, so that they can run beside the data gradients and the nodes
	// after them: deferWeightGradients).
	scratch, weightScratch *ops.ConvolutionScratch
}

// slot is an input or output with its host-side staging when the device
// memory is not host-visible.
type slot struct {
	im       *Image
	img      *ops.Image
	host     [2]*ops.Image // staging images in host memory per run set, or nil
	resident bool          // CompileOptions.Resident: written by WriteInput only
	count    int
}

// Compile prepares g to run on dev: it infers every shape, plans memory
// and makes the kernels. Errors name the node at fault.
func (g *Graph) Compile(dev *vk.Device, opts CompileOptions) (*Executor, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: Compile: nil device", ErrGraph)
	}
	outs := opts.Outputs
	if len(outs) == 0 {
		outs = g.sinks()
	}
	if len(outs) == 0 {
		return nil, fmt.Errorf("%w: the graph has no node to run", ErrGraph)
	}
	for _, o := range outs {
		if o == nil || o.g != g {
			return nil, fmt.Errorf("%w: Compile: an output is nil or belongs to another graph", ErrGraph)
		}
	}
	for _, c := range opts.Compute {
		if c == nil || c.g != g {
			return nil, fmt.Errorf("%w: Compile: a Compute image is nil or belongs to another graph", ErrGraph)
		}
	}
	order, err := g.selectNodes(append(append([]*Image(nil), outs...), opts.Compute...))
	if err != nil {
		return nil, err
	}
	e := &Executor{dev: dev, order: order, storage: map[*Image]*Image{}, images: map[*Image]*ops.Image{}}
	if opts.Format != ops.Float32 && opts.Format != ops.Float16 {
		return nil, fmt.Errorf("%w: Compile: unknown image format %v", ErrGraph, opts.Format)
	}
	if err := opts.ConvolutionTuning.Validate(); err != nil {
		return nil, fmt.Errorf("%w: Compile: %w", ErrGraph, err)
	}
	if opts.Mode != ModeInference && opts.Mode != ModeTraining {
		return nil, fmt.Errorf("%w: Compile: unknown mode %d", ErrGraph, int(opts.Mode))
	}
	desc, err := inferShapes(g, order, append(append([]*Image(nil), outs...), opts.Compute...), opts.Inputs, opts.Format)
	if err != nil {
		return nil, err
	}
	e.desc = desc
	e.opts = opts
	e.sets = []*runSet{{}}
	if opts.Pipelined {
		e.sets = append(e.sets, &runSet{})
	}
	if err := e.allocate(order, outs); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.uploadParameters(); err != nil {
		e.Close()
		return nil, err
	}
	if !opts.ScratchPerKernel {
		if e.scratch, err = ops.NewConvolutionScratch(dev); err == nil {
			e.weightScratch, err = ops.NewConvolutionScratch(dev)
		}
		if err != nil {
			e.Close()
			return nil, err
		}
	}
	if err := e.makeSteps(order, &e.opts); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// sinks returns the images no node consumes.
func (g *Graph) sinks() []*Image {
	used := map[*Image]bool{}
	for _, n := range g.nodes {
		for _, s := range n.sources {
			used[s] = true
		}
	}
	var out []*Image
	for _, n := range g.nodes {
		for _, r := range n.results {
			if !used[r] {
				out = append(out, r)
			}
		}
	}
	return out
}

// selectNodes returns the nodes the outputs depend on, in creation order
// (which is topological: a node is made after its sources' producers),
// but for the weight gradients, which deferWeightGradients records later.
func (g *Graph) selectNodes(outs []*Image) ([]*Node, error) {
	sel := map[*Node]bool{}
	var visit func(n *Node) error
	visit = func(n *Node) error {
		if sel[n] {
			return nil
		}
		sel[n] = true
		for _, s := range n.sources {
			if s.producer != nil {
				if s.producer.id >= n.id {
					return fmt.Errorf("%w: cycle: %s reads %s, which it precedes", ErrGraph, n, s)
				}
				if err := visit(s.producer); err != nil {
					return err
				}
			}
		}
		if n.forward != nil {
			return visit(n.forward) // its state
		}
		return nil
	}
	for _, o := range outs {
		if o.producer != nil {
			if err := visit(o.producer); err != nil {
				return nil, err
			}
		}
	}
	var order []*Node
	for _, n := range g.nodes {
		if sel[n] {
			order = append(order, n)
		}
	}
	return deferWeightGradients(order), nil
}

func (e *Executor) shapeOf(im *Image) (ops.ImageDescriptor, bool) {
	d, ok := e.desc[im]
	return d, ok
}

// inferShapes returns every selected image's shape; inputs come from
// shapes, the rest from each node's op in order.
func inferShapes(g *Graph, order []*Node, outs []*Image, shapes map[string]ops.ImageDescriptor, format ops.Format) (map[*Image]ops.ImageDescriptor, error) {
	desc := map[*Image]ops.ImageDescriptor{}
	needed := map[*Image]bool{}
	need := func(im *Image) {
		if d, ok := im.paramDesc(); ok {
			desc[im] = d
		} else if im.producer == nil {
			needed[im] = true
		}
	}
	for _, n := range order {
		for _, s := range n.sources {
			need(s)
		}
	}
	for _, o := range outs {
		need(o)
	}
	for name, d := range shapes {
		im := g.byName[name]
		if im == nil || !im.IsInput() {
			return nil, fmt.Errorf("%w: no input named %q", ErrGraph, name)
		}
		if d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 {
			return nil, fmt.Errorf("%w: input %q: shape %s has a size < 1", ErrShape, name, descString(d))
		}
		if tooLarge(d) {
			return nil, fmt.Errorf("%w: input %q: shape %s is too large", ErrShape, name, descString(d))
		}
		if needed[im] {
			desc[im] = ops.ImageDescriptor{N: d.N, C: d.C, H: d.H, W: d.W, Format: format, Label: name}
		}
	}
	var missing []string
	for im := range needed {
		if _, ok := desc[im]; !ok {
			missing = append(missing, im.name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("%w: missing the shape of input %q", ErrGraph, missing[0])
	}
	shapeOf := func(im *Image) (ops.ImageDescriptor, bool) {
		d, ok := desc[im]
		return d, ok
	}
	for _, n := range order {
		src := make([]ops.ImageDescriptor, len(n.sources))
		for i, s := range n.sources {
			src[i] = desc[s]
		}
		ds, err := n.op.infer(&inferCtx{node: n.name, shapeOf: shapeOf, format: format}, src)
		if err != nil {
			return nil, err
		}
		if len(ds) != len(n.results) {
			return nil, fmt.Errorf("%w: node %q: %d result shapes for %d results (internal error)", ErrGraph, n.name, len(ds), len(n.results))
		}
		for i, d := range ds {
			if d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 || tooLarge(d) {
				return nil, fmt.Errorf("%w: node %q: result %s is empty or too large", ErrShape, n.name, descString(d))
			}
			d.Label = n.results[i].name
			desc[n.results[i]] = d
		}
	}
	return desc, nil
}

// tooLarge reports whether an image of shape d (sizes >= 1) has more
// bytes than an int64 holds, so that its size cannot even be computed.
func tooLarge(d ops.ImageDescriptor) bool {
	n := uint64(d.N)
	for _, f := range []int{d.C, d.H, d.W} {
		if n > math.MaxInt64/4/uint64(f) {
			return true
		}
		n *= uint64(f)
	}
	return false
}

func bytesOf(d ops.ImageDescriptor) uint64 { return uint64(d.N*d.C*d.H*d.W) * uint64(d.Format.Size()) }

// arenaAlign is the alignment of arena offsets: a multiple of every
// device's storage-buffer offset alignment (at most 256 by the spec).
const arenaAlign = 256

// allocate plans memory: inputs and outputs get images of their own;
// intermediates share one arena, each placed first-fit at the step that
// writes it and freed after the last step that reads it (or an alias).
func (e *Executor) allocate(order []*Node, outs []*Image) error {
	isOut := map[*Image]bool{}
	for _, o := range outs {
		isOut[o] = true
	}
	// Alias roots: an identity node's result is its source's storage, a
	// parameter update's the parameter's.
	root := func(im *Image) *Image {
		for {
			r, ok := e.storage[im]
			if !ok || r == im {
				return im
			}
			im = r
		}
	}
	for _, n := range order {
		if a, ok := n.op.(aliasOp); ok {
			e.storage[n.Result()] = root(n.sources[a.aliasOf()])
		}
		if a, ok := n.op.(condAliasOp); ok {
			var src, res []ops.ImageDescriptor
			for _, s := range n.sources {
				src = append(src, e.desc[s])
			}
			for _, r := range n.results {
				res = append(res, e.desc[r])
			}
			if i, ok := a.aliasIf(&e.opts, src, res); ok {
				e.storage[n.Result()] = root(n.sources[i])
			}
		}
	}
	// Lifetimes of roots in steps.
	first, last := map[*Image]int{}, map[*Image]int{}
	dedicated := map[*Image]bool{}
	for i, n := range order {
		for _, res := range n.results {
			r := root(res)
			if _, ok := first[r]; !ok {
				first[r] = i
			}
			last[r] = max(last[r], i)
		}
		for _, s := range n.sources {
			rs := root(s)
			last[rs] = max(last[rs], i)
		}
	}
	for im := range e.desc {
		r := root(im)
		if im.producer == nil || isOut[im] {
			dedicated[r] = true
		}
	}
	// Dedicated images.
	var roots []*Image
	for im := range e.desc {
		if root(im) == im {
			roots = append(roots, im)
		}
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i].id < roots[j].id })
	for _, r := range roots {
		if !dedicated[r] {
			continue
		}
		img, err := ops.NewImage(e.dev, e.desc[r])
		if err != nil {
			return fmt.Errorf("image %q: %w", r.name, err)
		}
		e.owned = append(e.owned, img)
		e.images[r] = img
		e.plan.Dedicated += bytesOf(e.desc[r])
	}
	// Arena: first fit over free intervals, in order of first write.
	type interval struct{ off, size uint64 }
	var free []interval
	var top uint64
	offsets := map[*Image]uint64{}
	var inter []*Image
	for _, r := range roots {
		if !dedicated[r] {
			inter = append(inter, r)
		}
	}
	sort.SliceStable(inter, func(i, j int) bool { return first[inter[i]] < first[inter[j]] })
	type live struct {
		im  *Image
		end int
	}
	var active []live
	release := func(step int) {
		n := 0
		for _, a := range active {
			if a.end < step {
				size := (bytesOf(e.desc[a.im]) + arenaAlign - 1) / arenaAlign * arenaAlign
				free = append(free, interval{offsets[a.im], size})
				continue
			}
			active[n] = a
			n++
		}
		active = active[:n]
		// Coalesce.
		sort.Slice(free, func(i, j int) bool { return free[i].off < free[j].off })
		m := 0
		for _, f := range free {
			if m > 0 && free[m-1].off+free[m-1].size == f.off {
				free[m-1].size += f.size
				continue
			}
			free[m] = f
			m++
		}
		free = free[:m]
	}
	for _, r := range inter {
		release(first[r])
		size := (bytesOf(e.desc[r]) + arenaAlign - 1) / arenaAlign * arenaAlign
		e.plan.Intermediates += bytesOf(e.desc[r])
		placed := false
		for i, f := range free {
			if f.size >= size {
				offsets[r] = f.off
				free[i] = interval{f.off + size, f.size - size}
				placed = true
				break
			}
		}
		if !placed {
			// Grow the arena, merging a free interval that ends at the top.
			off := top
			if n := len(free); n > 0 && free[n-1].off+free[n-1].size == top {
				off = free[n-1].off
				free = free[:n-1]
			}
			offsets[r] = off
			top = off + size
		}
		active = append(active, live{r, last[r]})
	}
	e.plan.Arena = top
	e.plan.Offsets = map[string]uint64{}
	if top > 0 {
		arena, err := e.dev.NewBuffer(top, "graph arena")
		if err != nil {
			return err
		}
		e.arena = arena
		for _, r := range inter {
			img, err := ops.NewImageOn(arena, offsets[r], e.desc[r])
			if err != nil {
				return err
			}
			e.images[r] = img
			e.plan.Offsets[r.name] = offsets[r]
		}
	}
	for im := range e.desc {
		e.images[im] = e.images[root(im)]
	}
	// Input and output slots, with host staging where device memory is
	// not host-visible.
	var ins []*Image
	for im := range e.desc {
		if im.IsInput() {
			ins = append(ins, im)
		}
	}
	sort.Slice(ins, func(i, j int) bool { return ins[i].id < ins[j].id })
	resident := map[string]bool{}
	for _, name := range e.opts.Resident {
		found := false
		for _, im := range ins {
			found = found || im.name == name
		}
		if !found {
			return fmt.Errorf("%w: Compile: resident input %q is not an input the outputs depend on", ErrGraph, name)
		}
		resident[name] = true
	}
	for _, im := range ins {
		var s *slot
		var err error
		if resident[im.name] {
			d := e.desc[im]
			s = &slot{im: im, img: e.images[im], resident: true, count: d.N * d.C * d.H * d.W}
		} else if s, err = e.newSlot(im); err != nil {
			return err
		}
		e.inputs = append(e.inputs, s)
	}
	seen := map[*Image]bool{}
	for _, im := range outs {
		if seen[im] {
			continue
		}
		seen[im] = true
		s, err := e.newSlot(im)
		if err != nil {
			return err
		}
		e.outputs = append(e.outputs, s)
	}
	return nil
}

func (e *Executor) newSlot(im *Image) (*slot, error) {
	img := e.images[im]
	d := e.desc[im]
	s := &slot{im: im, img: img, count: d.N * d.C * d.H * d.W}
	if img.Mapped() && !e.opts.Pipelined && d.Format == ops.Float32 {
		return s, nil // the host reaches the image itself
	}
	// Staging is float32: a float16 image is converted on the GPU, inside
	// the run's command buffer, not value by value on the host.
	d.Format = ops.Float32
	for i := range e.sets {
		hb, err := e.dev.NewHostBuffer(bytesOf(d), fmt.Sprintf("staging %d of %s", i, im.name))
		if err != nil {
			return nil, err
		}
		e.hosts = append(e.hosts, hb)
		host, err := ops.NewImageOn(hb, 0, d)
		if err != nil {
			return nil, err
		}
		s.host[i] = host
	}
	return s, nil
}

// Shape returns the shape of the image called name, as compiled; false when
// the executor does not compute it.
func (e *Executor) Shape(name string) (ops.ImageDescriptor, bool) {
	for im, d := range e.desc {
		if im.name == name {
			return d, true
		}
	}
	return ops.ImageDescriptor{}, false
}

// Plan returns the memory plan.
func (e *Executor) Plan() MemoryPlan { return e.plan }

// ScratchSize returns the bytes of device memory the convolution-family
// kernels' two shared scratches hold (split-K partial sums, Winograd
// transforms): each grows while a run set is first recorded, to the
// largest need of one of its kernels. 0 before the first run, and with
// CompileOptions.ScratchPerKernel, whose kernels hold their own.
func (e *Executor) ScratchSize() uint64 {
	if e.scratch == nil {
		return 0
	}
	return e.scratch.Size() + e.weightScratch.Size()
}

// Device returns the device the executor runs on.
func (e *Executor) Device() *vk.Device { return e.dev }

// Close releases everything the executor holds; safe twice.
func (e *Executor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, rs := range e.sets {
		if rs.cb != nil {
			errs = append(errs, rs.cb.Close())
		}
	}
	for _, c := range e.closers {
		errs = append(errs, c.Close())
	}
	if e.scratch != nil {
		errs = append(errs, e.scratch.Close())
	}
	if e.weightScratch != nil {
		errs = append(errs, e.weightScratch.Close())
	}
	for _, st := range e.steps {
		if st.state != nil {
			errs = append(errs, st.state.Close())
		}
	}
	for _, im := range e.owned {
		errs = append(errs, im.Close())
	}
	for _, b := range e.hosts {
		errs = append(errs, b.Close())
	}
	if e.arena != nil {
		errs = append(errs, e.arena.Close())
	}
	return errors.Join(errs...)
}

// InferShapes returns the shape of every image the outputs depend on
// (outputs included), given the input shapes, without a device.
func (g *Graph) InferShapes(inputs map[string]ops.ImageDescriptor, outputs ...*Image) (map[*Image]ops.ImageDescriptor, error) {
	if len(outputs) == 0 {
		outputs = g.sinks()
	}
	for _, o := range outputs {
		if o == nil || o.g != g {
			return nil, fmt.Errorf("%w: InferShapes: an output is nil or belongs to another graph", ErrGraph)
		}
	}
	order, err := g.selectNodes(outputs)
	if err != nil {
		return nil, err
	}
	return inferShapes(g, order, outputs, inputs, ops.Float32)
}

// Schedule returns the nodes a run computing outputs (default: the sinks)
// executes, in order: each after the nodes producing its sources, and a
// gradient node after its forward node.
func (g *Graph) Schedule(outputs ...*Image) ([]*Node, error) {
	if len(outputs) == 0 {
		outputs = g.sinks()
	}
	for _, o := range outputs {
		if o == nil || o.g != g {
			return nil, fmt.Errorf("%w: Schedule: an output is nil or belongs to another graph", ErrGraph)
		}
	}
	return g.selectNodes(outputs)
}
