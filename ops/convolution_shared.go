package ops

import "github.com/vkmps/vkmps/vk"

// convEncoder is a convolution-family kernel (Convolution,
// ConvolutionTranspose, FullyConnected) as encodeNewConv uses it.
type convEncoder interface {
	DestinationImageDescriptor(src ImageDescriptor) (ImageDescriptor, error)
	encode(cb *vk.CommandBuffer, src, weights, bias, dst *Image, state bool) (*ConvolutionGradientState, error)
}

// encodeNewConv is the EncodeNew / EncodeNewWithState body shared by the
// convolution-family kernels: it sizes a destination for src, allocates it,
// encodes into the whole of it (ClipRect is zeroed for the call and
// restored) and closes it on error. kern is e's embedded Kernel. When
// setPadding is true, the returned state records the padding policy used.
func encodeNewConv(kern *Kernel, e convEncoder, cb *vk.CommandBuffer, src, weights, bias *Image, state, setPadding bool) (*Image, *ConvolutionGradientState, error) {
	if err := kern.checkImage("source", src); err != nil {
		return nil, nil, err
	}
	d, err := e.DestinationImageDescriptor(src.Descriptor())
	if err != nil {
		return nil, nil, err
	}
	dst, err := kern.allocate(d)
	if err != nil {
		return nil, nil, err
	}
	saved := kern.ClipRect
	kern.ClipRect = Region{}
	st, err := e.encode(cb, src, weights, bias, dst, state)
	kern.ClipRect = saved
	if err != nil {
		dst.Close()
		return nil, nil, err
	}
	if setPadding && st != nil {
		st.Padding = kern.policy()
	}
	return dst, st, nil
}

// convFamily is what every kernel of the convolution family embeds
// (Convolution, ConvolutionGradient, ConvolutionTranspose,
// ConvolutionTransposeGradient, FullyConnected, FullyConnectedGradient):
// its GEMM engine and the methods on it they all have. label points at
// the kernel's Label, so that errors name the kernel as it is called now.
type convFamily struct {
	eng   convEngine
	label *string
}

// newEngine makes the kernel's engine, its errors naming *label.
func (f *convFamily) newEngine(dev *vk.Device, label *string, neuron NeuronDescriptor) error {
	f.label = label
	var err error
	f.eng, err = convNewEngine(dev, *label, neuron)
	return err
}

func (f *convFamily) engine() *convEngine { return &f.eng }

// name is the kernel's Label (a generic name for a kernel not made by its
// constructor).
func (f *convFamily) name() string {
	if f.label == nil {
		return "convolution-family kernel"
	}
	return *f.label
}

// Close releases the kernel's buffers (PReLU slopes, its own scratch; not
// a shared ConvolutionScratch). Safe twice.
func (f *convFamily) Close() error { return f.eng.close() }

// SetTuning sets the kernel's work-shape overrides (see
// ConvolutionTuning); an invalid one is refused with an error wrapping
// ErrTuning and the kernel keeps its previous setting.
func (f *convFamily) SetTuning(t ConvolutionTuning) error { return f.eng.setTuning(f.name(), t) }

// Tuning returns the kernel's work-shape overrides.
func (f *convFamily) Tuning() ConvolutionTuning { return f.eng.tune }

// SetScratch makes the kernel keep its intermediate values in s, shared
// with the other kernels given s (see ConvolutionScratch); nil gives it
// its own again. An error names a scratch of another device.
func (f *convFamily) SetScratch(s *ConvolutionScratch) error { return f.eng.setScratch(f.name(), s) }
