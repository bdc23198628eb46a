package graph

import (
	"errors"
	"fmt"

	"github.com/vkmps/vkmps/ops"
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
// it with Input, Parameter and the filter methods, derive its training
// graph with Training, and run it with Compile. The zero Graph is empty,
// like New's. A Graph is not safe for concurrent modification.
type Graph struct {
	images []*Image
	nodes  []*Node
	byName map[string]*Image
}

// New returns an empty graph.
func New() *Graph { return &Graph{byName: map[string]*Image{}} }

// Image is a handle to an image of the graph (MPSNNImageNode): a graph
// input, a parameter the graph owns (weights, biases, ...), or a result of
// a filter node.
type Image struct {
	g        *Graph
	id       int
	name     string
	producer *Node // nil for inputs and parameters
	param    *param
}

// Name returns the image's name: the input or parameter name, or the
// producing node's result name.
func (im *Image) Name() string { return im.name }

// Producer returns the node that computes the image, or nil for an input
// or a parameter.
func (im *Image) Producer() *Node { return im.producer }

// IsInput reports whether the image is a graph input (fed at each run).
func (im *Image) IsInput() bool { return im.producer == nil && im.param == nil }

// IsParameter reports whether the image is a parameter the graph owns.
func (im *Image) IsParameter() bool { return im.param != nil }

func (im *Image) String() string {
	if im.param != nil {
		return fmt.Sprintf("parameter %q", im.name)
	}
	return fmt.Sprintf("image %q", im.name)
}

// Node is a filter node (MPSNNFilterNode) or a gradient node
// (MPSNNGradientFilterNode): an operation on source images producing one
// result image, or, for some gradient nodes, several (a batch
// normalization's gradient gives dx, dgamma and dbeta).
type Node struct {
	g       *Graph
	id      int
	name    string
	op      Op
	sources []*Image
	results []*Image
	// forward is the forward node of a gradient node (its state and source
	// image come from there); nil for forward nodes.
	forward *Node
}

// Name returns the node's name, which is also its (first) result's name.
func (n *Node) Name() string { return n.name }

// Result returns the node's (first) result image.
func (n *Node) Result() *Image { return n.results[0] }

// Results returns every result image of the node.
func (n *Node) Results() []*Image { return append([]*Image(nil), n.results...) }

// Sources returns the node's source images (parameters included).
func (n *Node) Sources() []*Image { return append([]*Image(nil), n.sources...) }

// Op returns the node's operation name: its graph JSON op ("max", "conv",
// "loss", ...) or a gradient name such as "max-gradient".
func (n *Node) Op() string { return n.op.Name() }

// Operation returns the node's operation with its settings: one of the
// *Op types of this package (PoolingOp, ConvolutionOp, ...).
func (n *Node) Operation() Op { return n.op }

// Forward returns the forward node of a gradient node, or nil.
func (n *Node) Forward() *Node { return n.forward }

func (n *Node) String() string { return fmt.Sprintf("node %q (%s)", n.name, n.op.Name()) }

// Image returns the image called name, or nil.
func (g *Graph) Image(name string) *Image { return g.byName[name] }

// Nodes returns the graph's nodes in creation order.
func (g *Graph) Nodes() []*Node { return append([]*Node(nil), g.nodes...) }

// Inputs returns the graph's input images in creation order (parameters
// are not inputs).
func (g *Graph) Inputs() []*Image {
	var in []*Image
	for _, im := range g.images {
		if im.IsInput() {
			in = append(in, im)
		}
	}
	return in
}

// Parameters returns the graph's parameters in creation order.
func (g *Graph) Parameters() []*Image {
	var ps []*Image
	for _, im := range g.images {
		if im.param != nil {
			ps = append(ps, im)
		}
	}
	return ps
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

// add creates a node of op over sources with one result image, name.
func (g *Graph) add(name string, o Op, sources []*Image, forward *Node) (*Node, error) {
	return g.addMulti([]string{name}, o, sources, forward)
}

// addMulti creates a node of op over sources with a result image per name;
// the node is named after the first.
func (g *Graph) addMulti(names []string, o Op, sources []*Image, forward *Node) (*Node, error) {
	name := names[0]
	seen := map[string]bool{}
	for _, r := range names {
		if err := g.checkName(r); err != nil {
			return nil, err
		}
		if seen[r] {
			return nil, fmt.Errorf("%w: node %q: result name %q is used twice", ErrGraph, name, r)
		}
		seen[r] = true
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
		return nil, fmt.Errorf("%w: node %q (%s) takes %d sources, got %d", ErrGraph, name, o.Name(), n, len(sources))
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("%w: node %q (%s) has no source", ErrGraph, name, o.Name())
	}
	n := &Node{g: g, id: len(g.nodes), name: name, op: o, sources: sources, forward: forward}
	g.nodes = append(g.nodes, n)
	for _, r := range names {
		n.results = append(n.results, g.newImage(r, n))
	}
	return n, nil
}

// absorbSum returns the sources of im's producer and true where that
// producer is a SumOp node (Training's, adding two contributions to a
// gradient) and the graph's newest node, which nothing reads yet, and
// removes that node and its result: the node that was to read im reads
// the two contributions instead.
func (g *Graph) absorbSum(im *Image) (a, b *Image, ok bool) {
	n := im.producer
	if n == nil || len(g.nodes) == 0 || g.nodes[len(g.nodes)-1] != n || len(n.results) != 1 ||
		len(g.images) == 0 || g.images[len(g.images)-1] != im {
		return nil, nil, false
	}
	if _, sum := n.op.(SumOp); !sum {
		return nil, nil, false
	}
	delete(g.byName, im.name)
	g.images = g.images[:len(g.images)-1]
	g.nodes = g.nodes[:len(g.nodes)-1]
	return n.sources[0], n.sources[1], true
}

// sourceImages is a helper for node constructors: the data sources
// followed by the parameters.
func sourceImages(data []*Image, params ...*Image) []*Image {
	return append(append([]*Image(nil), data...), params...)
}

// descOf returns the shape of a parameter (known when it was made).
func (im *Image) paramDesc() (ops.ImageDescriptor, bool) {
	if im.param == nil {
		return ops.ImageDescriptor{}, false
	}
	return im.param.desc, true
}
