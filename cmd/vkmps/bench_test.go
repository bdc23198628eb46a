package main

import (
	"bufio"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchJSONLines reads JSON lines into maps.
func benchJSONLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %q", sc.Text())
		lines = append(lines, m)
	}
	return lines
}

func TestBenchSmall(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	jsonPath, plotPath := filepath.Join(dir, "bench.jsonl"), filepath.Join(dir, "bench.png")
	r := mustSucceed(t, "bench", "--small", "--iters", "2", "--json", jsonPath, "--plot", plotPath)

	// The table: device, driver and date first, then a row per case.
	lines := strings.Split(r.stdout, "\n")
	require.Greater(t, len(lines), 3)
	assert.True(t, strings.HasPrefix(lines[0], "device: "), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "driver: "), lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "date: "), lines[2])
	for _, op := range []string{"max ", "max+argmax", "avg", "l2", "dilated-max ", "dilated-max+argmax"} {
		assert.Contains(t, r.stdout, op)
	}

	// JSON: a header, 3 shapes x 6 rows, the copy bandwidth last.
	data, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	js := benchJSONLines(t, string(data))
	require.Len(t, js, 1+3*6+1)
	head, cp := js[0], js[len(js)-1]
	for _, k := range []string{"device", "driver", "driver_version", "date", "vulkan"} {
		assert.Contains(t, head, k)
	}
	assert.Equal(t, "d2d-copy", cp["op"])
	assert.Greater(t, cp["GBps"], 0.0)
	assert.Greater(t, cp["cmd_copy_GBps"], 0.0)
	ops := map[string]int{}
	for _, row := range js[1 : len(js)-1] {
		// The PyTorch script's fields, with its meaning, and vkmps's.
		for _, k := range []string{"op", "layout", "shape", "kernel", "stride", "pad", "fwd_us", "bwd_us",
			"fwd_GBps", "bwd_GBps_min_traffic", "dilation", "argmax", "pads", "out_shape", "fwd_us_min",
			"bwd_us_min", "fwd_bytes", "bwd_bytes", "fwd_pct_copy", "bwd_pct_copy", "fwd_reps", "bwd_reps"} {
			assert.Contains(t, row, k, "row %v", row)
		}
		assert.NotContains(t, row, "skipped")
		assert.Greater(t, row["fwd_us"], 0.0)
		assert.Greater(t, row["bwd_us"], 0.0)
		assert.Greater(t, row["fwd_bytes"], 0.0)
		op := row["op"].(string)
		if row["argmax"] == true {
			op += "+argmax"
		}
		ops[op]++
		if op == "l2" {
			assert.Equal(t, []any{0.0, 0.0, 0.0, 0.0}, row["pads"], "lp_pool2d has no padding")
		}
	}
	assert.Equal(t, map[string]int{"max": 3, "max+argmax": 3, "avg": 3, "l2": 3, "dilated-max": 3, "dilated-max+argmax": 3}, ops)
	// Torch's first shape's definitions: 2x8x33x33 k3 s2 p1 gives 17x17.
	assert.Equal(t, []any{2.0, 8.0, 17.0, 17.0}, js[1]["out_shape"])

	f, err := os.Open(plotPath)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), 100)
}

func TestBenchShapesAndSkips(t *testing.T) {
	requireVulkan(t)
	// A 2x2 image cannot hold a 3x3 window without padding: skipped, as
	// the PyTorch script skips what PyTorch refuses.
	r := mustSucceed(t, "bench", "--shapes", "1,4,8,8,3,2,1,3; 1,1,2,2,3,1,0", "--ops", "dilated-max", "--argmax=false",
		"--iters", "1", "--copy-mib", "1", "--json", "-")
	js := benchJSONLines(t, r.stdout)
	require.Len(t, js, 4)
	assert.Equal(t, 3.0, js[1]["dilation"])
	// PyTorch's size: floor((8 + 2*1 - 3*(3-1) - 1)/2) + 1 = 2.
	assert.Equal(t, []any{1.0, 4.0, 2.0, 2.0}, js[1]["out_shape"])
	assert.Contains(t, js[2], "skipped")
	assert.NotContains(t, js[2], "fwd_us")
}

