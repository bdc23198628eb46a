package ref_test

import (
	"fmt"

	"github.com/vkmps/vkmps/ops/ref"
	"github.com/vkmps/vkmps/padding"
)

// Max pooling 2x2, stride 2, over a 4x4 image, and its gradient. Offset 1
// puts the window of destination pixel (0,0) on rows and columns 0..1 (an
// even window leans top-left of its centre).
func ExamplePool() {
	src, _ := ref.TensorOf(1, 1, 4, 4, []float32{
		1, 2, 0, 0,
		3, 4, 0, 9,
		0, 0, 5, 5,
		7, 0, 5, 5,
	})
	g := ref.Geometry{Kind: ref.Max, KernelW: 2, KernelH: 2, StrideX: 2, StrideY: 2,
		DilationX: 1, DilationY: 1, OffsetX: 1, OffsetY: 1, EdgeMode: padding.EdgeClamp}
	dst := ref.NewTensor[float32](1, 1, 2, 2)
	if err := ref.Pool(g, src, &dst); err != nil {
		panic(err)
	}
	fmt.Println("out:", dst.Data)

	idx, _ := ref.Argmax(g, src, dst.Shape())
	fmt.Println("argmax taps:", idx)

	dy, _ := ref.TensorOf(1, 1, 2, 2, []float32{1, 1, 1, 1})
	dx := ref.NewTensor[float32](1, 1, 4, 4)
	if err := ref.PoolGradient(g, src, dy, &dx); err != nil {
		panic(err)
	}
	fmt.Println("dx:", dx.Data)
	// Output:
	// out: [4 9 7 5]
	// argmax taps: [3 3 2 0]
	// dx: [0 0 0 0 0 1 0 1 0 0 1 0 1 0 0 0]
}
