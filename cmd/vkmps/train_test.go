package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/mnist"
)

// LeNet-5 learns real MNIST on the default device (lavapipe in CI): 200
// steps of 32 on the first 6,400 training images reach at least 90% on
// the first 1,000 test images, and the run writes its log, plot and
// checkpoint (issue 18's CI test).
func TestTrainMNISTLearns(t *testing.T) {
	requireVulkan(t)
	if _, err := mnist.Dir("mnist"); err != nil {
		t.Skipf("MNIST files not available: %v", err)
	}
	out := t.TempDir()
	r := mustSucceed(t, "train", "mnist", "--train-limit", "6400", "--test-limit", "1000", "--batch", "32", "--epochs", "1",
		"--lr", "0.02", "--out", out)
	m := regexp.MustCompile(`final test accuracy ([0-9.]+)%`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	acc, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, acc, 90.0, r.stdout)
	require.Contains(t, r.stdout, "epoch 1: loss")
	for _, f := range []string{"training.png", "log.jsonl", "checkpoint/checkpoint.safetensors", "checkpoint/c1.weights.npy", "checkpoint/f3.bias.npy"} {
		st, err := os.Stat(filepath.Join(out, f))
		require.NoError(t, err, f)
		require.NotZero(t, st.Size(), f)
	}
	b, err := os.ReadFile(filepath.Join(out, "log.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 200)
	var first, last struct{ Loss float64 }
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.NoError(t, json.Unmarshal([]byte(lines[199]), &last))
	require.Less(t, last.Loss, first.Loss/3, "the loss falls")

	// The checkpoint continues training through graph train --load.
	r = mustSucceed(t, "graph", "train", "models/lenet5.json", "--help")
	require.Contains(t, r.stdout, "--load")
}

// train synthetic times steps of a model on random data and appends one
// JSON line: the step count, the warm-up's steps (10, then more until
// --warmup has passed after them), the time per step, and each timed step's GPU time
// (positive where the device has timestamps, which the profiled step's
// table then shows).
func TestTrainSynthetic(t *testing.T) {
	requireVulkan(t)
	out := filepath.Join(t.TempDir(), "steps.jsonl")
	r := mustSucceed(t, "train", "synthetic", "models/lenet5.json", "--batch", "4", "--input", "x=1,28,28",
		"--input", "labels=10,1,1", "--steps", "3", "--warmup", "300ms", "--json", out)
	require.Contains(t, r.stdout, "per training step (1 submissions each)")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rec struct {
		Steps      int       `json:"steps"`
		Warmup     int       `json:"warmup_steps"`
		MsPerStep  float64   `json:"ms_per_step"`
		GPUMsSteps []float64 `json:"gpu_ms_steps"`
		DeviceMiB  float64   `json:"device_memory_mib"`
		Commands   int       `json:"commands_per_step"`
		Barriers   *int      `json:"barriers_per_step"`
		Upload     *bool     `json:"upload"`
		Argmax     *bool     `json:"argmax"`
		Nodes      []struct {
			Name, Op string
			MS       float64
		} `json:"profile_nodes"`
	}
	require.NoError(t, json.Unmarshal(b, &rec), string(b))
	// LeNet-5's step: at least a command per node, no more barriers than
	// commands.
	require.Greater(t, rec.Commands, 20)
	require.NotNil(t, rec.Barriers)
	require.LessOrEqual(t, *rec.Barriers, rec.Commands)
	require.Contains(t, r.stdout, fmt.Sprintf("each step: inputs kept on the device, %d commands, %d barriers", rec.Commands, *rec.Barriers))
	require.NotNil(t, rec.Upload)
	require.False(t, *rec.Upload)
	require.NotNil(t, rec.Argmax)
	require.True(t, *rec.Argmax, "max pooling records its argmax by default")
	// The graph itself records it: with --argmax=false (nothing else
	// changed) each of LeNet-5's two max pooling gradients runs its
	// argmax pass before its gather, two more commands a step.
	outNo := filepath.Join(t.TempDir(), "noargmax.jsonl")
	mustSucceed(t, "train", "synthetic", "models/lenet5.json", "--batch", "4", "--input", "x=1,28,28",
		"--input", "labels=10,1,1", "--steps", "1", "--warmup", "0s", "--argmax=false", "--json", outNo)
	bNo, err := os.ReadFile(outNo)
	require.NoError(t, err)
	var recNo struct {
		Commands int   `json:"commands_per_step"`
		Argmax   *bool `json:"argmax"`
	}
	require.NoError(t, json.Unmarshal(bNo, &recNo), string(bNo))
	require.NotNil(t, recNo.Argmax)
	require.False(t, *recNo.Argmax)
	require.Equal(t, rec.Commands+2, recNo.Commands, "recomputing the argmax adds a pass per max pooling gradient")
	require.Equal(t, 3, rec.Steps)
	require.GreaterOrEqual(t, rec.Warmup, 10)
	require.Zero(t, (rec.Warmup-10)%5, "10 steps, then 5 at a time")
	require.Greater(t, rec.Warmup, 10, "300ms more after the first 10 steps")
	require.Positive(t, rec.MsPerStep)
	require.Positive(t, rec.DeviceMiB)
	require.Contains(t, r.stdout, "device memory: ")
	require.Len(t, rec.GPUMsSteps, 3)
	if strings.Contains(r.stdout, "GPU time of one profiled step") {
		for _, ms := range rec.GPUMsSteps {
			require.Positive(t, ms, string(b))
		}
		// Every node of the profiled step, in order: c1's first.
		require.Greater(t, len(rec.Nodes), 20)
		require.True(t, strings.HasPrefix(rec.Nodes[0].Name, "c1"), rec.Nodes[0].Name)
		require.Equal(t, "conv", rec.Nodes[0].Op)
		require.Contains(t, r.stdout, "slowest nodes:")
	}

	// --conv-tuning reaches the convolutions, is printed and recorded;
	// --scratch-per-kernel leaves no shared scratch; --upload feeds the
	// inputs to every step; --argmax=false has max pooling's gradient
	// recompute its argmax.
	out2 := filepath.Join(t.TempDir(), "tuned.jsonl")
	r = mustSucceed(t, "train", "synthetic", "models/lenet5.json", "--batch", "4", "--input", "x=1,28,28",
		"--input", "labels=10,1,1", "--steps", "2", "--warmup", "0s", "--conv-tuning", "direct=1", "--scratch-per-kernel", "--upload", "--argmax=false", "--json", out2)
	require.Contains(t, r.stdout, "convolution tuning: direct=1")
	require.Contains(t, r.stdout, "each step: inputs uploaded, ")
	require.Contains(t, r.stdout, "shared convolution scratch 0.0 MiB")
	b, err = os.ReadFile(out2)
	require.NoError(t, err)
	var tuned struct {
		Tuning    string   `json:"conv_tuning"`
		PerKernel bool     `json:"scratch_per_kernel"`
		Scratch   *float64 `json:"scratch_mib"`
		Warmup    int      `json:"warmup_steps"`
		Upload    bool     `json:"upload"`
		Argmax    *bool    `json:"argmax"`
	}
	require.NoError(t, json.Unmarshal(b, &tuned), string(b))
	require.True(t, tuned.Upload)
	require.NotNil(t, tuned.Argmax)
	require.False(t, *tuned.Argmax)
	require.Equal(t, "direct=1", tuned.Tuning)
	require.True(t, tuned.PerKernel)
	require.NotNil(t, tuned.Scratch)
	require.Zero(t, *tuned.Scratch)
	require.Equal(t, 10, tuned.Warmup, "--warmup 0s: the 10 steps only")
}

// Bad flags of train mnist and train synthetic are one-line errors.
func TestTrainBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train"}, "want `vkmps train mnist"},
		{[]string{"train", "cifar"}, "want `vkmps train mnist"},
		{[]string{"train", "mnist", "--epochs", "0"}, "--epochs: 0 must be in [1, 10000]"},
		{[]string{"train", "mnist", "--batch", "100000"}, "--batch: 100000 must be in [1, 60000]"},
		{[]string{"train", "mnist", "--data", "cifar"}, `--data "cifar": want mnist or fashion-mnist`},
		{[]string{"train", "mnist", "--optimizer", "lbfgs"}, "--optimizer"},
		{[]string{"train", "mnist", "--data-dir", "/nonexistent"}, filepath.FromSlash("/nonexistent")}, // \nonexistent\... on Windows
		{[]string{"train", "synthetic"}, "want one FILE.json"},
		{[]string{"train", "synthetic", "models/lenet5.json", "--dtype", "int8"}, `--dtype "int8"`},
		{[]string{"train", "synthetic", "models/lenet5.json", "--input", "x=0,1,2"}, "sizes are numbers from 1"},
		{[]string{"train", "synthetic", "models/lenet5.json", "--steps", "0"}, "--steps 0"},
		{[]string{"train", "synthetic", "models/lenet5.json", "--warmup", "2m"}, "--warmup 2m0s: want 0s..1m"},
		{[]string{"train", "synthetic", "models/lenet5.json", "--warmup", "-1s"}, "--warmup -1s"},
		{[]string{"train", "synthetic", "models/lenet5.json", "--conv-tuning", "winograd=2"}, "winograd"},
		{[]string{"train", "synthetic", "models/lenet5.json", "--conv-tuning", "speed=11"}, `unknown key "speed"`},
		{[]string{"graph", "run", "models/lenet5.json", "--conv-tuning", "tile=99"}, "tile=99: want 0.."},
	} {
		r := runVkmps(t, c.args...)
		assertOneLineError(t, r, 2, c.want)
	}
}
