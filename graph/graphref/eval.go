// Package graphref runs a graph of package graph on the CPU in float64
// with the reference kernels of package ops/ref: the same shapes, padding
// policies and gradient rules as a compiled graph, for checking GPU
// results and taking finite differences. It is a test and tooling aid:
// package graph itself does not depend on it.
package graphref

import (
	"fmt"
	"sort"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/ops/ref"
)

// Eval runs g on the CPU. Inputs are given by name with their shapes;
// parameters take their first values unless feeds gives others by name.
// It returns the outputs (default: the graph's sinks) by name. Batch
// normalization and dropout run as in mode.
func Eval(g *graph.Graph, shapes map[string]ops.ImageDescriptor, feeds map[string][]float64, outputs ...*graph.Image) (map[string][]float64, error) {
	return EvalMode(g, graph.ModeInference, shapes, feeds, outputs...)
}

// EvalMode is Eval in the given mode.
func EvalMode(g *graph.Graph, mode graph.Mode, shapes map[string]ops.ImageDescriptor, feeds map[string][]float64, outputs ...*graph.Image) (map[string][]float64, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: Eval: nil graph", graph.ErrGraph)
	}
	order, err := g.Schedule(outputs...)
	if err != nil {
		return nil, err
	}
	desc, err := g.InferShapes(shapes, outputs...)
	if err != nil {
		return nil, err
	}
	if len(outputs) == 0 {
		for _, n := range order {
			outputs = append(outputs, n.Results()...)
		}
		outputs = sinks(order, outputs)
	}
	val := map[*graph.Image]ref.Tensor[float64]{}
	for im, d := range desc {
		if im.Producer() != nil {
			continue
		}
		data, ok := feeds[im.Name()]
		if !ok && im.IsParameter() {
			v, err := im.InitialValues()
			if err != nil {
				return nil, err
			}
			data = make([]float64, len(v))
			for i, x := range v {
				data[i] = float64(x)
			}
			ok = true
		}
		if !ok {
			return nil, fmt.Errorf("%w: input %q not fed", graph.ErrGraph, im.Name())
		}
		t, err := ref.TensorOf(d.N, d.C, d.H, d.W, data)
		if err != nil {
			return nil, fmt.Errorf("%w: input %q: %v", graph.ErrShape, im.Name(), err)
		}
		val[im] = t
	}
	states := map[*graph.Node]any{}
	for _, n := range order {
		ev, ok := table[n.Op()]
		if !ok {
			return nil, fmt.Errorf("%w: node %q: no CPU implementation of %s", graph.ErrGraph, n.Name(), n.Op())
		}
		c := &evalCtx{n: n, mode: mode, desc: desc, states: states, values: val}
		for _, s := range n.Sources() {
			c.src = append(c.src, val[s])
		}
		for _, r := range n.Results() {
			d := desc[r]
			c.dst = append(c.dst, ref.NewTensor[float64](d.N, d.C, d.H, d.W))
		}
		if err := ev(c); err != nil {
			return nil, fmt.Errorf("node %q: %w", n.Name(), err)
		}
		for i, r := range n.Results() {
			val[r] = c.dst[i]
		}
	}
	res := make(map[string][]float64, len(outputs))
	for _, o := range outputs {
		v, ok := val[o]
		if !ok {
			return nil, fmt.Errorf("%w: output %q is not computed", graph.ErrGraph, o.Name())
		}
		res[o.Name()] = v.Data
	}
	return res, nil
}

// sinks returns the images of cands no node of order reads.
func sinks(order []*graph.Node, cands []*graph.Image) []*graph.Image {
	read := map[*graph.Image]bool{}
	for _, n := range order {
		for _, s := range n.Sources() {
			read[s] = true
		}
	}
	var out []*graph.Image
	for _, c := range cands {
		if !read[c] {
			out = append(out, c)
		}
	}
	return out
}

// evalCtx is one node's evaluation: its sources and results.
type evalCtx struct {
	n      *graph.Node
	mode   graph.Mode
	src    []ref.Tensor[float64]
	dst    []ref.Tensor[float64]
	desc   map[*graph.Image]ops.ImageDescriptor
	states map[*graph.Node]any // what forward nodes keep for their gradients
	// values are every image computed so far (a gradient node reads its
	// forward node's parameters there).
	values map[*graph.Image]ref.Tensor[float64]
}

func (c *evalCtx) shapeOf(im *graph.Image) (ops.ImageDescriptor, bool) {
	d, ok := c.desc[im]
	return d, ok
}

// srcDesc returns the shape of source i.
func (c *evalCtx) srcDesc(i int) ops.ImageDescriptor { return c.desc[c.n.Sources()[i]] }

// evaluator computes a node's results from its sources.
type evaluator func(c *evalCtx) error

// table maps op names (Node.Op) to their CPU evaluation; each op family's
// file registers its own.
var table = map[string]evaluator{}

func register(name string, ev evaluator) {
	if _, dup := table[name]; dup {
		panic("graphref: op " + name + " registered twice")
	}
	table[name] = ev
}

// Ops returns the op names Eval knows, sorted.
func Ops() []string {
	var names []string
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// missing lists the graph JSON ops Eval does not know (a test keeps it
// empty).
func missing() []string {
	var out []string
	for _, n := range graph.OpNames() {
		if _, ok := table[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

// copyChannels copies count channels of src from channel so into dst from
// channel do, for every batch image.
func copyChannels(src ref.Tensor[float64], so int, dst *ref.Tensor[float64], do, count int) {
	plane := src.H * src.W
	for b := 0; b < src.N; b++ {
		from := (b*src.C + so) * plane
		to := (b*dst.C + do) * plane
		copy(dst.Data[to:to+count*plane], src.Data[from:from+count*plane])
	}
}
