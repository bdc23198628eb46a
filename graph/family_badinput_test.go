package graph_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/graph"
	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk/vktest"
)

// TestTrainingFamilyBadInput is the training family's bad-input table
// (issues 14 to 19): every class of bad node gives an error naming the
// node and the field, at load or at compile, and nothing panics.
func TestTrainingFamilyBadInput(t *testing.T) {
	dir := t.TempDir()
	// Parameter files for the rows that need them.
	write := func(name string, data []float32, shape ...int) {
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		require.NoError(t, graph.WriteNPY(f, data, shape))
		require.NoError(t, f.Close())
	}
	write("w.npy", make([]float32, 4*3*3*3), 4, 3, 3, 3)
	write("b3.npy", make([]float32, 3), 3)
	write("g2.npy", []float32{1, 1}, 2)
	write("w2d.npy", make([]float32, 6), 6)
	load := func(nodes string) func() error {
		return func() error {
			js := `{"inputs": {"x": [2, 3, 4, 4], "y": [2, 5, 4, 4], "labels": [2, 3, 4, 4]}, "nodes": [` + nodes + `]}`
			p := filepath.Join(dir, "g.json")
			require.NoError(t, os.WriteFile(p, []byte(js), 0o644))
			_, _, err := graph.LoadFile(p)
			return err
		}
	}
	dev := vktest.Open(t)
	compile := func(nodes string, mode graph.Mode) func() error {
		return func() error {
			js := `{"inputs": {"x": [1, 3, 1, 1], "labels": [1, 3, 1, 1]}, "nodes": [` + nodes + `]}`
			p := filepath.Join(dir, "c.json")
			require.NoError(t, os.WriteFile(p, []byte(js), 0o644))
			g, f, err := graph.LoadFile(p)
			if err != nil {
				return err
			}
			shapes, _ := f.Shapes()
			e, err := g.Compile(dev, graph.CompileOptions{Inputs: shapes, Mode: mode})
			if err == nil {
				e.Close()
			}
			return err
		}
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown neuron type", load(`{"name": "n", "op": "neuron", "type": "swish", "sources": ["x"]}`), `node "n": ops: invalid kernel geometry: unknown neuron type "swish"`},
		{"prelu slopes not a list", load(`{"name": "n", "op": "neuron", "type": "prelu", "a": 0.1, "sources": ["x"]}`), `node "n": neuron a: prelu wants a list`},
		{"neuron parameter beyond float32", load(`{"name": "n", "op": "neuron", "type": "linear", "b": 1e39, "sources": ["x"]}`), `node "n": JSON`},
		{"exponential base 1", load(`{"name": "n", "op": "neuron", "type": "exponential", "c": 1, "sources": ["x"]}`), `node "n": ops: invalid kernel geometry: neuron: exponential base c = 1`},
		{"unknown loss", load(`{"name": "l", "op": "loss", "loss": "l3", "sources": ["x", "labels"]}`), `node "l": loss "l3"`},
		{"unknown reduction", load(`{"name": "l", "op": "loss", "loss": "mse", "reduction": "avg", "sources": ["x", "labels"]}`), `node "l": reduction "avg"`},
		{"huber delta 0", load(`{"name": "l", "op": "loss", "loss": "huber", "delta": 0, "sources": ["x", "labels"]}`), `node "l": delta 0: must be > 0`},
		{"label smoothing 2", load(`{"name": "l", "op": "loss", "loss": "softmax-cross-entropy", "label_smoothing": 2, "sources": ["x", "labels"]}`), `node "l"`},
		{"unknown arithmetic field", load(`{"name": "a", "op": "add", "scale": 2, "sources": ["x", "x"]}`), `node "a": JSON: json: unknown field "scale"`},
		{"minimum over maximum", load(`{"name": "a", "op": "add", "minimum": 2, "maximum": 1, "sources": ["x", "x"]}`), `node "a"`},
		{"conv without sizes", load(`{"name": "c", "op": "conv", "sources": ["x"]}`), `node "c": without a weights file, give in_channels, out_channels and kernel`},
		{"conv weights file missing", load(`{"name": "c", "op": "conv", "weights": "nope.npy", "sources": ["x"]}`), `node "c": weights: no file "nope.npy"`},
		{"conv weights of rank 1", load(`{"name": "c", "op": "conv", "weights": "w2d.npy", "sources": ["x"]}`), `node "c": weights w2d.npy has shape [6]`},
		{"conv bias of the wrong length", load(`{"name": "c", "op": "conv", "weights": "w.npy", "bias": "b3.npy", "sources": ["x"]}`), `node "c": bias b3.npy has 3 values for 4 output channels`},
		{"conv groups not dividing", load(`{"name": "c", "op": "conv", "in_channels": 3, "out_channels": 4, "kernel": 3, "groups": 2, "sources": ["x"]}`), `node "c"`},
		{"output_padding on conv", load(`{"name": "c", "op": "conv", "in_channels": 3, "out_channels": 4, "kernel": 3, "output_padding": 1, "sources": ["x"]}`), `node "c": output_padding applies to conv_transpose only`},
		{"fully_connected with a stride", load(`{"name": "f", "op": "fully_connected", "in_features": 48, "out_features": 2, "stride": 2, "sources": ["x"]}`), `node "f": fully_connected takes no kernel`},
		{"conv channels mismatch", load(`{"name": "c", "op": "conv", "in_channels": 5, "out_channels": 4, "kernel": 1, "sources": ["x"]}, {"name": "l", "op": "loss", "loss": "mse", "sources": ["c", "labels"]}`), ``},
		{"batch_norm gamma of the wrong length", load(`{"name": "b", "op": "batch_norm", "gamma": "g2.npy", "beta": "b3.npy", "sources": ["x"]}`), `node "b": gamma g2.npy has 2 values, want 3`},
		{"batch_norm without channels", load(`{"name": "b", "op": "batch_norm", "sources": ["x"]}`), `node "b": give the parameter files or "channels"`},
		{"batch_norm negative epsilon", load(`{"name": "b", "op": "batch_norm", "channels": 3, "epsilon": -1, "sources": ["x"]}`), `node "b"`},
		{"batch_norm momentum 2", load(`{"name": "b", "op": "batch_norm", "channels": 3, "momentum": 2, "sources": ["x"]}`), `node "b"`},
		{"batch_norm on one value per channel in training", compile(`{"name": "b", "op": "batch_norm", "channels": 3, "sources": ["x"]}`, graph.ModeTraining), `node "b": graph: shape mismatch: batch normalization in training on one value per channel (N*H*W == 1)`},
		{"keep probability 1", load(`{"name": "d", "op": "dropout", "keep_probability": 1, "sources": ["x"]}`), `node "d"`},
		{"keep probability 0", load(`{"name": "d", "op": "dropout", "keep_probability": 0, "sources": ["x"]}`), `node "d"`},
		{"keep probability missing", load(`{"name": "d", "op": "dropout", "sources": ["x"]}`), `node "d": keep_probability is required`},
		{"mask stride 2", load(`{"name": "d", "op": "dropout", "keep_probability": 0.5, "mask_stride": [2, 1, 1], "sources": ["x"]}`), `node "d"`},
		{"upsample scale 0", load(`{"name": "u", "op": "upsample_nearest", "scale": 0, "sources": ["x"]}`), `node "u": scale: 0 < 1`},
		{"align_corners on nearest", load(`{"name": "u", "op": "upsample_nearest", "scale": 2, "align_corners": true, "sources": ["x"]}`), `node "u": align_corners applies to upsample_bilinear only`},
		{"lrn size 0", load(`{"name": "r", "op": "cross_channel_norm", "size": -1, "sources": ["x"]}`), `node "r"`},
		{"lrn with a kernel", load(`{"name": "r", "op": "cross_channel_norm", "kernel": 3, "sources": ["x"]}`), `node "r": cross_channel_norm takes size`},
		{"binary conv unknown type", load(`{"name": "bc", "op": "binary_conv", "type": "or", "weights": "w.npy", "sources": ["x"]}`), `node "bc": type:`},
		{"binary conv without weights", load(`{"name": "bc", "op": "binary_conv", "type": "xnor", "sources": ["x"]}`), `node "bc": weights is required`},
		{"unknown initializer", load(`{"name": "c", "op": "conv", "in_channels": 3, "out_channels": 4, "kernel": 3, "init": "xavier", "sources": ["x"]}`), `node "c": init:`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			assert.NotPanics(t, func() { err = c.run() })
			if c.name == "conv channels mismatch" {
				// Loads (the source's channels are known only with shapes);
				// the shape inference names the node.
				require.NoError(t, err)
				g, f, lerr := graph.LoadFile(filepath.Join(dir, "g.json"))
				require.NoError(t, lerr)
				shapes, _ := f.Shapes()
				_, err = g.InferShapes(shapes)
				require.ErrorIs(t, err, graph.ErrShape)
				require.ErrorContains(t, err, `node "c": source 2x3x4x4 has 3 channels, the weights want 5`)
				return
			}
			require.Error(t, err)
			require.True(t, strings.Contains(err.Error(), c.want), "error %q does not contain %q", err, c.want)
		})
	}
	_ = ops.Float32
}

// Graph files are regular files (a FIFO would block for ever), and
// PyTorch pads over half the window are refused as PyTorch does.
func TestLoadFileRefusals(t *testing.T) {
	dir := t.TempDir()
	_, _, err := graph.LoadFile(dir)
	require.ErrorIs(t, err, graph.ErrGraph)
	require.ErrorContains(t, err, "not a regular file")
	p := filepath.Join(dir, "g.json")
	require.NoError(t, os.WriteFile(p, []byte(`{"inputs": {"x": null}, "nodes": [{"name": "p", "op": "max", "kernel": 3, "padding": {"pad": [2, 0, 0, 0]}, "sources": ["x"]}]}`), 0o644))
	_, _, err = graph.LoadFile(p)
	require.ErrorContains(t, err, `node "p": padding: the top pad 2 is more than half the window's extent 3`)
	require.NoError(t, os.WriteFile(p, []byte(`{"inputs": {"x": null}, "nodes": [{"name": "p", "op": "max", "kernel": 3, "padding": {"pad": [1, 1, 1, 1]}, "sources": ["x"]}]}`), 0o644))
	_, _, err = graph.LoadFile(p)
	require.NoError(t, err)
}
