package graph

import (
	"errors"
	"fmt"
	"math"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
)

// Errors. Every error names the node or image at fault.
var (
	// ErrGraph: a malformed graph (unknown name, duplicate name, cycle,
	// missing input, a node with the wrong number of sources).
	ErrGraph = errors.New("graph: invalid graph")
	// ErrShape: shapes that do not fit (concatenation of different sizes,
	// addition of different shapes, a loss whose labels differ from its
	// prediction, an input of the wrong length).
	ErrShape = errors.New("graph: shape mismatch")
)

// Graph is a set of image nodes and filter nodes (MPSNNGraph's nodes). Build
// it with Input and the filter methods, derive its training graph with
// Training, and run it with Compile. The zero Graph is empty, like New's.
// A Graph is not safe for concurrent modification.
type Graph struct {
	images []*Image
	nodes  []*Node
	byName map[string]*Image
}

// New returns an empty graph.
func New() *Graph { return &Graph{byName: map[string]*Image{}} }

// Image is a handle to an image of the graph (MPSNNImageNode): a graph
// input, or the result of a filter node.
type Image struct {
	g        *Graph
	id       int
	name     string
	producer *Node // nil for inputs
}

// Name returns the image's name: the input name, or the producing node's.
func (im *Image) Name() string { return im.name }

// Producer returns the node that computes the image, or nil for an input.
func (im *Image) Producer() *Node { return im.producer }

// IsInput reports whether the image is a graph input.
func (im *Image) IsInput() bool { return im.producer == nil }

func (im *Image) String() string { return fmt.Sprintf("image %q", im.name) }

// Node is a filter node (MPSNNFilterNode) or a gradient node
// (MPSNNGradientFilterNode): an operation on source images producing one
// result image.
type Node struct {
	g       *Graph
	id      int
	name    string
	op      op
	sources []*Image
	result  *Image
	// forward is the forward node of a gradient node (its state and source
	// image come from there); nil for forward nodes.
	forward *Node
}

// Name returns the node's name, which is also its result image's name.
func (n *Node) Name() string { return n.name }

// Result returns the node's result image.
func (n *Node) Result() *Image { return n.result }

// Sources returns the node's source images.
func (n *Node) Sources() []*Image { return append([]*Image(nil), n.sources...) }

// Op returns the node's operation name: "max", "avg", "l2", "dilated-max",
// "concat", "add", "loss", "slice", "identity", or a gradient name such as
// "max-gradient" and "loss-gradient".
func (n *Node) Op() string { return n.op.name() }

// Forward returns the forward node of a gradient node, or nil.
func (n *Node) Forward() *Node { return n.forward }

func (n *Node) String() string { return fmt.Sprintf("node %q (%s)", n.name, n.op.name()) }

// Image returns the image called name, or nil.
func (g *Graph) Image(name string) *Image { return g.byName[name] }

// Nodes returns the graph's nodes in creation order.
func (g *Graph) Nodes() []*Node { return append([]*Node(nil), g.nodes...) }

// Inputs returns the graph's input images in creation order.
func (g *Graph) Inputs() []*Image {
	var in []*Image
	for _, im := range g.images {
		if im.producer == nil {
			in = append(in, im)
		}
	}
	return in
}

func (g *Graph) checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrGraph)
	}
	if _, dup := g.byName[name]; dup {
		return fmt.Errorf("%w: name %q is used twice", ErrGraph, name)
	}
	return nil
}

func (g *Graph) newImage(name string, producer *Node) *Image {
	if g.byName == nil { // a zero Graph
		g.byName = map[string]*Image{}
	}
	im := &Image{g: g, id: len(g.images), name: name, producer: producer}
	g.images = append(g.images, im)
	g.byName[name] = im
	return im
}

// Input adds a named input image. Its shape is given when the graph is
// compiled.
func (g *Graph) Input(name string) (*Image, error) {
	if err := g.checkName(name); err != nil {
		return nil, err
	}
	return g.newImage(name, nil), nil
}

// add creates a node of op over sources with result image name.
func (g *Graph) add(name string, o op, sources []*Image, forward *Node) (*Node, error) {
	if err := g.checkName(name); err != nil {
		return nil, err
	}
	for i, s := range sources {
		if s == nil {
			return nil, fmt.Errorf("%w: node %q: source %d is nil", ErrGraph, name, i)
		}
		if s.g != g {
			return nil, fmt.Errorf("%w: node %q: source %q belongs to another graph", ErrGraph, name, s.name)
		}
	}
	if n := o.arity(); n >= 0 && len(sources) != n {
		return nil, fmt.Errorf("%w: node %q (%s) takes %d sources, got %d", ErrGraph, name, o.name(), n, len(sources))
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("%w: node %q (%s) has no source", ErrGraph, name, o.name())
	}
	n := &Node{g: g, id: len(g.nodes), name: name, op: o, sources: sources, forward: forward}
	g.nodes = append(g.nodes, n)
	n.result = g.newImage(name, n)
	return n, nil
}