// --dtype float32,float16: the same kernels on half images, traffic at 2
// bytes a value, and the float16 rows' speed-up over their float32 twins.
func TestBenchFloat16(t *testing.T) {
	requireVulkan(t)
	r := mustSucceed(t, "bench", "--shapes", "1,4,8,8,3,2,1;1,2,6,6,2,2,0", "--ops", "max,l2", "--dtype", "float32,float16",
		"--iters", "1", "--copy-mib", "1", "--json", "-")
	js := benchJSONLines(t, r.stdout)
	require.Len(t, js, 1+2*2*3+1) // header, 2 shapes x 2 types x (max, max+argmax, l2), copy
	assert.Equal(t, "float32,float16", js[0]["dtype"])
	rows := js[1 : len(js)-1]
	for i, row := range rows {
		dt := row["dtype"].(string)
		require.Contains(t, []string{"float32", "float16"}, dt)
		if dt == "float32" {
			assert.NotContains(t, row, "fwd_speedup_vs_float32")
			continue
		}
		twin := rows[i-3] // float32 rows of a shape come first, in the same op order
		require.Equal(t, "float32", twin["dtype"])
		require.Equal(t, twin["op"], row["op"])
		require.Equal(t, twin["argmax"], row["argmax"])
		assert.Greater(t, row["fwd_speedup_vs_float32"], 0.0)
		assert.Greater(t, row["bwd_speedup_vs_float32"], 0.0)
		if row["argmax"] == false {
			assert.Equal(t, twin["fwd_bytes"].(float64)/2, row["fwd_bytes"], "half the bytes")
		}
	}
	r = mustSucceed(t, "bench", "--shapes", "1,4,8,8,3,2,1", "--ops", "avg", "--dtype", "float32,float16", "--iters", "1", "--copy-mib", "1")
	assert.Contains(t, r.stdout, "avg f16")
	assert.Contains(t, r.stdout, "float16 speed-up over float32")
}

func TestBenchErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--iters", "0"}, "--iters"},
		{[]string{"--shapes", "1,2,3"}, `"1,2,3" has 3 numbers`},
		{[]string{"--shapes", "1,2,3,4,5,6,x"}, `"x" is not a number`},
		{[]string{"--shapes", "1,2,3,4,0,1,0"}, "out of range"},
		{[]string{"--ops", "max,mux"}, `unknown op "mux"`},
		{[]string{"--dtype", "float32,int8"}, `unknown type "int8"`},
		{[]string{"--dtype", ","}, "--dtype: no type"},
		{[]string{"--plot", filepath.Join(dir, "x.jpg")}, "want a .png file"},
		{[]string{"--json", filepath.Join(dir, "missing", "b.jsonl")}, "b.jsonl"},
		{[]string{"--plot-metric", "fps"}, "--plot-metric"},
		{[]string{"--repeat", "0"}, "--repeat: 0 is out of range"},
		{[]string{"--repeat", "101"}, "--repeat: 101 is out of range"},
		{[]string{"--warmup", "-1s"}, "--warmup: -1s is out of range"},
		{[]string{"--warmup", "2m"}, "--warmup: 2m0s is out of range"},
		{[]string{"--nope"}, "unknown flag --nope"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		r := runVkmps(t, append([]string{"bench"}, c.args...)...)
		assertOneLineError(t, r, 2, c.want)
	}
	r := runVkmps(t, "bench", "--help")
	assert.Equal(t, 0, r.code)
	assert.Contains(t, r.stdout, "examples:")
}

func TestParseBenchShapes(t *testing.T) {
	got, err := parseBenchShapes(" 32,64,112,112,3,2,1 ;8,512,28,28,3,1,1,4;")
	require.NoError(t, err)
	assert.Equal(t, []benchShape{{32, 64, 112, 112, 3, 2, 1, 2}, {8, 512, 28, 28, 3, 1, 1, 4}}, got)
	_, err = parseBenchShapes(";")
	assert.Error(t, err)
}

// --repeat runs every case again and keeps each row's best median per
// direction, and measures the copy again at the end; --warmup is in the
// header; --pipeline-stats prints statistics where the device has them
// and otherwise fails naming what is missing.
func TestBenchRepeatWarmupStats(t *testing.T) {
	requireVulkan(t)
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "b.jsonl")
	r := mustSucceed(t, "bench", "--small", "--iters", "1", "--ops", "avg", "--repeat", "2", "--warmup", "1ms", "--json", jsonPath)
	assert.Contains(t, r.stdout, "best of 2 passes")
	assert.Contains(t, r.stdout, "after 1ms of warm-up")
	assert.Contains(t, r.stdout, "at the end")
	data, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	head := benchJSONLines(t, string(data))[0]
	assert.Equal(t, 2.0, head["repeat"])
	assert.Equal(t, 1.0, head["warmup_ms"])
	assert.Greater(t, head["copy_end_GBps"], 0.0)
	assert.Greater(t, head["copy_end_fresh_GBps"], 0.0)

	r = runVkmps(t, "bench", "--small", "--iters", "1", "--ops", "avg", "--pipeline-stats")
	if r.code == 0 {
		assert.Contains(t, r.stdout, "pipeline pooling_average")
	} else {
		assertOneLineError(t, r, 2, "pipeline statistics")
	}
}

