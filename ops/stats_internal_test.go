package ops

import (
	"os"
	"testing"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vktest"
)

// statsDevice opens the device with pipeline statistics for a diagnosis
// test that prints them, skipping the test unless $env is 1 or where the
// device offers none.
func statsDevice(t *testing.T, env string) *vk.Device {
	t.Helper()
	if os.Getenv(env) != "1" {
		t.Skipf("set %s=1 to print the statistics", env)
	}
	dev := vktest.Open(t, vk.Options{PipelineStatistics: true})
	if !dev.PipelineStatistics() {
		t.Skipf("%s offers no pipeline statistics", dev.Info().Name)
	}
	return dev
}
