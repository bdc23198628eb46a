package vk

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of these where
// one applies; test with errors.Is.
var (
	// ErrNoLoader: no Vulkan loader library could be opened.
	ErrNoLoader = errors.New("vk: no Vulkan loader found (install libvulkan1 and a driver, e.g. `apt-get install libvulkan1 mesa-vulkan-drivers` on Debian/Ubuntu; the Vulkan Runtime or a GPU driver on Windows; MoltenVK or the Vulkan SDK on macOS)")
	// ErrNoDevice: the loader found no usable device (no driver installed, or
	// none with a compute queue).
	ErrNoDevice = errors.New("vk: no Vulkan device with compute support (install a driver, e.g. `apt-get install mesa-vulkan-drivers` for the lavapipe CPU device)")
	// ErrNoSuchDevice: devices exist, but none matches the selector asked
	// for (Options.Device, $VKMPS_DEVICE, --device). The message names the
	// selector and lists the devices there are.
	ErrNoSuchDevice = errors.New("vk: no such Vulkan device")
	// ErrDeviceLost: the device was lost (driver reset, GPU hang). The Device
	// is unusable afterwards; every later call returns this error.
	ErrDeviceLost = errors.New("vk: device lost")
	// ErrOutOfDeviceMemory: the device could not allocate the memory asked for.
	ErrOutOfDeviceMemory = errors.New("vk: out of device memory")
	// ErrOutOfHostMemory: the driver could not allocate host memory.
	ErrOutOfHostMemory = errors.New("vk: out of host memory")
	// ErrInitializationFailed: instance or device creation failed.
	ErrInitializationFailed = errors.New("vk: initialization failed")
	// ErrUnsupported: the device lacks a feature, extension or layer asked for.
	ErrUnsupported = errors.New("vk: not supported by this device or installation")
	// ErrClosed: the object (or its device) was closed.
	ErrClosed = errors.New("vk: use of a closed object")
	// ErrInvalid: an argument is invalid (out-of-range sizes, mismatched
	// objects, wrong binding counts). The message names the argument.
	ErrInvalid = errors.New("vk: invalid argument")
	// ErrBusy: the command buffer is still executing.
	ErrBusy = errors.New("vk: command buffer still executing")
	// ErrValidation: the validation layer reported an error.
	ErrValidation = errors.New("vk: validation error")
)

// Result is a VkResult code.
type Result int32

// VkResult values this package gives names to.
const (
	Success                   Result = 0
	NotReady                  Result = 1
	Timeout                   Result = 2
	Incomplete                Result = 5
	ErrorOutOfHostMemory      Result = -1
	ErrorOutOfDeviceMemory    Result = -2
	ErrorInitializationFailed Result = -3
	ErrorDeviceLost           Result = -4
	ErrorMemoryMapFailed      Result = -5
	ErrorLayerNotPresent      Result = -6
	ErrorExtensionNotPresent  Result = -7
	ErrorFeatureNotPresent    Result = -8
	ErrorIncompatibleDriver   Result = -9
	ErrorTooManyObjects       Result = -10
	ErrorFragmentedPool       Result = -12
	ErrorOutOfPoolMemory      Result = -1000069000
)

// String returns the VkResult name.
func (r Result) String() string {
	switch r {
	case Success:
		return "VK_SUCCESS"
	case NotReady:
		return "VK_NOT_READY"
	case Timeout:
		return "VK_TIMEOUT"
	case Incomplete:
		return "VK_INCOMPLETE"
	case ErrorOutOfHostMemory:
		return "VK_ERROR_OUT_OF_HOST_MEMORY"
	case ErrorOutOfDeviceMemory:
		return "VK_ERROR_OUT_OF_DEVICE_MEMORY"
	case ErrorInitializationFailed:
		return "VK_ERROR_INITIALIZATION_FAILED"
	case ErrorDeviceLost:
		return "VK_ERROR_DEVICE_LOST"
	case ErrorMemoryMapFailed:
		return "VK_ERROR_MEMORY_MAP_FAILED"
	case ErrorLayerNotPresent:
		return "VK_ERROR_LAYER_NOT_PRESENT"
	case ErrorExtensionNotPresent:
		return "VK_ERROR_EXTENSION_NOT_PRESENT"
	case ErrorFeatureNotPresent:
		return "VK_ERROR_FEATURE_NOT_PRESENT"
	case ErrorIncompatibleDriver:
		return "VK_ERROR_INCOMPATIBLE_DRIVER"
	case ErrorTooManyObjects:
		return "VK_ERROR_TOO_MANY_OBJECTS"
	case ErrorFragmentedPool:
		return "VK_ERROR_FRAGMENTED_POOL"
	case ErrorOutOfPoolMemory:
		return "VK_ERROR_OUT_OF_POOL_MEMORY"
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

// Error is a failed Vulkan call: Op names the call, Result its VkResult.
// It unwraps to the matching sentinel (ErrDeviceLost, ErrOutOfDeviceMemory,
// ...), so callers test with errors.Is.
type Error struct {
	Op     string
	Result Result
}

func (e *Error) Error() string { return fmt.Sprintf("vk: %s: %v", e.Op, e.Result) }

// Unwrap returns the sentinel for e.Result, or nil.
func (e *Error) Unwrap() error {
	switch e.Result {
	case ErrorDeviceLost:
		return ErrDeviceLost
	case ErrorOutOfDeviceMemory:
		return ErrOutOfDeviceMemory
	case ErrorOutOfHostMemory:
		return ErrOutOfHostMemory
	case ErrorInitializationFailed, ErrorIncompatibleDriver:
		return ErrInitializationFailed
	case ErrorLayerNotPresent, ErrorExtensionNotPresent, ErrorFeatureNotPresent:
		return ErrUnsupported
	}
	return nil
}

// check converts a VkResult into an error; non-error results (success,
// timeout, not ready, incomplete) give nil.
func check(op string, r Result) error {
	if r >= 0 {
		return nil
	}
	return &Error{Op: op, Result: r}
}

// invalidf returns an error wrapping ErrInvalid with a formatted message.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