func TestBestRows(t *testing.T) {
	ms := func(n int) benchTiming { return benchTiming{Median: time.Duration(n) * time.Millisecond} }
	first := []benchRow{{Fwd: ms(5), Bwd: ms(9), FwdGBps: 1, BwdGBps: 1}, {Skipped: "too big"}}
	second := []benchRow{{Fwd: ms(7), Bwd: ms(4), FwdGBps: 0.7, BwdGBps: 2}, {Fwd: ms(1)}}
	assert.Equal(t, first, bestRows(nil, first))
	got := bestRows(first, second)
	assert.Equal(t, ms(5), got[0].Fwd, "the first pass's forward was faster")
	assert.Equal(t, ms(4), got[0].Bwd, "the second pass's backward was faster")
	assert.Equal(t, 1.0, got[0].FwdGBps)
	assert.Equal(t, 2.0, got[0].BwdGBps)
	assert.Equal(t, "too big", got[1].Skipped, "a skipped row stays skipped")
}

// bench --conv: the convolution section's table and JSON lines (a
// header naming the section and the tuning, a row per layer and format
// with PyTorch's keys, the copy bandwidth last), and its flags' errors.
func TestBenchConv(t *testing.T) {
	requireVulkan(t)
	jsonPath := filepath.Join(t.TempDir(), "conv.jsonl")
	r := mustSucceed(t, "bench", "--conv", "--small", "--iters", "2", "--dtype", "float32,float16",
		"--conv-tuning", "winograd=1", "--json", jsonPath)
	assert.True(t, strings.HasPrefix(r.stdout, "device: "), r.stdout)
	assert.Contains(t, r.stdout, "tuning:  winograd=1")
	for _, l := range benchConvSmall {
		assert.Contains(t, r.stdout, l.Name)
	}
	data, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	js := benchJSONLines(t, string(data))
	require.Len(t, js, 1+2*len(benchConvSmall)+1)
	head, cp := js[0], js[len(js)-1]
	assert.Equal(t, "bench", head["vkmps"])
	assert.Equal(t, "conv", head["section"])
	assert.Equal(t, "winograd=1", head["conv_tuning"])
	assert.Equal(t, "d2d-copy", cp["op"])
	modes := map[string]int{}
	for _, row := range js[1 : len(js)-1] {
		modes[row["mode"].(string)]++
		assert.NotEmpty(t, row["conv"])
		for _, k := range []string{"fwd_us", "dx_us", "dw_us", "fwd_GBps"} {
			assert.Greater(t, row[k], 0.0, "%s %v", k, row)
		}
		for _, k := range []string{"fwd_tflops", "dx_tflops", "dw_tflops"} {
			assert.Contains(t, row, k)
		}
	}
	assert.Equal(t, map[string]int{"fp32": len(benchConvSmall), "fp16": len(benchConvSmall)}, modes)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--conv", "--shapes", "1,1,4,4,2,2,0"}, "--shapes is the pooling section's"},
		{[]string{"bench", "--conv", "--plot", "x.png"}, "--plot is the pooling section's"},
		{[]string{"bench", "--conv-tuning", "winograd=1"}, "give --conv too"},
		{[]string{"bench", "--conv", "--conv-tuning", "tile=99"}, "tile=99"},
	} {
		assertOneLineError(t, runVkmps(t, c.args...), 2, c.want)
	}
}

// roundSig keeps 4 significant digits of rates of any size, and a slow
// device's small rate positive.
func TestRoundSig(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{1664.83, 1665}, {2978.27, 2978}, {0.004123456, 0.004123}, {0.012345, 0.01235}, {12.3456, 12.35}, {0, 0}, {-0.0312349, -0.03123},
	} {
		assert.InDelta(t, c.want, roundSig(c.x, 4), 1e-12*max(1, c.want), "%v", c.x)
	}
	assert.Greater(t, roundSig(4e-6, 4), 0.0)
}

// speedup keeps 3 significant digits: a loaded lavapipe's float16 row 400
// times slower than its float32 twin still reports a positive ratio.
func TestSpeedup(t *testing.T) {
	for _, c := range []struct {
		a, b time.Duration
		want float64
	}{{3 * time.Millisecond, 2 * time.Millisecond, 1.5}, {10 * time.Microsecond, 4 * time.Millisecond, 0.0025},
		{2 * time.Millisecond, 3 * time.Millisecond, 0.667}, {time.Millisecond, 0, 0}} {
		if got := speedup(c.a, c.b); got != c.want {
			t.Errorf("speedup(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
