package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vkmps/vkmps/ops"
	"github.com/vkmps/vkmps/vk"
	"github.com/vkmps/vkmps/vk/vkenv"
)

// The environment variables vkmps reads, all in this file (the library
// packages read none; see package vkenv):
//
//	VKMPS_DEVICE      the device when --device is not given (vkenv)
//	VKMPS_VALIDATION  1: the Vulkan validation layer, with synchronization
//	                  validation; core: without; 0 or unset: off (vkenv)
//	VKMPS_TUNE        work-shape overrides for the pooling kernels bench
//	                  measures, reported in its header (cmdTuning,
//	                  ops.ParseTuning); for measurements only
//
// A value that cannot be read is an error (exit 2), never ignored.

// openCmdDevice opens the device a command runs on: sel names it by index
// or part of its name; empty means $VKMPS_DEVICE, then the best device.
// $VKMPS_VALIDATION turns the validation layer on.
func openCmdDevice(sel string) (*vk.Device, error) {
	return openCmdDeviceWith(vk.Options{Device: sel})
}

// openCmdDeviceWith is openCmdDevice with more options; what o leaves
// unset comes from the environment (vkenv.Open).
func openCmdDeviceWith(o vk.Options) (*vk.Device, error) {
	return vkenv.Open(o)
}

// cmdTuning returns the kernel tuning $VKMPS_TUNE asks for
// (ops.ParseTuning: comma-separated key=value pairs such as "ox=2,wg=128";
// unset or empty: the kernels choose). bench gives it to every kernel it
// measures and reports it when not default.
func cmdTuning() (ops.Tuning, error) {
	t, err := ops.ParseTuning(os.Getenv(tuneVar))
	if err != nil {
		return t, fmt.Errorf("$%s: %w", tuneVar, err)
	}
	return t, nil
}

// tuneVar is the variable cmdTuning reads.
const tuneVar = "VKMPS_TUNE"

// closeCmdDevice closes dev. With the validation layer on, as the tests
// run commands, it also reports objects left open and every validation
// message as an error, so a command that leaks or misuses Vulkan fails.
func closeCmdDevice(dev *vk.Device) (err error) {
	if dev == nil || dev.Closed() {
		return nil
	}
	defer func() { noteDeviceProblem(err) }()
	var errs []error
	if dev.ValidationEnabled() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if err := dev.WaitIdle(ctx); err != nil {
			errs = append(errs, err)
		}
		cancel()
		if s := dev.LiveSummary(); s != "" {
			errs = append(errs, fmt.Errorf("internal error: objects still open on %s: %s", dev.Info().Name, s))
		}
	}
	errs = append(errs, dev.Close())
	if msgs := dev.ValidationMessages(); len(msgs) > 0 {
		texts := make([]string, len(msgs))
		for i, m := range msgs {
			texts[i] = m.String()
		}
		errs = append(errs, fmt.Errorf("%w: %s", vk.ErrValidation, strings.Join(texts, "; ")))
	}
	return errors.Join(errs...)
}

// deviceProblems collects what closeCmdDevice found wrong (objects left
// open, validation messages) once on is set (the tests' runVkmps sets it):
// the tests fail on them even when the command had failed for another
// reason first and its caller kept that first error.
var deviceProblems struct {
	sync.Mutex
	on   bool
	errs []error
}

func noteDeviceProblem(err error) {
	if err == nil {
		return
	}
	deviceProblems.Lock()
	if deviceProblems.on {
		deviceProblems.errs = append(deviceProblems.errs, err)
	}
	deviceProblems.Unlock()
}
