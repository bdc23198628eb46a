// Command render writes the demo picture of `vkmps demo` as a PNG:
//
//	go run ./internal/demoimage/render -o assets/demo.png
//
// (run by go generate in cmd/vkmps).
package main

import (
	"flag"
	"fmt"
	"image/png"
	"io"
	"os"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/demoimage"
	"github.com/vkmps/vkmps/cmd/vkmps/internal/tensorio"
)

func main() {
	out := flag.String("o", "demo.png", "output `file`")
	flag.Parse()
	err := tensorio.WriteFile(*out, func(w io.Writer) error {
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		return enc.Encode(w, demoimage.Render())
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}
