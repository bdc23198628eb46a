package graph

import (
	"fmt"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// step is one node's work in a compiled graph.
type step struct {
	node   *Node
	encode func(cb *vk.CommandBuffer) error
	// state is what a forward step records for its gradient step (a
	// pooling state with the argmax, batch statistics, a dropout mask);
	// it is closed when replaced and with the executor.
	state interface{ Close() error }
}

// setState replaces the step's state, closing the previous one (the
// command buffers that used it keep its memory alive until they finish).
func (st *step) setState(s interface{ Close() error }) {
	if st.state != nil {
		st.state.Close()
	}
	st.state = s
}

// planned allocates a kernel's destination as the image the memory plan
// placed (MPSImageAllocator): the graph lets each kernel's padding policy
// configure it exactly as a standalone EncodeNew would.
type planned struct{ img *ops.Image }

func (p planned) AllocateImage(dev *vk.Device, d ops.ImageDescriptor) (*ops.Image, error) {
	have := p.img.Descriptor()
	if d.N != have.N || d.C != have.C || d.H != have.H || d.W != have.W {
		return nil, fmt.Errorf("%w: the kernel asks for %s, the plan made %s", ErrShape, descString(d), descString(have))
	}
	return p.img, nil
}

// makeSteps builds each node's kernels and encoding.
func (e *Executor) makeSteps(order []*Node, opts *CompileOptions) error {
	byNode := map[*Node]*step{}
	needsState := map[*Node]bool{}
	for _, n := range order {
		if n.forward == nil {
			continue
		}
		if s, ok := n.forward.op.(statefulOp); ok && s.needsState(n.op) {
			needsState[n.forward] = true
		}
	}
	for _, n := range order {
		st := &step{node: n}
		b := &buildCtx{e: e, n: n, st: st, dev: e.dev, opts: opts, needsState: needsState[n]}
		for _, s := range n.sources {
			b.src = append(b.src, e.images[s])
		}
		for _, r := range n.results {
			b.dst = append(b.dst, e.images[r])
		}
		if n.forward != nil {
			b.forward = byNode[n.forward]
		}
		if r, ok := e.storage[n.Result()]; ok && r != n.Result() {
			_, b.aliased = n.op.(condAliasOp)
		}
		if err := n.op.build(b); err != nil {
			if st.state != nil {
				st.state.Close()
			}
			return fmt.Errorf("node %q: %w", n.name, err)
		}
		if st.encode == nil {
			return fmt.Errorf("%w: node %q: no GPU implementation of %s", ErrGraph, n.name, n.op.Name())
		}
		byNode[n] = st
		e.steps = append(e.steps, st)
	}
	return nil
}
