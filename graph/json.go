package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/padding"
)

// File is a graph in vkmps's JSON format (see the package doc):
//
//	{
//	  "inputs":  {"x": [1, 3, 32, 32], "labels": [1, 6, 8, 8]},
//	  "nodes": [
//	    {"name": "p1", "op": "max", "sources": ["x"], "kernel": [3, 3], "stride": [2, 2],
//	     "padding": "same", "edge": "clamp"},
//	    {"name": "p2", "op": "avg", "sources": ["x"], "kernel": [2, 2], "stride": [2, 2],
//	     "padding": {"pad": [0, 0, 1, 1], "ceil_mode": true, "count_include_pad": false}},
//	    {"name": "cat", "op": "concat", "sources": ["p1", "p2"]},
//	    {"name": "loss", "op": "loss", "loss": "mse", "reduction": "mean", "sources": ["cat", "labels"]}
//	  ],
//	  "outputs": ["loss"],
//	  "loss": "loss"
//	}
type File struct {
	// Inputs maps input names to shapes [N, C, H, W]; a shape may be
	// omitted (null) and given when the graph is compiled.
	Inputs map[string][]int `json:"inputs"`
	Nodes  []NodeSpec       `json:"nodes"`
	// Outputs names the images to return; empty means the graph's sinks.
	Outputs []string `json:"outputs,omitempty"`
	// Loss names the loss node `vkmps graph train` derives gradients from.
	Loss string `json:"loss,omitempty"`
}

