package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vkmps/vkmps/vk"
)

// openCmdDevice opens the device a command runs on: sel names it by index
// or part of its name; empty means $VKMPS_DEVICE, then the best device.
// $VKMPS_VALIDATION=1 turns the validation layer on (vk.Open reads it).
func openCmdDevice(sel string) (*vk.Device, error) {
	return vk.Open(vk.Options{Device: sel})
}

// closeCmdDevice closes dev. With the validation layer on, as the tests
// run commands, it also reports objects left open and every validation
// message as an error, so a command that leaks or misuses Vulkan fails.
func closeCmdDevice(dev *vk.Device) error {
	if dev == nil || dev.Closed() {
		return nil
	}
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
