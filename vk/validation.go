package vk

import (
	"fmt"
	"strings"
)

// Validation says whether Open turns on the Khronos validation layer
// (VK_LAYER_KHRONOS_validation; Debian: vulkan-validationlayers).
type Validation int

const (
	// ValidationDefault leaves the choice to whoever fills in Options:
	// Open treats it as ValidationOff; package vkenv replaces it with what
	// $VKMPS_VALIDATION asks for.
	ValidationDefault Validation = iota
	// ValidationOff: no layer, whatever the environment says.
	ValidationOff
	// ValidationCore: the layer's core checks.
	ValidationCore
	// ValidationSync: the core checks and synchronization validation
	// (missing or wrong barriers); what the tests run with.
	ValidationSync
)

func (v Validation) valid() bool { return v >= ValidationDefault && v <= ValidationSync }

// String returns "default", "off", "core" or "sync", the names
// ParseValidation reads.
func (v Validation) String() string {
	switch v {
	case ValidationDefault:
		return "default"
	case ValidationOff:
		return "off"
	case ValidationCore:
		return "core"
	case ValidationSync:
		return "sync"
	}
	return fmt.Sprintf("Validation(%d)", int(v))
}

// ParseValidation reads a validation setting, case-insensitively, as
// $VKMPS_VALIDATION spells it: "1", "sync", "true", "on" or "yes" give
// ValidationSync; "core" ValidationCore; "0", "off", "false" or "no"
// ValidationOff; "" and "default" ValidationDefault. Anything else is an
// error wrapping ErrInvalid that names the value and the choices.
func ParseValidation(s string) (Validation, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "default":
		return ValidationDefault, nil
	case "1", "sync", "true", "on", "yes":
		return ValidationSync, nil
	case "core":
		return ValidationCore, nil
	case "0", "off", "false", "no":
		return ValidationOff, nil
	}
	return ValidationDefault, invalidf("validation setting %q: want 1 (or sync, on), core, 0 (or off) or empty", s)
}
