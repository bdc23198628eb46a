package vk

/*
#include <stdlib.h>
#include "vkmps.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Severity of a validation message.
type Severity int

const (
	SeverityWarning Severity = iota
	SeverityError
)

func (s Severity) String() string {
	if s == SeverityError {
		return "error"
	}
	return "warning"
}

// Message is one message from the validation layer (VK_EXT_debug_utils).
type Message struct {
	Severity Severity
	Type     string // "validation", "performance" or "general"
	ID       string // message ID name, e.g. "SYNC-HAZARD-READ-AFTER-WRITE"
	Text     string
}

func (m Message) String() string {
	return fmt.Sprintf("%s %s [%s] %s", m.Type, m.Severity, m.ID, m.Text)
}

// validationMode is the layer setting an instance is created with
// (Options.Validation resolved).
type validationMode int

const (
	validationOff validationMode = iota
	validationCore
	validationSync // core plus synchronization validation
)

const validationLayer = "VK_LAYER_KHRONOS_validation"

// instance owns a VkInstance and, with validation, its messenger and the
// messages it collected.
type instance struct {
	handle      vkg.Instance
	apiVersion  uint32
	validation  validationMode
	messenger   C.VkDebugUtilsMessengerEXT
	token       uintptr
	portability bool

	mu       sync.Mutex
	messages []Message
}

// instances maps messenger tokens to instances for the C callback.
var instances struct {
	mu   sync.Mutex
	next uintptr
	m    map[uintptr]*instance
}

//export vkmpsDebugMessage
func vkmpsDebugMessage(token C.uintptr_t, severity C.int, typ C.int, id *C.char, msg *C.char) {
	instances.mu.Lock()
	in := instances.m[uintptr(token)]
	instances.mu.Unlock()
	if in == nil {
		return
	}
	m := Message{Severity: SeverityWarning, Type: "general", ID: C.GoString(id), Text: C.GoString(msg)}
	if severity&C.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT != 0 {
		m.Severity = SeverityError
	}
	switch {
	case typ&C.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT != 0:
		m.Type = "validation"
	case typ&C.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT != 0:
		m.Type = "performance"
	}
	in.mu.Lock()
	if len(in.messages) < 1000 {
		in.messages = append(in.messages, m)
	}
	in.mu.Unlock()
}

// enumerate lists extension names (of the instance, or of pd when it is
// not nil) or, with layers, instance layer names.
func enumerate(inst C.VkInstance, pd C.VkPhysicalDevice, layers bool) (map[string]bool, error) {
	what := "vkEnumerateInstanceExtensionProperties"
	if layers {
		what = "vkEnumerateInstanceLayerProperties"
	} else if pd != nil {
		what = "vkEnumerateDeviceExtensionProperties"
	}
	for {
		var n C.uint32_t
		if err := check(what, Result(C.vkmps_enumerate(inst, pd, boolInt(layers), nil, 0, &n))); err != nil {
			return nil, err
		}
		buf := make([]byte, 256*int(n)+256)
		have := n
		r := Result(C.vkmps_enumerate(inst, pd, boolInt(layers), (*C.char)(unsafe.Pointer(&buf[0])), have, &n))
		if r == Incomplete {
			continue // the list grew between the two calls
		}
		if err := check(what, r); err != nil {
			return nil, err
		}
		return names(buf, int(n)), nil
	}
}

// newInstance creates a Vulkan 1.1 instance (1.0 where the loader is
// older), with portability enumeration when the loader offers it
// (MoltenVK), the validation layer when asked, and the extra extensions
// (an error wrapping ErrUnsupported names one the loader lacks).
func newInstance(mode validationMode, extra ...string) (*instance, error) {
	if err := load(); err != nil {
		return nil, err
	}
	exts, err := enumerate(nil, nil, false)
	if err != nil {
		return nil, err
	}
	in := &instance{validation: mode, apiVersion: vkg.MakeVersion(1, 0, 0)}
	if v := uint32(C.vkmps_instance_version()); v >= vkg.MakeVersion(1, 1, 0) {
		in.apiVersion = vkg.MakeVersion(1, 1, 0)
	}
	var enable []string
	var flags uint32
	if exts["VK_KHR_portability_enumeration"] {
		// Named in Vulkan 1.3.216; the pinned 1.1.88 headers lack it.
		enable = append(enable, "VK_KHR_portability_enumeration")
		flags |= 0x1 // VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
		in.portability = true
	}
	if in.apiVersion < vkg.MakeVersion(1, 1, 0) && exts["VK_KHR_get_physical_device_properties2"] {
		enable = append(enable, "VK_KHR_get_physical_device_properties2")
	}
	for _, e := range extra {
		if !exts[e] {
			return nil, fmt.Errorf("%w: instance extension %s is not available", ErrUnsupported, e)
		}
		if !slices.Contains(enable, e) {
			enable = append(enable, e)
		}
	}
	var layers []string
	var pnext unsafe.Pointer
	if mode != validationOff {
		have, err := enumerate(nil, nil, true)
		if err != nil {
			return nil, err
		}
		// Under Wine the layer can only be enabled outside (hostlayer.go).
		outside := !have[validationLayer] && hostValidationActive()
		if !have[validationLayer] && !outside {
			return nil, fmt.Errorf("%w: validation asked for but %s is not installed (Debian: apt-get install vulkan-validationlayers; elsewhere: the Vulkan SDK%s)", ErrUnsupported, validationLayer, hostLayerHint())
		}
		if !exts["VK_EXT_debug_utils"] {
			return nil, fmt.Errorf("%w: validation needs the VK_EXT_debug_utils instance extension", ErrUnsupported)
		}
		if !outside {
			layers = append(layers, validationLayer)
		}
		enable = append(enable, "VK_EXT_debug_utils")
		pnext = C.vkmps_validation_features(boolInt(mode == validationSync))
		if pnext == nil {
			return nil, ErrOutOfHostMemory
		}
		defer C.free(pnext)
	}
	cl, freeLayers := cStrings(layers)
	defer freeLayers()
	ce, freeExts := cStrings(enable)
	defer freeExts()
	var ch C.VkInstance
	createMu.Lock() // wine.go
	r := Result(C.vkmps_create_instance(C.uint32_t(in.apiVersion), cl, C.uint32_t(len(layers)), ce, C.uint32_t(len(enable)),
		C.uint32_t(flags), pnext, &ch))
	createMu.Unlock()
	if err := check("vkCreateInstance", r); err != nil {
		if r == ErrorIncompatibleDriver {
			return nil, fmt.Errorf("%w (%v)", ErrNoDevice, err)
		}
		return nil, err
	}
	h := vkg.Instance(unsafe.Pointer(ch))
	in.handle = h
	if err := vkg.InitInstance(h); err != nil {
		createMu.Lock()
		vkg.DestroyInstance(h, nil)
		createMu.Unlock()
		return nil, fmt.Errorf("%w: %v", ErrInitializationFailed, err)
	}
	if mode != validationOff {
		instances.mu.Lock()
		if instances.m == nil {
			instances.m = make(map[uintptr]*instance)
		}
		instances.next++
		in.token = instances.next
		instances.m[in.token] = in
		instances.mu.Unlock()
		if err := check("vkCreateDebugUtilsMessengerEXT", Result(C.vkmps_create_messenger(in.cHandle(), C.uintptr_t(in.token), &in.messenger))); err != nil {
			in.destroy()
			return nil, err
		}
	}
	return in, nil
}

func (in *instance) cHandle() C.VkInstance { return C.VkInstance(unsafe.Pointer(in.handle)) }

func (in *instance) destroy() {
	if in.messenger != nil {
		C.vkmps_destroy_messenger(in.cHandle(), in.messenger)
		in.messenger = nil
	}
	if in.token != 0 {
		instances.mu.Lock()
		delete(instances.m, in.token)
		instances.mu.Unlock()
	}
	if in.handle != nil {
		createMu.Lock() // wine.go
		vkg.DestroyInstance(in.handle, nil)
		createMu.Unlock()
		in.handle = nil
	}
}

// takeMessages returns the messages collected so far and clears them.
func (in *instance) takeMessages() []Message {
	in.mu.Lock()
	defer in.mu.Unlock()
	m := in.messages
	in.messages = nil
	return m
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
