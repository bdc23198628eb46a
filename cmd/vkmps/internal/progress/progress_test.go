package progress_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/cmd/vkmps/internal/progress"
)

func TestForcedBarDraws(t *testing.T) {
	var buf bytes.Buffer
	bar := progress.New(&buf, 4, "selfcheck", progress.Options{Force: true})
	require.NotNil(t, bar)
	for range 4 {
		bar.Add(1)
	}
	bar.Finish()
	bar.Finish()
	out := buf.String()
	assert.Contains(t, out, "selfcheck")
	assert.Contains(t, out, "100%")
	assert.Contains(t, out, "(4/4")
	assert.True(t, strings.HasSuffix(out, "\n"), "the line is ended once done: %q", out)
	assert.Equal(t, 1, strings.Count(out, "\n"))
}

func TestSilentBars(t *testing.T) {
	var buf bytes.Buffer
	for name, bar := range map[string]*progress.Bar{
		"not a terminal":  progress.New(&buf, 3, "bench", progress.Options{}),
		"disabled":        progress.New(&buf, 3, "bench", progress.Options{Disable: true}),
		"disabled+forced": progress.New(&buf, 3, "bench", progress.Options{Force: true, Disable: true}),
		"nil writer":      progress.New(nil, 3, "bench", progress.Options{Force: true}),
	} {
		assert.Nil(t, bar, name)
		bar.Describe("x") // a nil bar is usable
		bar.Add(1)
		bar.Finish()
	}
	assert.Zero(t, buf.Len())
}

func TestUnknownTotal(t *testing.T) {
	var buf bytes.Buffer
	bar := progress.New(&buf, 0, "graph", progress.Options{Force: true})
	bar.Add(5)
	bar.Describe("graph, step 2")
	bar.Finish()
	assert.Contains(t, buf.String(), "graph")
}

func TestIsTerminal(t *testing.T) {
	assert.False(t, progress.IsTerminal(&bytes.Buffer{}))
	f, err := os.CreateTemp(t.TempDir(), "log")
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, progress.IsTerminal(f), "a file is no terminal")
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, progress.IsTerminal(null), "nor is /dev/null, a character device")
}
