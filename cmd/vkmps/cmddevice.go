package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vkmps/vkmps/vk"
)

// openCmdDevice opens the device a command runs on: sel names it by index
// or part of its name; empty means $VKMPS_DEVICE, then the best device.
// $VKMPS_VALIDATION=1 turns the validation layer on (vk.Open reads it).
func openCmdDevice(sel string) (*vk.Device, error) {
	return openCmdDeviceWith(vk.Options{Device: sel})
}

// openCmdDeviceWith is openCmdDevice with more options.
func openCmdDeviceWith(o vk.Options) (*vk.Device, error) {
	return vk.Open(o)
}

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
