package graph

import (
	"context"
	"fmt"
	"sort"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// OptimizerSpec is an optimizer shared by the update nodes Optimize adds:
// a compiled graph makes one ops.Optimizer of it, whose time step every
// update of a run shares (MPS's timeStep).
type OptimizerSpec struct {
	Desc ops.OptimizerDescriptor
}

// UpdateOp applies an optimizer to a trainable parameter in place
// (MPSNNOptimizer encode): sources the parameter and its gradient; its
// result is the parameter's storage, updated.
type UpdateOp struct{ Optimizer *OptimizerSpec }

func (UpdateOp) Name() string     { return "update" }
func (UpdateOp) arity() int       { return 2 }
func (UpdateOp) aliasOf() int     { return 0 }
func (o UpdateOp) String() string { return "update(" + o.Optimizer.Desc.Type.String() + ")" }

func (UpdateOp) infer(c *inferCtx, src []ops.ImageDescriptor) ([]ops.ImageDescriptor, error) {
	if !sameDesc(src[0], src[1]) {
		return nil, c.errorf(ErrShape, "parameter %s and gradient %s differ", descString(src[0]), descString(src[1]))
	}
	return one(src[0], nil)
}

// optimizerOf returns the executor's optimizer for spec, made on first use.
func (e *Executor) optimizerOf(spec *OptimizerSpec) (*compiledOptimizer, error) {
	if co := e.optimizers[spec]; co != nil {
		return co, nil
	}
	opt, err := ops.NewOptimizer(e.dev, spec.Desc)
	if err != nil {
		return nil, err
	}
	co := &compiledOptimizer{opt: opt, states: map[string]*ops.OptimizerState{}, steppedIn: -1}
	if e.optimizers == nil {
		e.optimizers = map[*OptimizerSpec]*compiledOptimizer{}
	}
	e.optimizers[spec] = co
	e.closers = append(e.closers, opt)
	return co, nil
}

// compiledOptimizer is an optimizer of a compiled graph and the state of
// each parameter it updates.
type compiledOptimizer struct {
	opt       *ops.Optimizer
	states    map[string]*ops.OptimizerState
	steppedIn int // the recording whose EncodeStep was encoded
}

func (o UpdateOp) build(b *buildCtx) error {
	co, err := b.e.optimizerOf(o.Optimizer)
	if err != nil {
		return err
	}
	param, grad := b.src[0], b.src[1]
	state, err := co.opt.NewState(context.Background(), param)
	if err != nil {
		return err
	}
	b.closer(state)
	co.states[b.n.sources[0].name] = state
	e := b.e
	b.encode(func(cb *vk.CommandBuffer) error {
		// The first update of each recording advances the time step.
		if co.steppedIn != e.recording {
			if err := co.opt.EncodeStep(cb); err != nil {
				return err
			}
			co.steppedIn = e.recording
		}
		return co.opt.Encode(cb, param, grad, state)
	})
	return nil
}

// Optimize prepares training with the optimizer d: it derives the
// gradient of every trainable, unfrozen parameter the loss depends on
// (TrainingFor) and adds an update node for each, named "update(PARAM)".
// It returns the update images: name them in CompileOptions.Compute so
// that every run performs the whole training step — forward, gradients
// and every update — in one command buffer, one queue submission.
func (g *Graph) Optimize(loss *Node, d ops.OptimizerDescriptor) ([]*Image, error) {
	var params []*Image
	for _, p := range g.Parameters() {
		if p.Trainable() {
			params = append(params, p)
		}
	}
	if len(params) == 0 {
		return nil, fmt.Errorf("%w: Optimize: the graph has no trainable parameter", ErrGraph)
	}
	grads, err := g.TrainingFor(loss, params)
	if err != nil {
		return nil, err
	}
	spec := &OptimizerSpec{Desc: d}
	var out []*Image
	sort.Slice(params, func(i, j int) bool { return params[i].name < params[j].name })
	for _, p := range params {
		gp := grads[p]
		if gp == nil {
			continue // the loss does not depend on it
		}
		n, err := g.add("update("+p.name+")", UpdateOp{Optimizer: spec}, []*Image{p, gp}, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, n.Result())
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: Optimize: the loss %q depends on no trainable parameter", ErrGraph, loss.name)
	}
	return out, nil
}