// PoolingOptions configure a pooling node. The zero value gives MPS's
// node defaults: padding.WithMethod(padding.Same) and EdgeClamp.
type PoolingOptions struct {
	// Padding sizes the result and places the windows; nil means
	// padding.WithMethod(padding.Same).
	Padding padding.Policy
	// EdgeMode; the graph's pooling nodes default to EdgeClamp (MPS), so
	// EdgeZero must be asked for with EdgeSet.
	EdgeMode ops.EdgeMode
	EdgeSet  bool
	// ZeroPad (average pooling under EdgeClamp).
	ZeroPad padding.Pads
}

// Pooling adds a pooling node (MPSCNNPoolingMaxNode, ...AverageNode,
// ...L2NormNode, MPSCNNDilatedPoolingMaxNode) of kind and geometry over src.
func (g *Graph) Pooling(name string, kind ops.PoolingKind, geom ops.Geometry, src *Image, o PoolingOptions) (*Node, error) {
	if _, ok := poolNames[kind]; !ok {
		return nil, fmt.Errorf("%w: node %q: unknown pooling kind %v", ErrGraph, name, kind)
	}
	if geom.DilationX == 0 {
		geom.DilationX = 1
	}
	if geom.DilationY == 0 {
		geom.DilationY = 1
	}
	if (kind == ops.KindAverage || kind == ops.KindL2Norm) && (geom.DilationX != 1 || geom.DilationY != 1) {
		return nil, fmt.Errorf("%w: node %q: %v has no dilation", ErrGraph, name, kind)
	}
	if kind == ops.KindMax && (geom.DilationX != 1 || geom.DilationY != 1) {
		kind = ops.KindDilatedMax
	}
	if err := validGeometry(name, geom); err != nil {
		return nil, err
	}
	edge := ops.EdgeClamp
	if o.EdgeSet {
		edge = o.EdgeMode
	}
	if !edge.Valid() {
		return nil, fmt.Errorf("%w: node %q: edge mode %v", ErrGraph, name, edge)
	}
	pol := o.Padding
	if pol == nil {
		pol = padding.WithMethod(padding.Same)
	}
	return g.add(name, &poolOp{kind: kind, geom: geom, policy: pol, edge: edge, zeroPad: o.ZeroPad}, []*Image{src}, nil)
}

func validGeometry(name string, g ops.Geometry) error {
	for _, v := range []struct {
		what string
		n    int
	}{{"kernel width", g.KernelWidth}, {"kernel height", g.KernelHeight}, {"stride x", g.StrideX}, {"stride y", g.StrideY},
		{"dilation x", g.DilationX}, {"dilation y", g.DilationY}} {
		if v.n < 1 {
			return fmt.Errorf("%w: node %q: %s %d < 1", ErrGraph, name, v.what, v.n)
		}
	}
	return nil
}

// Concat adds a node concatenating its sources along the feature channels
// (they must agree in batch size, height and width).
func (g *Graph) Concat(name string, sources ...*Image) (*Node, error) {
	return g.add(name, concatOp{}, sources, nil)
}

// Add adds a node computing a + b (same shapes).
func (g *Graph) Add(name string, a, b *Image) (*Node, error) {
	return g.add(name, addOp{}, []*Image{a, b}, nil)
}

// Loss adds a loss node of pred against labels (MPSCNNLoss). With
// ReductionNone its result has one value per item; otherwise it is
// 1×1×1×1. Training derives the gradients of a graph ending in a loss.
func (g *Graph) Loss(name string, d ops.LossDescriptor, pred, labels *Image) (*Node, error) {
	if d.Type != ops.LossMeanSquaredError && d.Type != ops.LossSoftmaxCrossEntropy {
		return nil, fmt.Errorf("%w: node %q: unknown loss type %d", ErrGraph, name, int(d.Type))
	}
	if d.Reduction < ops.ReductionNone || d.Reduction > ops.ReductionMean {
		return nil, fmt.Errorf("%w: node %q: unknown reduction %d", ErrGraph, name, int(d.Reduction))
	}
	if w := float64(d.Weight); math.IsNaN(w) || math.IsInf(w, 0) {
		return nil, fmt.Errorf("%w: node %q: weight %v is not finite", ErrGraph, name, d.Weight)
	}
	return g.add(name, lossOp{desc: d}, []*Image{pred, labels}, nil)
}

// Slice adds a node taking channels [offset, offset+count) of src.
func (g *Graph) Slice(name string, src *Image, offset, count int) (*Node, error) {
	if offset < 0 || count < 1 {
		return nil, fmt.Errorf("%w: node %q: slice of channels [%d, %d)", ErrGraph, name, offset, offset+count)
	}
	return g.add(name, sliceOp{offset: offset, count: count}, []*Image{src}, nil)
}
