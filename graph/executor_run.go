package graph

import (
	"context"
	"fmt"
	"time"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
)

// runSet is a command buffer recording the whole run with one set of
// host-side staging buffers.
type runSet struct {
	cb  *vk.CommandBuffer
	seq uint64 // the run last started on this set (1-based); 0 none
}

// Pending is a run that Start submitted: Wait returns its outputs.
type Pending struct {
	e       *Executor
	set     int
	seq     uint64
	gpu     time.Duration
	profile []NodeTime
}

// NodeTime is one node's GPU time in a profiled run.
type NodeTime struct {
	Node *Node
	Time time.Duration
}

// Profile returns each node's GPU time in the run, after Wait, when the
// executor was compiled with Profile (nil otherwise): the time from the
// previous node's end to its own.
func (p *Pending) Profile() []NodeTime { return p.profile }

// GPUTime returns the run's GPU time, after Wait, when the executor was
// compiled with Timestamps (0 otherwise).
func (p *Pending) GPUTime() time.Duration { return p.gpu }

// WriteInput sets the values of the resident input name
// (CompileOptions.Resident): N*C*H*W values, NCHW. It waits for the runs
// in flight (they read the input) or ctx's end; the runs started after it
// see the new values.
func (e *Executor) WriteInput(ctx context.Context, name string, data []float32) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("%w: the executor is closed", ErrGraph)
	}
	in := e.inputSlot(name)
	switch {
	case in == nil:
		return fmt.Errorf("%w: WriteInput: no input named %q", ErrGraph, name)
	case !in.resident:
		return fmt.Errorf("%w: WriteInput: input %q is not resident (CompileOptions.Resident): feed it to each run", ErrGraph, name)
	case len(data) != in.count:
		return fmt.Errorf("%w: input %q: %d values, want %d (%s)", ErrShape, name, len(data), in.count, descString(e.desc[in.im]))
	}
	for _, rs := range e.sets {
		if rs.cb != nil {
			if err := rs.cb.Wait(ctx); err != nil {
				return err
			}
		}
	}
	if err := in.img.Write(ctx, data); err != nil {
		return fmt.Errorf("input %q: %w", name, err)
	}
	return nil
}

// inputSlot returns the slot of the input called name, or nil.
func (e *Executor) inputSlot(name string) *slot {
	for _, s := range e.inputs {
		if s.im.name == name {
			return s
		}
	}
	return nil
}

// Recorded returns the commands (dispatches, copies and fills) and the
// barriers between them in the recording of a run, once a run has been
// started (0, 0 before): barriers against commands show how much of a run
// may overlap on the GPU.
func (e *Executor) Recorded() (commands, barriers int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.sets) == 0 || e.sets[0].cb == nil {
		return 0, 0
	}
	return e.sets[0].cb.Commands(), e.sets[0].cb.Barriers()
}

// Run feeds the inputs (N*C*H*W values each, NCHW, by input name), runs the
// graph and returns the outputs by image name: Start, then Wait. It waits
// for the GPU, or returns early with ctx's error (the submitted work still
// finishes; the next run waits for it).
func (e *Executor) Run(ctx context.Context, feeds map[string][]float32) (map[string][]float32, error) {
	e.mu.Lock() // one whole run: concurrent Runs do not interleave
	defer e.mu.Unlock()
	p, err := e.start(ctx, feeds)
	if err != nil {
		return nil, err
	}
	return p.wait(ctx)
}

// Start feeds the inputs and submits one run of the graph without waiting
// for it: exactly one queue submission (the first Start of each run set
// records its command buffer; later ones replay it). With
// CompileOptions.Pipelined it returns as soon as the run set it uses is
// free (the run before the previous one has finished), so the host can
// prepare the next inputs while the GPU works; otherwise it waits for the
// previous run first. Call Wait on the result before starting two more
// runs, or its outputs are overwritten.
func (e *Executor) Start(ctx context.Context, feeds map[string][]float32) (*Pending, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.start(ctx, feeds)
}

func (e *Executor) start(ctx context.Context, feeds map[string][]float32) (*Pending, error) {
	if e.closed {
		return nil, fmt.Errorf("%w: the executor is closed", ErrGraph)
	}
	if len(e.sets) == 0 {
		return nil, fmt.Errorf("%w: the executor was not made by Compile", ErrGraph)
	}
	if err := ctx.Err(); err != nil {
		return nil, err // before touching anything: a cancelled run does no work
	}
	for name := range feeds {
		switch in := e.inputSlot(name); {
		case in == nil:
			return nil, fmt.Errorf("%w: no input named %q", ErrGraph, name)
		case in.resident:
			return nil, fmt.Errorf("%w: input %q is resident: set it with WriteInput, not in a run's feeds", ErrGraph, name)
		}
	}
	for _, s := range e.inputs {
		if s.resident {
			continue
		}
		data, ok := feeds[s.im.name]
		if !ok {
			return nil, fmt.Errorf("%w: input %q not fed", ErrGraph, s.im.name)
		}
		if len(data) != s.count {
			return nil, fmt.Errorf("%w: input %q: %d values, want %d (%s)", ErrShape, s.im.name, len(data), s.count, descString(e.desc[s.im]))
		}
	}
	set := e.next
	rs := e.sets[set]
	// The set's buffers are free once its last run finished; without a
	// second set, that is the previous run.
	if rs.cb != nil {
		if err := rs.cb.Wait(ctx); err != nil {
			return nil, err
		}
	}
	for _, s := range e.inputs {
		if s.resident {
			continue
		}
		dst := s.img
		if s.host[set] != nil {
			dst = s.host[set]
		}
		if err := dst.Write(ctx, feeds[s.im.name]); err != nil {
			return nil, fmt.Errorf("input %q: %w", s.im.name, err)
		}
	}
	if rs.cb == nil {
		cb, err := e.record(set)
		if err != nil {
			return nil, err
		}
		rs.cb = cb
	}
	if err := rs.cb.Commit(); err != nil {
		return nil, err
	}
	e.seq++
	rs.seq = e.seq
	e.next = (set + 1) % len(e.sets)
	return &Pending{e: e, set: set, seq: e.seq}, nil
}

