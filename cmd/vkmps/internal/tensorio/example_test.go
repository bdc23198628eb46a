package tensorio_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

// ExampleReadNPY reads a (C,H,W) array and writes it back at the same
// rank, as `vkmps pool` does.
func ExampleReadNPY() {
	var file bytes.Buffer
	x := tensorio.Tensor{N: 1, C: 2, H: 1, W: 3, Rank: 3, Data: []float32{1, 2, 3, 4, 5, 6}}
	if err := tensorio.WriteNPY(&file, x); err != nil {
		fmt.Println(err)
	}
	y, err := tensorio.ReadNPY(&file)
	fmt.Println(y, y.Rank, y.N, y.Data, err)

	_, err = tensorio.ReadNPY(bytes.NewReader([]byte("PK\x03\x04")))
	fmt.Println(err)
	// Output:
	// (2, 1, 3) float32 3 1 [1 2 3 4 5 6] <nil>
	// not a .npy file: it does not start with "\x93NUMPY"
}

// ExampleCheckOutput shows the guard the commands run before any work.
func ExampleCheckOutput() {
	dir, _ := os.MkdirTemp("", "vkmps")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "x.npy")
	tensorio.Write(in, tensorio.Tensor{N: 1, C: 1, H: 1, W: 1, Data: []float32{1}}, tensorio.Image)

	err := tensorio.CheckOutput(filepath.Join(dir, ".", "x.npy"), in)
	fmt.Println(err != nil, filepath.Base(err.Error()))
	fmt.Println(tensorio.CheckOutput(filepath.Join(dir, "y.png"), in))
	// Output:
	// true x.npy: is an input file: refusing to overwrite it
	// <nil>
}

// ExampleDiverging prints the heatmap colours at -max, 0, max/2 and max.
func ExampleDiverging() {
	for _, v := range []float64{-2, 0, 1, 2} {
		fmt.Println(v, tensorio.Diverging(v, 2))
	}
	// Output:
	// -2 {0 0 255 255}
	// 0 {255 255 255 255}
	// 1 {255 128 128 255}
	// 2 {255 0 0 255}
}
