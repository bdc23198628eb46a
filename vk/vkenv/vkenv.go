// Package vkenv maps vkmps's environment variables to vk.Options. It is
// the one place they are read: the commands (cmd/vkmps) and the tests
// (package vktest) go through it; vk.Open and the packages built on vk
// (ops, graph) read none of them, so a program that uses vkmps as a
// library gets only what it asks for in Options.
//
//	VKMPS_DEVICE          Options.Device, when that is empty: a device index
//	                      or a case-insensitive part of its name (`vkmps devices`
//	                      lists them). One that matches no device is an error
//	                      (vk.ErrNoSuchDevice), never a fallback.
//	VKMPS_VALIDATION      Options.Validation, when that is vk.ValidationDefault:
//	                      1 (or sync, true, on, yes) the validation layer with
//	                      synchronization validation; core the layer alone;
//	                      0 (or off, false, no) or unset: off. Anything else
//	                      is an error.
//	VKMPS_REQUIRE_DEVICE  tests (RequireDevice): 1 makes a machine without a
//	                      Vulkan device fail the tests instead of skipping
//	                      them, as `make test` and `make docker-test` set.
//
// Two more variables are read elsewhere: VKMPS_TUNE (kernel work shapes,
// parsed by ops.ParseTuning) by cmd/vkmps, which gives the result to the
// kernels it makes; and VKMPS_VULKAN_LIBRARY (the Vulkan loader library to
// open instead of the usual names) by package vk when it first loads the
// loader, since that happens once per process, before any Options.
package vkenv

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/vkmps/vkmps/vk"
)

// The variables this package reads.
const (
	DeviceVar        = "VKMPS_DEVICE"
	ValidationVar    = "VKMPS_VALIDATION"
	RequireDeviceVar = "VKMPS_REQUIRE_DEVICE"
)

// Options returns o with the fields it leaves to the environment filled
// in: Device from $VKMPS_DEVICE when o.Device is empty, Validation from
// $VKMPS_VALIDATION when o.Validation is vk.ValidationDefault (so
// vk.ValidationOff stays off). A value it cannot read is an error naming
// the variable, wrapping vk.ErrInvalid.
func Options(o vk.Options) (vk.Options, error) {
	if o.Device == "" {
		o.Device = strings.TrimSpace(os.Getenv(DeviceVar))
	}
	if o.Validation == vk.ValidationDefault {
		v, err := vk.ParseValidation(os.Getenv(ValidationVar))
		if err != nil {
			return o, fmt.Errorf("$%s: %w", ValidationVar, err)
		}
		o.Validation = v
	}
	return o, nil
}

// Open opens the device that o, completed by Options, asks for. When
// $VKMPS_DEVICE chose the device and it matches none, the error
// (wrapping vk.ErrNoSuchDevice) says so.
func Open(o vk.Options) (*vk.Device, error) {
	fromEnv := o.Device == "" && strings.TrimSpace(os.Getenv(DeviceVar)) != ""
	o, err := Options(o)
	if err != nil {
		return nil, err
	}
	d, err := vk.Open(o)
	if err != nil && fromEnv && errors.Is(err, vk.ErrNoSuchDevice) {
		return nil, fmt.Errorf("%w (chosen by $%s)", err, DeviceVar)
	}
	return d, err
}

// Device returns the device selector of $VKMPS_DEVICE ("" when unset),
// for commands that choose among vk.Devices themselves (vk.Choose).
func Device() string { return strings.TrimSpace(os.Getenv(DeviceVar)) }

// RequireDevice reports whether $VKMPS_REQUIRE_DEVICE asks that tests
// fail, rather than skip, without a Vulkan device: 1 (or true, yes, on)
// yes; unset, empty, 0 (or false, no, off) no; anything else is an error
// wrapping vk.ErrInvalid.
func RequireDevice() (bool, error) {
	s := os.Getenv(RequireDeviceVar)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "", "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("$%s=%q: %w: want 1 or 0", RequireDeviceVar, s, vk.ErrInvalid)
}