// Wait waits for the run and returns its outputs by image name (or ctx's
// error; the run still finishes).
func (p *Pending) Wait(ctx context.Context) (map[string][]float32, error) {
	if p == nil || p.e == nil {
		return nil, fmt.Errorf("%w: Wait on a nil run", ErrGraph)
	}
	p.e.mu.Lock()
	defer p.e.mu.Unlock()
	return p.wait(ctx)
}

func (p *Pending) wait(ctx context.Context) (map[string][]float32, error) {
	e := p.e
	if e.closed {
		return nil, fmt.Errorf("%w: the executor is closed", ErrGraph)
	}
	rs := e.sets[p.set]
	if rs.seq != p.seq {
		return nil, fmt.Errorf("%w: run %d's outputs were overwritten by run %d: Wait for a run before starting two more", ErrGraph, p.seq, rs.seq)
	}
	if err := rs.cb.Wait(ctx); err != nil {
		return nil, err
	}
	if e.opts.Timestamps || e.opts.Profile {
		t, err := rs.cb.GPUTime()
		if err != nil {
			return nil, err
		}
		p.gpu = t
	}
	if e.opts.Profile {
		marks, err := rs.cb.MarkTimes()
		if err != nil {
			return nil, err
		}
		prev := time.Duration(0)
		p.profile = make([]NodeTime, 0, len(marks))
		for i, m := range marks {
			p.profile = append(p.profile, NodeTime{Node: e.steps[i].node, Time: m - prev})
			prev = m
		}
	}
	out := make(map[string][]float32, len(e.outputs))
	for _, s := range e.outputs {
		src := s.img
		if s.host[p.set] != nil {
			src = s.host[p.set]
		}
		v, err := src.Read(ctx)
		if err != nil {
			return nil, fmt.Errorf("output %q: %w", s.im.name, err)
		}
		out[s.im.name] = v
	}
	return out, nil
}

// record encodes the whole run into one command buffer for run set set:
// input staging copies, every step, output staging copies. Where a
// shared convolution scratch grew on the way (the first recording), it
// records again: the first recording's kernels bound the smaller buffers
// it replaced, which would stay allocated as long as the recording.
func (e *Executor) record(set int) (*vk.CommandBuffer, error) {
	grown := e.scratchGrown()
	cb, err := e.recordOnce(set)
	if err != nil || e.scratch == nil || e.scratchGrown() == grown {
		return cb, err
	}
	if err := cb.Close(); err != nil {
		return nil, err
	}
	return e.recordOnce(set)
}

// scratchGrown is how often the shared scratches have grown.
func (e *Executor) scratchGrown() uint64 {
	if e.scratch == nil {
		return 0
	}
	return e.scratch.Grown() + e.weightScratch.Grown()
}

// recordOnce is record without the second recording.
func (e *Executor) recordOnce(set int) (*vk.CommandBuffer, error) {
	opts := []vk.CommandBufferOption{vk.WithLabel(fmt.Sprintf("graph run (set %d)", set))}
	switch {
	case e.opts.Profile:
		opts = append(opts, vk.WithTimestampMarks(len(e.steps)))
	case e.opts.Timestamps:
		opts = append(opts, vk.WithTimestamps())
	}
	cb, err := e.dev.NewCommandBuffer(opts...)
	if err != nil {
		return nil, err
	}
	e.recording++
	fail := func(err error) (*vk.CommandBuffer, error) {
		cb.Close()
		return nil, err
	}
	for _, s := range e.inputs {
		if s.host[set] != nil {
			if err := ops.Convert(cb, s.host[set], s.img); err != nil {
				return fail(fmt.Errorf("input %q: %w", s.im.name, err))
			}
		}
	}
	for _, st := range e.steps {
		if err := st.encode(cb); err != nil {
			return fail(fmt.Errorf("node %q: %w", st.node.name, err))
		}
		if e.opts.Profile {
			if _, err := cb.Mark(); err != nil {
				return fail(err)
			}
		}
	}
	for _, s := range e.outputs {
		if s.host[set] != nil {
			if err := ops.Convert(cb, s.img, s.host[set]); err != nil {
				return fail(fmt.Errorf("output %q: %w", s.im.name, err))
			}
		}
	}
	return cb, nil
}
