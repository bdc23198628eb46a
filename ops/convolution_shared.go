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