// NodeSpec is one node of a File: the fields every node has, and the
// whole JSON object, which the node's op reads its own fields from (see
// the package doc for each op's fields; unknown fields are errors).
type NodeSpec struct {
	Name    string   `json:"name"`
	Op      string   `json:"op"`
	Sources []string `json:"sources"`
	// Raw is the node's whole JSON object.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON reads the common fields and keeps the whole object.
func (s *NodeSpec) UnmarshalJSON(b []byte) error {
	var base specBase
	if err := json.Unmarshal(b, &base); err != nil {
		return err
	}
	s.Name, s.Op, s.Sources = base.Name, base.Op, base.Sources
	s.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the node's object as read (or its common fields).
func (s NodeSpec) MarshalJSON() ([]byte, error) {
	if len(s.Raw) > 0 {
		return s.Raw, nil
	}
	return json.Marshal(specBase{Name: s.Name, Op: s.Op, Sources: s.Sources})
}

// specBase holds the fields of every node; each op's JSON struct embeds it.
type specBase struct {
	Name    string   `json:"name"`
	Op      string   `json:"op"`
	Sources []string `json:"sources"`
}

// opSpec is an op's entry in the JSON table: how many sources it takes
// (-1: one or more) and how it is parsed.
type opSpec struct {
	sources int
	doc     string
	parse   func(p *parseCtx) error
}

// opTable maps every JSON op name to its parser; each op file registers
// its own.
var opTable = map[string]opSpec{}

func registerOp(name string, s opSpec) {
	if _, dup := opTable[name]; dup {
		panic("graph: op " + name + " registered twice")
	}
	opTable[name] = s
}

// OpNames returns the JSON op names, sorted.
func OpNames() []string {
	names := make([]string, 0, len(opTable))
	for n := range opTable {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// parseCtx is what an op's parser gets: the graph, the node's name and
// sources, its JSON, and where parameter files are read from.
type parseCtx struct {
	g    *Graph
	name string
	spec NodeSpec
	src  []*Image
	fsys fs.FS // parameter files; nil when the graph was not loaded from a file
}

// decode reads the node's JSON into v (a struct embedding specBase);
// unknown fields are errors.
func (p *parseCtx) decode(v any) error {
	dec := json.NewDecoder(bytes.NewReader(p.spec.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return p.bad("JSON: %v", err)
	}
	return nil
}

// bad returns an ErrGraph naming the node.
func (p *parseCtx) bad(format string, args ...any) error {
	return fmt.Errorf("%w: node %q: %s", ErrGraph, p.name, fmt.Sprintf(format, args...))
}

// errorfNode returns an error of sentinel err naming the node.
func errorfNode(err error, node, format string, args ...any) error {
	return fmt.Errorf("%w: node %q: %s", err, node, fmt.Sprintf(format, args...))
}

// Ints is a list of integers that may also be written as one number.
type Ints []int

// UnmarshalJSON accepts 3 as well as [3, 3].
func (v *Ints) UnmarshalJSON(b []byte) error {
	var one int
	if err := json.Unmarshal(b, &one); err == nil {
		*v = Ints{one}
		return nil
	}
	var many []int
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("want a number or a list of numbers, got %s", b)
	}
	*v = many
	return nil
}

// paddingSpec is the object form of "padding".
type paddingSpec struct {
	Method          *uint32 `json:"method"`
	Pad             Ints    `json:"pad"`
	CeilMode        bool    `json:"ceil_mode"`
	CountIncludePad bool    `json:"count_include_pad"`
	Caffe           Ints    `json:"caffe"`
}

// ParsePolicy parses a padding policy by name: "valid", "same", "full",
// "tf-same", "tf-valid", "tf-avg", "tf-avg-valid".
func ParsePolicy(name string) (padding.Policy, error) {
	switch strings.ToLower(name) {
	case "valid":
		return padding.WithMethod(padding.Valid), nil
	case "same":
		return padding.WithMethod(padding.Same), nil
	case "full":
		return padding.WithMethod(padding.Full), nil
	case "tf-same":
		return padding.TensorFlowSame(), nil
	case "tf-valid":
		return padding.TensorFlowValid(), nil
	case "tf-avg":
		return padding.TensorFlowAveragePooling(), nil
	case "tf-avg-valid":
		return padding.TensorFlowAveragePoolingValidOnly(), nil
	}
	return nil, fmt.Errorf("unknown padding %q (want valid, same, full, tf-same, tf-valid, tf-avg, tf-avg-valid, or an object)", name)
}

func parsePadding(raw json.RawMessage) (padding.Policy, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		return ParsePolicy(name)
	}
	var ps paddingSpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ps); err != nil {
		return nil, fmt.Errorf("padding: %v", err)
	}
	set := 0
	for _, b := range []bool{ps.Method != nil, ps.Pad != nil, ps.Caffe != nil} {
		if b {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("padding: give exactly one of method, pad, caffe")
	}
	switch {
	case ps.Method != nil:
		m := padding.Method(*ps.Method)
		if err := m.Validate(); err != nil {
			return nil, err
		}
		return padding.WithMethod(m), nil
	case ps.Caffe != nil:
		h, w, err := pair("padding.caffe", ps.Caffe, 0)
		if err != nil {
			return nil, err
		}
		return padding.Caffe(h, w), nil
	}
	p, err := pads("padding.pad", ps.Pad)
	if err != nil {
		return nil, err
	}
	return padding.Explicit(p, ps.CeilMode, ps.CountIncludePad), nil
}

// pair parses [H, W] or [N] (both), each >= min.
func pair(what string, v []int, min int) (int, int, error) {
	switch len(v) {
	case 1:
		v = []int{v[0], v[0]}
	case 2:
	default:
		return 0, 0, fmt.Errorf("%s: want 1 or 2 numbers, got %d", what, len(v))
	}
	for _, x := range v {
		if x < min {
			return 0, 0, fmt.Errorf("%s: %d < %d", what, x, min)
		}
	}
	return v[0], v[1], nil
}

// pads parses [top, left, bottom, right], [H, W] or [N], each >= 0.
func pads(what string, v []int) (padding.Pads, error) {
	switch len(v) {
	case 1:
		v = []int{v[0], v[0], v[0], v[0]}
	case 2:
		v = []int{v[0], v[1], v[0], v[1]}
	case 4:
	default:
		return padding.Pads{}, fmt.Errorf("%s: want 1, 2 or 4 numbers, got %d", what, len(v))
	}
	for _, x := range v {
		if x < 0 {
			return padding.Pads{}, fmt.Errorf("%s: %d < 0", what, x)
		}
	}
	return padding.Pads{Top: v[0], Left: v[1], Bottom: v[2], Right: v[3]}, nil
}

// Load reads a graph in the JSON format. Nodes may come in any order; an
// unknown field, op or source, a duplicate name or a cycle is an error
// naming the node.
func Load(r io.Reader) (*Graph, *File, error) { return loadFS(r, nil) }

// LoadFile reads a graph file; parameter files named in it are read
// relative to the file's folder.
func LoadFile(path string) (*Graph, *File, error) {
	// A FIFO or device would block or never end: graph files are files.
	if st, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrGraph, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return loadFS(f, os.DirFS(filepath.Dir(path)))
}

func loadFS(r io.Reader, fsys fs.FS) (*Graph, *File, error) {
	if r == nil {
		return nil, nil, fmt.Errorf("%w: Load: nil reader", ErrGraph)
	}
	var f File
	dec := json.NewDecoder(io.LimitReader(r, 64<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("%w: JSON: %v", ErrGraph, err)
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("%w: JSON: data after the graph object", ErrGraph)
	}
	g, err := f.BuildFS(fsys)
	if err != nil {
		return nil, nil, err
	}
	return g, &f, nil
}

// Shapes returns the input shapes the file gives.
func (f *File) Shapes() (map[string]ops.ImageDescriptor, error) {
	out := map[string]ops.ImageDescriptor{}
	for name, s := range f.Inputs {
		if s == nil {
			continue
		}
		if len(s) != 4 {
			return nil, fmt.Errorf("%w: input %q: shape needs 4 numbers [N, C, H, W], got %d", ErrGraph, name, len(s))
		}
		out[name] = ops.ImageDescriptor{N: s[0], C: s[1], H: s[2], W: s[3]}
	}
	return out, nil
}

// Build makes the graph the file describes.
func (f *File) Build() (*Graph, error) { return f.BuildFS(nil) }

// BuildFS makes the graph the file describes, reading parameter files
// (paths relative to the JSON file) from fsys; with a nil fsys a
// parameter file is an error and parameters without one get their
// initializer.
func (f *File) BuildFS(fsys fs.FS) (*Graph, error) {
	g := New()
	names := make([]string, 0, len(f.Inputs))
	for name := range f.Inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, err := g.Input(name); err != nil {
			return nil, err
		}
	}
	if _, err := f.Shapes(); err != nil {
		return nil, err
	}
	// Order nodes so each comes after its sources' producers.
	byName := map[string]int{}
	for i, n := range f.Nodes {
		if n.Name == "" {
			return nil, fmt.Errorf("%w: node %d has no name", ErrGraph, i)
		}
		if _, dup := byName[n.Name]; dup {
			return nil, fmt.Errorf("%w: node %q is defined twice", ErrGraph, n.Name)
		}
		if _, isInput := f.Inputs[n.Name]; isInput {
			return nil, fmt.Errorf("%w: node %q has the name of an input", ErrGraph, n.Name)
		}
		byName[n.Name] = i
	}
	state := make([]int, len(f.Nodes)) // 0 new, 1 visiting, 2 built
	var build func(i int, path []string) error
	build = func(i int, path []string) error {
		spec := f.Nodes[i]
		switch state[i] {
		case 1:
			return fmt.Errorf("%w: cycle: %s -> %s", ErrGraph, strings.Join(path, " -> "), spec.Name)
		case 2:
			return nil
		}
		state[i] = 1
		for _, s := range spec.Sources {
			if _, isInput := f.Inputs[s]; isInput {
				continue
			}
			j, ok := byName[s]
			if !ok {
				return fmt.Errorf("%w: node %q: unknown source %q", ErrGraph, spec.Name, s)
			}
			if err := build(j, append(path, spec.Name)); err != nil {
				return err
			}
		}
		if err := g.addSpec(spec, fsys); err != nil {
			return err
		}
		state[i] = 2
		return nil
	}
	for i := range f.Nodes {
		if err := build(i, nil); err != nil {
			return nil, err
		}
	}
	for _, o := range f.Outputs {
		if g.Image(o) == nil {
			return nil, fmt.Errorf("%w: output %q: no such image", ErrGraph, o)
		}
	}
	if f.Loss != "" {
		im := g.Image(f.Loss)
		if im == nil || im.producer == nil {
			return nil, fmt.Errorf("%w: loss %q: no such node", ErrGraph, f.Loss)
		}
		if _, ok := im.producer.op.(LossOp); !ok {
			return nil, fmt.Errorf("%w: loss %q is a %s node, not a loss", ErrGraph, f.Loss, im.producer.op.Name())
		}
	}
	return g, nil
}

func (g *Graph) addSpec(s NodeSpec, fsys fs.FS) error {
	p := &parseCtx{g: g, name: s.Name, spec: s, fsys: fsys}
	p.src = make([]*Image, len(s.Sources))
	for i, name := range s.Sources {
		p.src[i] = g.Image(name)
		if p.src[i] == nil {
			return p.bad("unknown source %q", name)
		}
	}
	o, ok := opTable[s.Op]
	if !ok {
		return p.bad("unknown op %q (want one of %s)", s.Op, strings.Join(OpNames(), ", "))
	}
	if o.sources >= 0 && len(p.src) != o.sources {
		return p.bad("%s takes %d sources, got %d", s.Op, o.sources, len(p.src))
	}
	if o.sources < 0 && len(p.src) == 0 {
		return p.bad("%s needs sources", s.Op)
	}
	return o.parse(p)
}
