package graph

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"

	"github.com/vkmps/vkmps/ops"
)

// DataSet is a training set held in memory: named arrays whose first axis
// is the sample (the images "x" and their "labels", say), each sample of a
// fixed shape C×H×W. Batches iterates it in mini-batches that feed a
// compiled graph's inputs of the same names.
type DataSet struct {
	n      int
	names  []string
	shape  map[string]ops.ImageDescriptor // per sample (N = 1)
	values map[string][]float32
}

// NewDataSet makes a data set of samples samples from arrays of samples ×
// C×H×W values (NCHW order), given by name with their per-sample shape.
// The arrays are used, not copied.
func NewDataSet(samples int, shapes map[string]ops.ImageDescriptor, arrays map[string][]float32) (*DataSet, error) {
	if samples < 1 {
		return nil, fmt.Errorf("%w: data set of %d samples", ErrShape, samples)
	}
	d := &DataSet{n: samples, shape: map[string]ops.ImageDescriptor{}, values: map[string][]float32{}}
	for name, s := range shapes {
		v, ok := arrays[name]
		if !ok {
			return nil, fmt.Errorf("%w: data set: no values for %q", ErrGraph, name)
		}
		if s.C < 1 || s.H < 1 || s.W < 1 {
			return nil, fmt.Errorf("%w: data set: %q: sample shape %s", ErrShape, name, descString(s))
		}
		s.N = 1
		if len(v) != samples*s.C*s.H*s.W {
			return nil, fmt.Errorf("%w: data set: %q has %d values, %d samples of %dx%dx%d need %d", ErrShape, name, len(v), samples, s.C, s.H, s.W, samples*s.C*s.H*s.W)
		}
		d.names = append(d.names, name)
		d.shape[name], d.values[name] = s, v
	}
	for name := range arrays {
		if _, ok := shapes[name]; !ok {
			return nil, fmt.Errorf("%w: data set: no shape for %q", ErrGraph, name)
		}
	}
	sort.Strings(d.names)
	return d, nil
}

// LoadNPYDataSet reads a data set from .npy files, one per name: each an
// array whose first axis is the sample, shaped (S, C, H, W), (S, H, W)
// (one channel), (S, K) (K channels of 1×1: labels) or (S,) (one value).
// Every file must have the same number of samples.
func LoadNPYDataSet(paths map[string]string) (*DataSet, error) {
	shapes := map[string]ops.ImageDescriptor{}
	arrays := map[string][]float32{}
	samples := -1
	for name, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		v, shape, err := ReadNPY(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var s ops.ImageDescriptor
		switch len(shape) {
		case 4:
			s = ops.ImageDescriptor{C: shape[1], H: shape[2], W: shape[3]}
		case 3:
			s = ops.ImageDescriptor{C: 1, H: shape[1], W: shape[2]}
		case 2:
			s = ops.ImageDescriptor{C: shape[1], H: 1, W: 1}
		case 1:
			s = ops.ImageDescriptor{C: 1, H: 1, W: 1}
		default:
			return nil, fmt.Errorf("%w: %s: a data set array needs a sample axis (rank 1 to 4), got shape %v", ErrShape, path, shape)
		}
		if samples >= 0 && shape[0] != samples {
			return nil, fmt.Errorf("%w: %s has %d samples, other files %d", ErrShape, path, shape[0], samples)
		}
		samples = shape[0]
		shapes[name], arrays[name] = s, v
	}
	return NewDataSet(samples, shapes, arrays)
}

// Len returns the number of samples.
func (d *DataSet) Len() int { return d.n }

// Names returns the arrays' names, sorted.
func (d *DataSet) Names() []string { return append([]string(nil), d.names...) }

// SampleShape returns the shape of one sample of the array name (N = 1).
func (d *DataSet) SampleShape(name string) (ops.ImageDescriptor, bool) {
	s, ok := d.shape[name]
	return s, ok
}

// BatchShapes returns the input shapes of mini-batches of batch samples,
// for CompileOptions.Inputs.
func (d *DataSet) BatchShapes(batch int) map[string]ops.ImageDescriptor {
	out := map[string]ops.ImageDescriptor{}
	for name, s := range d.shape {
		s.N = batch
		out[name] = s
	}
	return out
}

// Gather copies the samples idx of every array into feeds (allocating the
// slices that are missing or of the wrong length): the mini-batch of those
// samples, in that order.
func (d *DataSet) Gather(idx []int, feeds map[string][]float32) error {
	for _, name := range d.names {
		s := d.shape[name]
		per := s.C * s.H * s.W
		dst := feeds[name]
		if len(dst) != len(idx)*per {
			dst = make([]float32, len(idx)*per)
			feeds[name] = dst
		}
		src := d.values[name]
		for k, i := range idx {
			if i < 0 || i >= d.n {
				return fmt.Errorf("%w: sample %d of a data set of %d", ErrShape, i, d.n)
			}
			copy(dst[k*per:(k+1)*per], src[i*per:(i+1)*per])
		}
	}
	return nil
}

// Batches iterates mini-batches of a data set, epoch after epoch, in an
// order shuffled by a seeded generator (the same seed gives the same
// batches), or in storage order with Shuffle false. The last samples of an
// epoch that do not fill a batch are left out of it (PyTorch's drop_last),
// since a compiled graph has one batch size; shuffling changes which.
type Batches struct {
	Data    *DataSet
	Size    int
	Shuffle bool
	Seed    uint64

	epoch, pos int
	perm       []int
	idx        []int
}

// BatchesPerEpoch returns the number of full batches in an epoch.
func (b *Batches) BatchesPerEpoch() int {
	if b.Size < 1 || b.Data == nil {
		return 0
	}
	return b.Data.Len() / b.Size
}

// Next fills feeds with the next mini-batch (see DataSet.Gather) and
// returns its epoch (from 0).
func (b *Batches) Next(feeds map[string][]float32) (int, error) {
	if b.Data == nil || b.Size < 1 {
		return 0, fmt.Errorf("%w: Batches needs a data set and a batch size >= 1", ErrGraph)
	}
	if b.Size > b.Data.Len() {
		return 0, fmt.Errorf("%w: batch size %d exceeds the %d samples of the data set", ErrShape, b.Size, b.Data.Len())
	}
	if b.perm == nil || b.pos+b.Size > len(b.perm) {
		if b.perm != nil {
			b.epoch++
		}
		b.pos = 0
		b.perm = b.order(b.epoch)
	}
	b.idx = append(b.idx[:0], b.perm[b.pos:b.pos+b.Size]...)
	b.pos += b.Size
	return b.epoch, b.Data.Gather(b.idx, feeds)
}

// order returns the sample order of an epoch.
func (b *Batches) order(epoch int) []int {
	p := make([]int, b.Data.Len())
	for i := range p {
		p[i] = i
	}
	if b.Shuffle {
		r := rand.New(rand.NewPCG(b.Seed, uint64(epoch)))
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	}
	return p
}
