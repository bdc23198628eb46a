package padding

// methodPolicy is a policy fully described by its Method
// (MPSNNDefaultPadding), optionally switching the kernel to EdgeClamp.
type methodPolicy struct {
	m     Method
	label string
	clamp bool // set EdgeClamp with no zero pad (TensorFlow average pooling)
}

func (p methodPolicy) Method() Method { return p.m }
func (p methodPolicy) Label() string  { return p.label }

func (p methodPolicy) Destination(req Request) (Result, error) {
	r := req.Suggested
	if p.clamp {
		r.EdgeMode = EdgeClamp
		r.ZeroPad = Pads{}
	}
	return r, nil
}

// WithMethod returns the policy for m (MPS paddingWithMethod): its
// Destination returns the suggestion Resolve computed from m unchanged.
// Its label is "valid", "same" or "full" for the named sizes and
// m.String() otherwise. An invalid m is reported by Resolve.
func WithMethod(m Method) Policy {
	label := m.String()
	switch m {
	case Valid:
		label = "valid"
	case Same:
		label = "same"
	case Full:
		label = "full"
	}
	return methodPolicy{m: m, label: label}
}

// TensorFlowSame returns TensorFlow's SAME padding,
// SizeSame|AlignCentered|AddRemainderToBottomRight: dst = ceil(src/stride),
// pad_total = max((dst-1)*stride + ke - src, 0), pad_before =
// floor(pad_total/2). Label "tensorflow-same".
func TensorFlowSame() Policy {
	return methodPolicy{m: SizeSame | AlignCentered | AddRemainderToBottomRight, label: "tensorflow-same"}
}

// TensorFlowValid returns TensorFlow's VALID padding, SizeValidOnly (method
// 0): dst = ceil((src-ke+1)/stride) and the window of destination 0 starts
// at pixel 0, whatever is left over at the bottom/right. Label
// "tensorflow-valid".
func TensorFlowValid() Policy {
	return methodPolicy{m: SizeValidOnly, label: "tensorflow-valid"}
}

// TensorFlowAveragePooling returns MPS's paddingForTensorflowAveragePooling:
// TensorFlow SAME sizes and offsets with EdgeClamp and zero pad 0, so that
// average pooling divides by the number of in-image taps and the padding
// is not averaged. Method Custom|SizeSame|AlignCentered|
// AddRemainderToBottomRight. Label "tensorflow-average-pooling".
func TensorFlowAveragePooling() Policy {
	return methodPolicy{
		m:     Custom | SizeSame | AlignCentered | AddRemainderToBottomRight,
		label: "tensorflow-average-pooling",
		clamp: true,
	}
}

// TensorFlowAveragePoolingValidOnly returns MPS's
// paddingForTensorflowAveragePoolingValidOnly: TensorFlow VALID sizes and
// offsets with EdgeClamp and zero pad 0 (Custom|SizeValidOnly). Label
// "tensorflow-average-pooling-valid-only".
func TensorFlowAveragePoolingValidOnly() Policy {
	return methodPolicy{m: Custom | SizeValidOnly, label: "tensorflow-average-pooling-valid-only", clamp: true}
}
