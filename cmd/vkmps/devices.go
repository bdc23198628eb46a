package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vkenv"
)

func init() {
	register(&command{
		name:    "devices",
		summary: "list Vulkan devices, the chosen one marked, with their limits",
		usage: `[--json] [--device D]

Lists every Vulkan device with a compute queue. The one vkmps would use is
marked with '*': --device (or $VKMPS_DEVICE) names it by index or by part of
its name; otherwise a discrete GPU beats an integrated one, then virtual,
then CPU (lavapipe).

examples:
  vkmps devices
  vkmps devices --device llvmpipe --json`,
		run: runDevices,
	})
}

// deviceJSON is the --json form of a device.
type deviceJSON struct {
	Chosen bool `json:"chosen"`
	vk.Info
	Type       string `json:"type_name"`
	APIVersion string `json:"api_version_string"`
}

func runDevices(ctx context.Context, e *env, args []string) error {
	c := commands["devices"]
	fs := newFlags(c, e)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	sel := fs.String("device", "", "device index or part of its name (default $VKMPS_DEVICE, then the best)")
	if err := parse(c, e, fs, args); err != nil {
		return err
	}
	infos, err := vk.Devices()
	if err != nil {
		return err
	}
	// The environment as the other commands read it: $VKMPS_DEVICE when
	// --device is not given; a bad $VKMPS_VALIDATION is an error here too.
	o, err := vkenv.Options(vk.Options{Device: *sel})
	if err != nil {
		return err
	}
	chosen, err := vk.Choose(infos, o.Device)
	if err != nil {
		if *sel == "" && errors.Is(err, vk.ErrNoSuchDevice) {
			err = fmt.Errorf("%w (chosen by $%s)", err, vkenv.DeviceVar)
		}
		return err
	}
	if *asJSON {
		out := make([]deviceJSON, len(infos))
		for i, in := range infos {
			out[i] = deviceJSON{Chosen: i == chosen, Info: in, Type: in.Type.String(), APIVersion: in.APIVersion.String()}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	loaderName, _ := vk.LoaderName()
	fmt.Fprintf(e.stdout, "Vulkan loader: %s\n", loaderName)
	for i, in := range infos {
		mark := " "
		if i == chosen {
			mark = "*"
		}
		fmt.Fprintf(e.stdout, "\n%s %s\n", mark, in)
		if in.DriverInfo != "" {
			fmt.Fprintf(e.stdout, "    driver info: %s\n", in.DriverInfo)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		l := in.Limits
		ts := "no"
		if l.TimestampsSupported {
			ts = fmt.Sprintf("yes, %g ns per tick", l.TimestampPeriod)
		}
		rows := [][2]string{
			{"max storage buffer range", bytesString(l.MaxStorageBufferRange)},
			{"storage buffer offset alignment", fmt.Sprint(l.MinStorageBufferOffsetAlignment)},
			{"max workgroup size", fmt.Sprintf("%v, %d invocations", l.MaxComputeWorkGroupSize, l.MaxComputeWorkGroupInvocations)},
			{"max workgroup count", fmt.Sprint(l.MaxComputeWorkGroupCount)},
			{"shared memory per workgroup", bytesString(uint64(l.MaxComputeSharedMemorySize))},
			{"subgroup size", fmt.Sprint(l.SubgroupSize)},
			{"push constants", bytesString(uint64(l.MaxPushConstantsSize))},
			{"max allocation", bytesString(l.MaxMemoryAllocationSize)},
			{"device-local memory", bytesString(l.DeviceLocalBytes)},
			{"unified memory", fmt.Sprint(l.UnifiedMemory)},
			{"timestamps", ts},
			{"float16 storage", fmt.Sprint(l.Float16Storage)},
			{"float16 arithmetic", fmt.Sprint(l.Float16Arithmetic)},
			{"cooperative matrices (NV)", shapesString(l.CooperativeMatrixNV)},
			{"cooperative matrices (KHR)", shapesString(l.CooperativeMatrixKHR)},
		}
		for _, r := range rows {
			fmt.Fprintf(tw, "    %s\t%s\n", r[0], r[1])
		}
		tw.Flush()
	}
	return nil
}

// shapesString lists cooperative matrix shapes, "none" for none (or a
// device vkmps cannot run them on: vk.Limits.CooperativeMatrixNV).
func shapesString(shapes []vk.CooperativeMatrixShape) string {
	if len(shapes) == 0 {
		return "none"
	}
	parts := make([]string, len(shapes))
	for i, s := range shapes {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

func bytesString(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.4g KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
