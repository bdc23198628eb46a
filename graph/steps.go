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
	// state is the gradient state a forward pooling step records for its
	// gradient step.
	state *ops.PoolingGradientState
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

// makeSteps builds each node's kernel and encoding.
func (e *Executor) makeSteps(order []*Node, recordArgmax bool) error {
	byNode := map[*Node]*step{}
	needsState := map[*Node]bool{}
	for _, n := range order {
		if _, ok := n.op.(*poolGradOp); ok {
			needsState[n.forward] = true
		}
	}
	for _, n := range order {
		st := &step{node: n}
		if err := e.makeStep(st, byNode, needsState[n], recordArgmax); err != nil {
			return fmt.Errorf("node %q: %w", n.name, err)
		}
		byNode[n] = st
		e.steps = append(e.steps, st)
	}
	return nil
}

func (e *Executor) makeStep(st *step, byNode map[*Node]*step, needsState, recordArgmax bool) error {
	n := st.node
	dst := e.images[n.result]
	src := make([]*ops.Image, len(n.sources))
	for i, s := range n.sources {
		src[i] = e.images[s]
	}
	switch o := n.op.(type) {
	case *poolOp:
		k, err := ops.NewPooling(e.dev, o.kind, o.geom)
		if err != nil {
			return err
		}
		p := k.Properties()
		p.Padding, p.EdgeMode, p.Allocator, p.Label = o.policy, o.edge, planned{dst}, n.name
		if a, ok := k.(*ops.PoolingAverage); ok {
			a.ZeroPad = o.zeroPad
		}
		if !needsState {
			st.encode = func(cb *vk.CommandBuffer) error {
				_, err := k.EncodeNew(cb, src[0])
				return err
			}
			return nil
		}
		if recordArgmax {
			k.SetRecordArgmax(true)
		}
		st.encode = func(cb *vk.CommandBuffer) error {
			_, s, err := k.EncodeNewWithState(cb, src[0])
			if err != nil {
				return err
			}
			if st.state != nil {
				st.state.Close()
			}
			st.state = s
			return nil
		}
	case *poolGradOp:
		k, err := ops.NewPoolingGradient(e.dev, o.fwd.kind, o.fwd.geom)
		if err != nil {
			return err
		}
		p := k.Properties()
		p.Allocator, p.Label = planned{dst}, n.name
		fwd := byNode[n.forward]
		if fwd == nil {
			return fmt.Errorf("%w: its forward node %s is not compiled", ErrGraph, n.forward)
		}
		st.encode = func(cb *vk.CommandBuffer) error {
			_, err := k.EncodeNew(cb, src[0], src[1], fwd.state)
			return err
		}
	case concatOp:
		st.encode = func(cb *vk.CommandBuffer) error {
			off := 0
			for _, s := range src {
				v, err := dst.ChannelView(off, s.C())
				if err != nil {
					return err
				}
				if err := ops.Copy(cb, s, v); err != nil {
					return err
				}
				off += s.C()
			}
			return nil
		}
	case sliceOp:
		return e.sliceStep(st, src[0], dst, o.offset, o.count)
	case *concatSliceOp:
		off, count, err := o.span(n.name, e.shapeOf)
		if err != nil {
			return err
		}
		return e.sliceStep(st, src[0], dst, off, count)
	case *unsliceOp:
		so := o.slice.op.(sliceOp)
		st.encode = func(cb *vk.CommandBuffer) error {
			if err := ops.Fill(cb, dst, 0); err != nil {
				return err
			}
			v, err := dst.ChannelView(so.offset, so.count)
			if err != nil {
				return err
			}
			return ops.Copy(cb, src[0], v)
		}
	case addOp:
		k, err := ops.NewAdd(e.dev)
		if err != nil {
			return err
		}
		st.encode = func(cb *vk.CommandBuffer) error { return k.Encode(cb, src[0], src[1], dst) }
	case identityOp:
		st.encode = func(*vk.CommandBuffer) error { return nil } // the result is the source's storage
	case lossOp:
		k, err := ops.NewLoss(e.dev, o.desc)
		if err != nil {
			return err
		}
		e.closers = append(e.closers, k)
		st.encode = func(cb *vk.CommandBuffer) error { return k.Encode(cb, src[0], src[1], dst) }
	case lossGradOp:
		k, err := ops.NewLoss(e.dev, o.desc)
		if err != nil {
			return err
		}
		e.closers = append(e.closers, k)
		st.encode = func(cb *vk.CommandBuffer) error { return k.EncodeGradient(cb, src[0], src[1], dst) }
	default:
		return fmt.Errorf("%w: no GPU implementation of %s", ErrGraph, n.op.name())
	}
	return nil
}

func (e *Executor) sliceStep(st *step, src, dst *ops.Image, off, count int) error {
	st.encode = func(cb *vk.CommandBuffer) error {
		v, err := src.ChannelView(off, count)
		if err != nil {
			return err
		}
		return ops.Copy(cb, v, dst)
	}
	return nil
}
