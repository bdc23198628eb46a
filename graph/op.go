package graph

import (
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// Op is a node's operation with its settings: one of this package's *Op
// types (PoolingOp, ConvolutionOp, LossOp, ...), each in a file of its own
// (op_*.go) that also holds its JSON form, its gradient and how it runs.
// Node.Operation returns it; package graphref evaluates each on the CPU.
type Op interface {
	// Name is the op's graph JSON name ("max", "conv", ...) or, for a
	// gradient node, the gradient's name ("max-gradient").
	Name() string
	// arity is the number of sources, or -1 for one or more.
	arity() int
	// infer returns the shape of each result from the sources' shapes.
	infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error)
	// build makes the node's kernels for a compiled graph and sets the
	// step's encoding.
	build(b *buildCtx) error
}

// gradOp is an Op with a gradient.
type gradOp interface {
	Op
	// gradients adds the gradient nodes of n, a node of this op, given
	// dy, the gradient of n's result (nil for a loss, where the gradient
	// starts), and returns the gradient of each source i with wanted[i]
	// (nil elsewhere). b names them and adds the nodes.
	gradients(b *gradCtx, n *Node, dy *Image, wanted []bool) ([]*Image, error)
}

// aliasOp is an Op whose result shares the storage of one of its sources
// (an identity, a parameter updated in place): it costs no memory.
type aliasOp interface {
	Op
	aliasOf() int
}

// condAliasOp is an Op whose result shares a source's storage when the
// shapes allow it (a bare addition's gradient, unless broadcast).
type condAliasOp interface {
	Op
	aliasIf(opts *CompileOptions, src, res []ops.ImageDescriptor) (int, bool)
}

// statefulOp is a forward Op whose gradient reads a state the forward
// encode records (pooling's argmax, batch norm's statistics, dropout's
// mask); the executor keeps it between the two steps.
type statefulOp interface {
	Op
	needsState(gradient Op) bool
}

// inferCtx is what shape inference knows besides the sources' shapes.
type inferCtx struct {
	node    string
	shapeOf shapeFunc
	format  ops.Format
}

// shapeFunc returns an inferred image shape, false when not known.
type shapeFunc func(*Image) (ops.ImageDescriptor, bool)

// errorf returns an error of sentinel err naming the node.
func (c *inferCtx) errorf(err error, format string, args ...any) error {
	return fmt.Errorf("%w: node %q: %s", err, c.node, fmt.Sprintf(format, args...))
}

// like returns d in the graph's image format (the results of most ops).
func (c *inferCtx) like(d ops.ImageDescriptor) ops.ImageDescriptor {
	d.Format = c.format
	return d
}

// one wraps a single result.
func one(d ops.ImageDescriptor, err error) ([]ops.ImageDescriptor, error) {
	return []ops.ImageDescriptor{d}, err
}

// buildCtx is what an Op's build sees: the node, its images on the device,
// its step, and the executor's settings.
type buildCtx struct {
	e    *Executor
	n    *Node
	st   *step
	src  []*ops.Image
	dst  []*ops.Image
	dev  *vk.Device
	opts *CompileOptions
	// needsState: a gradient step of this forward node reads its state.
	needsState bool
	// forward is the step of the forward node of a gradient node.
	forward *step
	// aliased: the node's result shares a source's storage (condAliasOp).
	aliased bool
}

// training reports whether the graph is compiled for training (batch
// normalization uses batch statistics, dropout drops).
func (b *buildCtx) training() bool { return b.opts.Mode == ModeTraining }

// encode sets the step's encoding.
func (b *buildCtx) encode(f func(cb *vk.CommandBuffer) error) { b.st.encode = f }

// closer registers a kernel or state the executor closes with itself.
func (b *buildCtx) closer(c interface{ Close() error }) { b.e.closers = append(b.e.closers, c) }

// setupConv gives a convolution-family kernel the compile options'
// ConvolutionTuning (when it is not the default) and the executor's
// shared scratch (unless ScratchPerKernel): the weight gradients' own
// for a weight gradient, else the other kernels'.
func (b *buildCtx) setupConv(k any) error {
	ck, ok := k.(interface {
		SetTuning(ops.ConvolutionTuning) error
		SetScratch(*ops.ConvolutionScratch) error
	})
	if !ok {
		return fmt.Errorf("%w: node %q: its kernel %T is not of the convolution family", ErrGraph, b.n.name, k)
	}
	if t := b.opts.ConvolutionTuning; t != (ops.ConvolutionTuning{}) {
		if err := ck.SetTuning(t); err != nil {
			return err
		}
	}
	if _, ok := b.n.op.(*ConvolutionWeightsGradientOp); ok && b.e.weightScratch != nil {
		return ck.SetScratch(b.e.weightScratch)
	}
	if b.e.scratch != nil {
		return ck.SetScratch(b.e.scratch)
	}
	return nil
}

// forwardState returns the state the forward step recorded, for a gradient
// step; an error when the forward node is not compiled.
func (b *buildCtx) forwardStep() (*step, error) {
	if b.forward == nil {
		return nil, fmt.Errorf("%w: its forward node %s is not compiled", ErrGraph, b.n.forward)
	}
	return b.forward, nil
}

// gradCtx names and adds the gradient nodes of one forward node.
type gradCtx struct {
	g     *Graph
	n     *Node
	names []string // the gradient image name of each source
}

// add adds a gradient node of n with one result named after source i's
// gradient.
func (c *gradCtx) add(i int, o Op, sources ...*Image) (*Image, error) {
	nd, err := c.g.add(c.names[i], o, sources, c.n)
	if err != nil {
		return nil, err
	}
	return nd.Result(), nil
}

// addMulti adds one gradient node of n computing the gradients of the
// sources idx (in that order) from sources.
func (c *gradCtx) addMulti(idx []int, o Op, sources ...*Image) ([]*Image, error) {
	names := make([]string, len(idx))
	for k, i := range idx {
		names[k] = c.names[i]
	}
	nd, err := c.g.addMulti(names, o, sources, c.n)
	if err != nil {
		return nil, err
	}
	return nd.Results(), nil
}

func sameDesc(a, b ops.ImageDescriptor) bool {
	return a.N == b.N && a.C == b.C && a.H == b.H && a.W == b.W
}

func descString(d ops.ImageDescriptor) string { return fmt.Sprintf("%dx%dx%dx%d", d.N, d.C, d.H, d.W) }
