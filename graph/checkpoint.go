package graph

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nlpodyssey/safetensors"

	"github.com/vkmps/vkmps/ops"
)

// Checkpoints. A compiled graph's parameters can be saved as one .npy file
// each (SaveParameters: DIR/NAME.npy, NAME the parameter's name such as
// "c1.weights", in the layout it was read: PyTorch's), and its whole
// training state — parameters, every optimizer state vector and the
// optimizer's time step — as one safetensors file (SaveCheckpoint), so
// that training continues exactly where it stopped.

// paramShape returns a parameter's shape in its own layout.
func (im *Image) paramShape() []int {
	if len(im.param.shape) > 0 {
		return im.param.shape
	}
	d := im.param.desc
	return []int{d.N, d.C, d.H, d.W}
}

// sameValues reports whether shapes a and b hold the same values in the
// same order: equal once sizes of 1 are dropped.
func sameValues(a, b []int) bool {
	strip := func(s []int) []int {
		var out []int
		for _, d := range s {
			if d != 1 {
				out = append(out, d)
			}
		}
		return out
	}
	x, y := strip(a), strip(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// SaveParameters writes every parameter of the compiled graph to
// dir/NAME.npy (float32, in the parameter's layout), atomically, after the
// submitted runs finish. dir is created when missing.
func (e *Executor) SaveParameters(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, im := range e.parameters() {
		v, err := e.Parameter(ctx, im.name)
		if err != nil {
			return err
		}
		shape := im.paramShape()
		if err := writeFileAtomic(filepath.Join(dir, im.name+".npy"), func(w io.Writer) error { return WriteNPY(w, v, shape) }); err != nil {
			return fmt.Errorf("parameter %q: %w", im.name, err)
		}
	}
	return nil
}

// LoadParameters reads every parameter of the compiled graph from
// dir/NAME.npy (as SaveParameters writes them, or PyTorch's tensors saved
// with numpy.save). A missing file or one of another shape is an error
// naming the parameter, and then no parameter is changed.
func (e *Executor) LoadParameters(ctx context.Context, dir string) error {
	vals := map[string][]float32{}
	for _, im := range e.parameters() {
		v, shape, err := readNPYFS(os.DirFS(dir), im.name+".npy")
		if err != nil {
			return fmt.Errorf("parameter %q: %w", im.name, err)
		}
		if !sameValues(shape, im.paramShape()) {
			return fmt.Errorf("%w: parameter %q: %s has shape %v, want %v", ErrShape, im.name, filepath.Join(dir, im.name+".npy"), shape, im.paramShape())
		}
		vals[im.name] = v
	}
	for name, v := range vals {
		if err := e.SetParameter(ctx, name, v); err != nil {
			return err
		}
	}
	return nil
}

// checkpointFormat names the safetensors layout SaveCheckpoint writes.
const checkpointFormat = "vkmps-checkpoint-1"

// stateVectors returns the optimizer state images of parameter name, by
// their checkpoint suffix.
func stateVectors(co *compiledOptimizer, name string) map[string]*ops.Image {
	out := map[string]*ops.Image{}
	s := co.states[name]
	if s == nil {
		return out
	}
	for suffix, im := range map[string]*ops.Image{"momentum": s.Momentum(), "velocity": s.Velocity(), "maximum_velocity": s.MaximumVelocity()} {
		if im != nil {
			out[suffix] = im
		}
	}
	return out
}

// f32View is a float32 tensor for safetensors.
type f32View struct {
	shape []uint64
	data  []byte
}

func (v f32View) DType() safetensors.DType { return safetensors.F32 }
func (v f32View) Shape() []uint64          { return v.shape }
func (v f32View) Data() []byte             { return v.data }
func (v f32View) DataLen() uint64          { return uint64(len(v.data)) }

func newF32View(v []float32, shape []int) f32View {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	s := make([]uint64, len(shape))
	for i, d := range shape {
		s[i] = uint64(d)
	}
	return f32View{shape: s, data: b}
}

// SaveCheckpoint writes the whole training state to path as safetensors,
// atomically, after the submitted runs finish: every parameter (named as
// the parameter, in its layout), every optimizer state vector
// ("NAME/momentum", "NAME/velocity", "NAME/maximum_velocity") and, in the
// metadata, the optimizer's time step.
func (e *Executor) SaveCheckpoint(ctx context.Context, path string) error {
	tensors := map[string]f32View{}
	for _, im := range e.parameters() {
		v, err := e.Parameter(ctx, im.name)
		if err != nil {
			return err
		}
		tensors[im.name] = newF32View(v, im.paramShape())
	}
	meta := map[string]string{"format": checkpointFormat}
	e.mu.Lock()
	err := func() error {
		if err := e.waitIdle(ctx); err != nil {
			return err
		}
		for i, co := range e.optimizerList() {
			t, err := co.opt.TimeStep(ctx)
			if err != nil {
				return err
			}
			meta["optimizer"] = co.opt.Descriptor().Type.String()
			meta["time_step"] = strconv.Itoa(t)
			if i > 0 {
				return fmt.Errorf("%w: SaveCheckpoint: the graph has %d optimizers; checkpoints hold one", ErrGraph, len(e.optimizers))
			}
			for name := range co.states {
				im, _ := e.parameter(name)
				for suffix, st := range stateVectors(co, name) {
					v, err := st.Read(ctx)
					if err != nil {
						return err
					}
					tensors[name+"/"+suffix] = newF32View(v, im.paramShape())
				}
			}
		}
		return nil
	}()
	e.mu.Unlock()
	if err != nil {
		return err
	}
	return writeFileAtomic(path, func(w io.Writer) error { return safetensors.SerializeToWriter(tensors, meta, w) })
}

// LoadCheckpoint restores what SaveCheckpoint wrote into this compiled
// graph: every parameter, every optimizer state vector and the time step.
// A checkpoint that lacks one of them, holds one of another shape, or was
// written for another optimizer is an error, and then nothing is changed.
func (e *Executor) LoadCheckpoint(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	st, err := safetensors.Deserialize(b)
	if err != nil {
		return fmt.Errorf("%w: %s: not a safetensors file: %v", ErrGraph, path, err)
	}
	_, meta, err := safetensors.ReadMetadata(b)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrGraph, path, err)
	}
	md := meta.Metadata()
	if md["format"] != checkpointFormat {
		return fmt.Errorf("%w: %s: not a vkmps checkpoint (format %q)", ErrGraph, path, md["format"])
	}
	read := func(name string, shape []int) ([]float32, error) {
		tv, ok := st.Tensor(name)
		if !ok {
			return nil, fmt.Errorf("%w: %s has no tensor %q", ErrGraph, path, name)
		}
		if tv.DType() != safetensors.F32 {
			return nil, fmt.Errorf("%w: %s: tensor %q is %v, want F32", ErrGraph, path, name, tv.DType())
		}
		got := make([]int, len(tv.Shape()))
		for i, d := range tv.Shape() {
			got[i] = int(d)
		}
		if !sameValues(got, shape) {
			return nil, fmt.Errorf("%w: %s: tensor %q has shape %v, want %v", ErrShape, path, name, got, shape)
		}
		data := tv.Data()
		v := make([]float32, len(data)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return v, nil
	}
	params := map[string][]float32{}
	for _, im := range e.parameters() {
		v, err := read(im.name, im.paramShape())
		if err != nil {
			return err
		}
		params[im.name] = v
	}
	type stateVal struct {
		im *ops.Image
		v  []float32
	}
	var states []stateVal
	step := -1
	for _, co := range e.optimizerList() {
		if want := co.opt.Descriptor().Type.String(); md["optimizer"] != want {
			return fmt.Errorf("%w: %s was written for optimizer %q, the graph uses %q", ErrGraph, path, md["optimizer"], want)
		}
		t, err := strconv.Atoi(md["time_step"])
		if err != nil || t < 0 {
			return fmt.Errorf("%w: %s: time step %q", ErrGraph, path, md["time_step"])
		}
		step = t
		for name := range co.states {
			im, _ := e.parameter(name)
			for suffix, simg := range stateVectors(co, name) {
				v, err := read(name+"/"+suffix, im.paramShape())
				if err != nil {
					return err
				}
				states = append(states, stateVal{simg, v})
			}
		}
	}
	for name, v := range params {
		if err := e.SetParameter(ctx, name, v); err != nil {
			return err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.waitIdle(ctx); err != nil {
		return err
	}
	for _, s := range states {
		if err := s.im.Write(ctx, s.v); err != nil {
			return err
		}
	}
	if step >= 0 {
		for _, co := range e.optimizerList() {
			if err := co.opt.SetTimeStep(ctx, step); err != nil {
				return err
			}
		}
	}
	return nil
}

// readParamFile reads a parameter file named in a graph file.
func readParamFile(fsys fs.FS, node, field, name string) ([]float32, []int, error) {
	if fsys == nil {
		return nil, nil, fmt.Errorf("%w: node %q: %s %q: parameter files need the graph loaded with LoadFile", ErrGraph, node, field, name)
	}
	v, s, err := readNPYFS(fsys, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w: node %q: %s: no file %q beside the graph file", ErrGraph, node, field, name)
		}
		return nil, nil, fmt.Errorf("%w: node %q: %s: %v", ErrGraph, node, field, err)
	}
	return v, s, nil
}
