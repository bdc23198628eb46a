package graph

import (
	"context"
	"fmt"
	"sort"
)

// uploadParameters writes every parameter's first value into its image.
func (e *Executor) uploadParameters() error {
	for _, im := range e.parameters() {
		v, err := im.InitialValues()
		if err != nil {
			return err
		}
		if err := e.images[im].Write(context.Background(), v); err != nil {
			return fmt.Errorf("parameter %q: %w", im.name, err)
		}
	}
	return nil
}

// parameters returns the compiled graph's parameters by name.
func (e *Executor) parameters() []*Image {
	var ps []*Image
	for im := range e.desc {
		if im.param != nil {
			ps = append(ps, im)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	return ps
}

// Parameters returns the names of the parameters the compiled graph uses,
// sorted.
func (e *Executor) Parameters() []string {
	var names []string
	for _, im := range e.parameters() {
		names = append(names, im.name)
	}
	return names
}

func (e *Executor) parameter(name string) (*Image, error) {
	for im := range e.desc {
		if im.param != nil && im.name == name {
			return im, nil
		}
	}
	return nil, fmt.Errorf("%w: the compiled graph has no parameter %q", ErrGraph, name)
}

// Parameter returns the current values of a parameter (after the runs so
// far: an optimizer updates them), in its layout, after the submitted work
// finished.
func (e *Executor) Parameter(ctx context.Context, name string) ([]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, fmt.Errorf("%w: the executor is closed", ErrGraph)
	}
	im, err := e.parameter(name)
	if err != nil {
		return nil, err
	}
	return e.images[im].Read(ctx)
}

// SetParameter replaces the values of a parameter (N*C*H*W values in its
// layout), after the submitted work finished.
func (e *Executor) SetParameter(ctx context.Context, name string, data []float32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("%w: the executor is closed", ErrGraph)
	}
	im, err := e.parameter(name)
	if err != nil {
		return err
	}
	d := e.desc[im]
	if len(data) != d.N*d.C*d.H*d.W {
		return fmt.Errorf("%w: parameter %q: %d values, want %d (%s)", ErrShape, name, len(data), d.N*d.C*d.H*d.W, descString(d))
	}
	return e.images[im].Write(ctx, data)
}

// optimizerList returns the compiled optimizers in a fixed order.
func (e *Executor) optimizerList() []*compiledOptimizer {
	var out []*compiledOptimizer
	for _, co := range e.optimizers {
		out = append(out, co)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].opt.Descriptor().Type < out[j].opt.Descriptor().Type })
	return out
}

// waitIdle waits for every run set's submitted work.
func (e *Executor) waitIdle(ctx context.Context) error {
	for _, rs := range e.sets {
		if rs.cb != nil {
			if err := rs.cb.Wait(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetLearningRate sets the learning rate of the graph's optimizers for the
// runs started from now on (a schedule), after the submitted runs finish.
// No command buffer is recorded again.
func (e *Executor) SetLearningRate(ctx context.Context, lr float32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.optimizers) == 0 {
		return fmt.Errorf("%w: SetLearningRate: the compiled graph updates no parameter (see Optimize)", ErrGraph)
	}
	if err := e.waitIdle(ctx); err != nil {
		return err
	}
	for _, co := range e.optimizerList() {
		if err := co.opt.SetLearningRate(ctx, lr); err != nil {
			return err
		}
	}
	return nil
}

// TimeStep returns the number of updates the graph's optimizer has taken
// (0 without one), after the submitted runs finish.
func (e *Executor) TimeStep(ctx context.Context) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.waitIdle(ctx); err != nil {
		return 0, err
	}
	for _, co := range e.optimizerList() {
		return co.opt.TimeStep(ctx)
	}
	return 0, nil
}
