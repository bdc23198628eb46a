package graph

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

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

	mu       sync.Mutex
	cb       *vk.CommandBuffer
	recorded bool
	closers  []interface{ Close() error }
	closed   bool
}

// slot is an input or output with its host-side staging when the device
// memory is not host-visible.
type slot struct {
	im    *Image
	img   *ops.Image
	host  *ops.Image // staging image in host memory, or nil
	count int
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
	order, err := g.selectNodes(outs)
	if err != nil {
		return nil, err
	}
	e := &Executor{dev: dev, order: order, storage: map[*Image]*Image{}, images: map[*Image]*ops.Image{}}
	desc, err := inferShapes(g, order, outs, opts.Inputs)
	if err != nil {
		return nil, err
	}
	e.desc = desc
	if err := e.allocate(order, outs); err != nil {
		e.Close()
		return nil, err
	}
	if err := e.makeSteps(order, opts.RecordArgmax); err != nil {
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
		if !used[n.result] {
			out = append(out, n.result)
		}
	}
	return out
}

// selectNodes returns the nodes the outputs depend on, in creation order
// (which is topological: a node is made after its sources' producers).
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
	return order, nil
}

func (e *Executor) shapeOf(im *Image) (ops.ImageDescriptor, bool) {
	d, ok := e.desc[im]
	return d, ok
}

// inferShapes returns every selected image's shape; inputs come from
// shapes, the rest from each node's op in order.
func inferShapes(g *Graph, order []*Node, outs []*Image, shapes map[string]ops.ImageDescriptor) (map[*Image]ops.ImageDescriptor, error) {
	desc := map[*Image]ops.ImageDescriptor{}
	needed := map[*Image]bool{}
	for _, n := range order {
		for _, s := range n.sources {
			if s.producer == nil {
				needed[s] = true
			}
		}
	}
	for _, o := range outs {
		if o.producer == nil {
			needed[o] = true
		}
	}
	for name, d := range shapes {
		im := g.byName[name]
		if im == nil || im.producer != nil {
			return nil, fmt.Errorf("%w: no input named %q", ErrGraph, name)
		}
		if d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 {
			return nil, fmt.Errorf("%w: input %q: shape %s has a size < 1", ErrShape, name, descString(d))
		}
		if tooLarge(d) {
			return nil, fmt.Errorf("%w: input %q: shape %s is too large", ErrShape, name, descString(d))
		}
		if needed[im] {
			desc[im] = ops.ImageDescriptor{N: d.N, C: d.C, H: d.H, W: d.W, Label: name}
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
		d, err := n.op.infer(n.name, src, shapeOf)
		if err != nil {
			return nil, err
		}
		if d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 || tooLarge(d) {
			return nil, fmt.Errorf("%w: node %q: result %s is empty or too large", ErrShape, n.name, descString(d))
		}
		d.Label = n.name
		desc[n.result] = d
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

func bytesOf(d ops.ImageDescriptor) uint64 { return uint64(d.N*d.C*d.H*d.W) * 4 }

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
	// Alias roots: an identity node's result is its source's storage.
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
		if _, ok := n.op.(identityOp); ok {
			e.storage[n.result] = root(n.sources[0])
		}
	}
	// Lifetimes of roots in steps.
	first, last := map[*Image]int{}, map[*Image]int{}
	dedicated := map[*Image]bool{}
	for i, n := range order {
		r := root(n.result)
		if _, ok := first[r]; !ok {
			first[r] = i
		}
		last[r] = max(last[r], i)
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
		if im.producer == nil {
			ins = append(ins, im)
		}
	}
	sort.Slice(ins, func(i, j int) bool { return ins[i].id < ins[j].id })
	for _, im := range ins {
		s, err := e.newSlot(im)
		if err != nil {
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
	if !img.Mapped() {
		hb, err := e.dev.NewHostBuffer(bytesOf(d), "staging "+im.name)
		if err != nil {
			return nil, err
		}
		e.hosts = append(e.hosts, hb)
		host, err := ops.NewImageOn(hb, 0, d)
		if err != nil {
			return nil, err
		}
		s.host = host
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

// Device returns the device the executor runs on.
func (e *Executor) Device() *vk.Device { return e.dev }

// Run feeds the inputs (N*C*H*W values each, NCHW, by input name), runs the
// graph and returns the outputs by image name. It waits for the GPU, or
// returns early with ctx's error (the submitted work still finishes; the
// next Run waits for it).
func (e *Executor) Run(ctx context.Context, feeds map[string][]float32) (map[string][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("%w: the executor is closed", ErrGraph)
	}
	if err := ctx.Err(); err != nil {
		return nil, err // before touching anything: a cancelled run does no work
	}
	for name := range feeds {
		found := false
		for _, s := range e.inputs {
			found = found || s.im.name == name
		}
		if !found {
			return nil, fmt.Errorf("%w: no input named %q", ErrGraph, name)
		}
	}
	if e.cb != nil {
		if err := e.cb.Wait(ctx); err != nil {
			return nil, err
		}
	}
	for _, s := range e.inputs {
		data, ok := feeds[s.im.name]
		if !ok {
			return nil, fmt.Errorf("%w: input %q not fed", ErrGraph, s.im.name)
		}
		if len(data) != s.count {
			return nil, fmt.Errorf("%w: input %q: %d values, want %d (%s)", ErrShape, s.im.name, len(data), s.count, descString(e.desc[s.im]))
		}
		dst := s.img
		if s.host != nil {
			dst = s.host
		}
		if err := dst.Write(ctx, data); err != nil {
			return nil, fmt.Errorf("input %q: %w", s.im.name, err)
		}
	}
	if !e.recorded {
		if err := e.record(); err != nil {
			return nil, err
		}
	}
	if err := e.cb.Commit(); err != nil {
		return nil, err
	}
	if err := e.cb.Wait(ctx); err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(e.outputs))
	for _, s := range e.outputs {
		src := s.img
		if s.host != nil {
			src = s.host
		}
		v, err := src.Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", s.im.name, err)
		}
		out[s.im.name] = v
	}
	return out, nil
}

// record encodes the whole run into one command buffer: input staging
// copies, every step, output staging copies.
func (e *Executor) record() error {
	cb, err := e.dev.NewCommandBuffer(vk.WithLabel("graph run"))
	if err != nil {
		return err
	}
	for _, s := range e.inputs {
		if s.host != nil {
			if err := ops.Copy(cb, s.host, s.img); err != nil {
				cb.Close()
				return fmt.Errorf("input %q: %w", s.im.name, err)
			}
		}
	}
	for _, st := range e.steps {
		if err := st.encode(cb); err != nil {
			cb.Close()
			return fmt.Errorf("node %q: %w", st.node.name, err)
		}
	}
	for _, s := range e.outputs {
		if s.host != nil {
			if err := ops.Copy(cb, s.img, s.host); err != nil {
				cb.Close()
				return fmt.Errorf("output %q: %w", s.im.name, err)
			}
		}
	}
	e.cb, e.recorded = cb, true
	return nil
}

// Close releases everything the executor holds; safe twice.
func (e *Executor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	if e.cb != nil {
		errs = append(errs, e.cb.Close())
	}
	for _, c := range e.closers {
		errs = append(errs, c.Close())
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
	return inferShapes(g, order, outputs, inputs)
}
