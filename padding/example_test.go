package padding_test

import (
	"fmt"

	"github.com/vkmps/vkmps/padding"
)

func pool(k, s int) padding.Kernel {
	return padding.Kernel{Name: "PoolingMax", KernelW: k, KernelH: k, StrideX: s, StrideY: s, DilationX: 1, DilationY: 1}
}

func show(r padding.Result) {
	fmt.Printf("dest %v offset (%d,%d) pads %v edge %v zeroPad %v\n",
		r.Dest, r.OffsetX, r.OffsetY, r.Pads, r.EdgeMode, r.ZeroPad)
}

// MPS's named size "same" (method 16): 3x3 stride 1 keeps the size and
// centres the window, one pixel of padding on each side.
func ExampleWithMethod() {
	p := padding.WithMethod(padding.Same)
	r, err := padding.Resolve(p, []padding.Descriptor{{N: 1, C: 8, H: 5, W: 5}}, nil, pool(3, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Label(), p.Method())
	show(r)
	// Output:
	// same SizeSame|AlignCentered|AddRemainderToTopLeft
	// dest 1x8x5x5 offset (0,0) pads 1,1,1,1 edge zero zeroPad 0,0,0,0
}

// TensorFlow SAME, 3x3 stride 2 on 7 rows and 8 columns: rows pad 1 and 1,
// columns 0 before and 1 after (the odd pixel goes to the bottom/right).
func ExampleTensorFlowSame() {
	r, err := padding.Resolve(padding.TensorFlowSame(), []padding.Descriptor{{N: 1, C: 1, H: 7, W: 8}}, nil, pool(3, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	show(r)
	// A 1x1 window with stride 2 reads pixels 0, 2, 4 of 6.
	a, _ := padding.TensorFlowSame().Method().Axis(padding.X, 6, 1, 2, 1)
	for i := 0; i < a.Dst; i++ {
		fmt.Print(a.Offset+2*i, " ")
	}
	fmt.Println()
	// Output:
	// dest 1x1x4x4 offset (1,0) pads 1,0,1,1 edge zero zeroPad 0,0,0,0
	// 0 2 4
}

// PyTorch MaxPool2d(2, stride=2, padding=1, ceil_mode=True) on 5x5: ceil
// gives 4 outputs, but the 4th window would start at pixel 5, past the
// image, so PyTorch (and Explicit) make 3.
func ExampleExplicit() {
	p := padding.Explicit(padding.Pads{Top: 1, Left: 1, Bottom: 1, Right: 1}, true, false)
	r, err := padding.Resolve(p, []padding.Descriptor{{N: 1, C: 1, H: 5, W: 5}}, nil, pool(2, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Label())
	show(r)
	// Output:
	// explicit(1,1,1,1) ceil
	// dest 1x1x3x3 offset (0,0) pads 1,1,1,1 edge clamp zeroPad 0,0,0,0
}

// Caffe pooling, kernel 3 stride 2 pad 1 on 6x6: ceil((6+2-3)/2)+1 = 4.
// The average divisor counts the pads but nothing beyond them:
// EdgeClamp with zero pad 1.
func ExampleCaffe() {
	r, err := padding.Resolve(padding.Caffe(1, 1), []padding.Descriptor{{N: 1, C: 1, H: 6, W: 6}}, nil, pool(3, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	show(r)
	fmt.Println("exclude edges:", r.ExcludeEdges)
	// Output:
	// dest 1x1x4x4 offset (0,0) pads 1,1,1,1 edge clamp zeroPad 1,1,1,1
	// exclude edges: true
}

// clampSame is MPS's own example of a custom policy (its sample
// paddingForTensorflowAveragePooling): same size, and the kernel switched
// to EdgeClamp so that average pooling does not count the padding.
type clampSame struct{}

func (clampSame) Method() padding.Method { return padding.Custom | padding.SizeSame }
func (clampSame) Label() string          { return "clamp-same" }
func (clampSame) Destination(req padding.Request) (padding.Result, error) {
	r := req.Suggested // computed from SizeSame
	r.EdgeMode = padding.EdgeClamp
	return r, nil
}

func Example_customPolicy() {
	r, err := padding.Resolve(clampSame{}, []padding.Descriptor{{N: 1, C: 1, H: 4, W: 4}}, nil, pool(2, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	show(r)
	// Output:
	// dest 1x1x4x4 offset (0,0) pads 1,1,0,0 edge clamp zeroPad 0,0,0,0
}

// sourceSize is a forward pass's state recording its source size.
type sourceSize padding.Descriptor

func (s sourceSize) SourceDescriptor() padding.Descriptor { return padding.Descriptor(s) }

// The gradient of TF SAME pooling 3x3/2: 7x7 and 8x8 sources both give
// 4x4, so the gradient's destination size comes from the forward state.
// Offsets are the forward pass's offsets on that destination.
func ExampleInverse() {
	fwd := padding.TensorFlowSame()
	grad := []padding.Descriptor{{N: 1, C: 1, H: 4, W: 4}}
	for _, st := range [][]padding.State{nil, {sourceSize{H: 8, W: 8}}} {
		r, err := padding.Resolve(padding.Inverse(fwd), grad, st, pool(3, 2))
		if err != nil {
			fmt.Println(err)
			return
		}
		show(r)
	}
	// Output:
	// dest 1x1x7x7 offset (0,0) pads 1,1,1,1 edge zero zeroPad 0,0,0,0
	// dest 1x1x8x8 offset (1,1) pads 0,0,1,1 edge zero zeroPad 0,0,0,0
}

func ExampleMethod_String() {
	m := padding.SizeSame | padding.AlignCentered | padding.AddRemainderToBottomRight
	fmt.Println(m)
	fmt.Println(m | padding.Custom | padding.ExcludeEdges)
	fmt.Println(padding.Method(3).Validate())
	// Output:
	// SizeSame|AlignCentered|AddRemainderToBottomRight
	// SizeSame|AlignCentered|AddRemainderToBottomRight|Custom|ExcludeEdges
	// padding: method 0x3: reserved align pattern 3
}
