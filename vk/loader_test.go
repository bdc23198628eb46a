package vk_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkmps/vkmps/vk"
)

// The loader is opened once per process, so these run in a child process
// with the environment that hides the loader or the drivers.
func TestMissingVulkanGivesClearErrors(t *testing.T) {
	if mode := os.Getenv("VKMPS_TEST_CHILD"); mode != "" {
		_, err := vk.Open(vk.Options{})
		want := map[string]error{"noloader": vk.ErrNoLoader, "nodevice": vk.ErrNoDevice}[mode]
		fmt.Println("ERR:", err)
		if !errors.Is(err, want) {
			os.Exit(3)
		}
		os.Exit(0)
	}
	for mode, env := range map[string][]string{
		"noloader": {"VKMPS_VULKAN_LIBRARY=/nonexistent/libvulkan.so.1"},
		"nodevice": {"VK_ICD_FILENAMES=/nonexistent/icd.json", "VK_DRIVER_FILES=/nonexistent/icd.json"},
	} {
		t.Run(mode, func(t *testing.T) {
			if mode == "nodevice" {
				if _, err := vk.LoaderName(); err != nil {
					t.Skip("no Vulkan loader here")
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestMissingVulkanGivesClearErrors$")
			cmd.Env = append(append(os.Environ(), "VKMPS_TEST_CHILD="+mode, "VKMPS_VALIDATION=0"), env...)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "child said: %s", out)
			assert.Contains(t, string(out), "install", "the error says what to install")
		})
	}
}
