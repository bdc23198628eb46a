package padding

import "fmt"

// EdgeMode says what a kernel reads outside its source image
// (MPSImageEdgeMode). The zero value is EdgeZero, MPS's kernel default.
type EdgeMode int

const (
	// EdgeZero: taps outside the image read 0 (MPSImageEdgeModeZero).
	EdgeZero EdgeMode = iota
	// EdgeClamp: the window shrinks to its in-image taps
	// (MPSImageEdgeModeClamp as MPS defines it for pooling).
	EdgeClamp
)

// String returns "zero" or "clamp".
func (e EdgeMode) String() string {
	switch e {
	case EdgeZero:
		return "zero"
	case EdgeClamp:
		return "clamp"
	}
	return fmt.Sprintf("EdgeMode(%d)", int(e))
}

// Valid reports whether e is one of the defined edge modes.
func (e EdgeMode) Valid() bool { return e == EdgeZero || e == EdgeClamp }

// Pads is an amount of padding per side, in pixels. Top and Bottom are
// rows (y), Left and Right columns (x). Values may be negative where a
// policy leaves pixels unread.
type Pads struct{ Top, Left, Bottom, Right int }

// String returns "top,left,bottom,right".
func (p Pads) String() string {
	return fmt.Sprintf("%d,%d,%d,%d", p.Top, p.Left, p.Bottom, p.Right)
}

// Descriptor describes an image: N batch images of C feature channels,
// H rows by W columns each (NCHW, the layout of every vkmps image).
type Descriptor struct{ N, C, H, W int }

// String returns "NxCxHxW".
func (d Descriptor) String() string { return fmt.Sprintf("%dx%dx%dx%d", d.N, d.C, d.H, d.W) }

// Kernel is the geometry and the current settings of the kernel a policy is
// applied to, in the spirit of the MPSKernel handed to an MPSNNPadding.
// Dilation 1 means none. Reverse marks a reverse (backwards) filter whose
// stride enlarges the image (gradients, upsampling).
type Kernel struct {
	Name                 string // kernel name for messages, e.g. "PoolingMax"
	KernelW, KernelH     int
	StrideX, StrideY     int
	DilationX, DilationY int
	Reverse              bool

	// Current settings of the kernel; a policy's suggestion starts from them.
	EdgeMode EdgeMode
	ZeroPad  Pads
}

// Result is what a policy decides for a kernel: the destination descriptor
// and the settings the kernel must use to produce it.
type Result struct {
	// Dest is the destination image descriptor.
	Dest Descriptor
	// OffsetX, OffsetY: the source position of the window centre for
	// destination pixel (0,0) (MPSCNNKernel.offset). For a reverse kernel
	// it is in the upsampled source (Method.ReverseAxis); for Inverse it is
	// the forward pass's offset (a position in Dest).
	OffsetX, OffsetY int
	// EdgeMode the kernel must use.
	EdgeMode EdgeMode
	// ZeroPad: under EdgeClamp, average pooling shrinks its window to the
	// image plus this much zero padding per side, which counts in N(x).
	ZeroPad Pads
	// Pads is the padding the policy placed before (Top, Left) and after
	// (Bottom, Right) the image; negative where pixels are left unread.
	Pads Pads
	// ExcludeEdges: average pooling under EdgeZero counts only taps inside
	// the padding region [-max(before,0), src+max(after,0)) of each axis.
	ExcludeEdges bool
}

// State is a state object handed to a policy (MPSState). Policies look for
// the interfaces they understand, such as SizeState.
type State interface{}

// SizeState is implemented by states that record the source size of the
// forward pass that made them (MPSImageSizeEncodingState). An inverse
// policy sizes a gradient's destination from it.
type SizeState interface {
	// SourceDescriptor is the descriptor of the forward pass's source image.
	SourceDescriptor() Descriptor
}

// Request is what a policy is given: the kernel's source image
// descriptor(s), any states, the kernel, and the suggestion computed from
// the policy's Method bits (Custom bit ignored). When the Method has the
// Custom bit, an axis whose suggested size would be empty is suggested as
// zeros (Dest H or W 0, offset and pads 0) instead of failing Resolve.
type Request struct {
	Sources   []Descriptor
	States    []State
	Kernel    Kernel
	Suggested Result
}

// Policy decides a kernel's destination size and offsets (MPSNNPadding).
//
// Resolve computes Request.Suggested from Method() and then calls
// Destination, which returns the final result: a policy may return the
// suggestion unchanged, adjust it (offset, edge mode, zero pads), or
// compute its own. Users write custom policies by implementing Policy;
// setting the Custom bit in Method is customary but not required.
type Policy interface {
	// Method returns the MPSNNPaddingMethod bits the suggestion is made from.
	Method() Method
	// Label is a short human-readable name, e.g. "tensorflow-same".
	Label() string
	// Destination returns the final result for req.
	Destination(req Request) (Result, error)
}
