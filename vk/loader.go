package vk

/*
#include <stdlib.h>
#include "loader.h"
#include "vkmps.h"
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

var loader struct {
	once   sync.Once
	name   string
	err    error
	anchor C.VkInstance // see anchorDrivers; never destroyed
}

// load opens the Vulkan loader once per process and hands its
// vkGetInstanceProcAddr to vulkan-go (whose own default loader looks for
// libvulkan.so, which only development packages install). It tries
// $VKMPS_VULKAN_LIBRARY alone when that is set; otherwise libvulkan.so.1
// then libvulkan.so (Linux), libvulkan.1.dylib, libvulkan.dylib then
// libMoltenVK.dylib (macOS), vulkan-1.dll (Windows).
func load() error {
	loader.once.Do(func() {
		var path *C.char
		if p := os.Getenv("VKMPS_VULKAN_LIBRARY"); p != "" {
			path = C.CString(p)
			defer C.free(unsafe.Pointer(path))
		}
		var name *C.char
		gipa := C.vkmps_load(path, &name)
		if gipa == nil {
			if path != nil {
				loader.err = fmt.Errorf("%w: VKMPS_VULKAN_LIBRARY=%s could not be loaded", ErrNoLoader, C.GoString(path))
			} else {
				loader.err = ErrNoLoader
			}
			return
		}
		loader.name = C.GoString(name)
		vkg.SetGetInstanceProcAddr(unsafe.Pointer(gipa))
		if err := vkg.Init(); err != nil {
			loader.err = fmt.Errorf("%w: %s: %v", ErrNoLoader, loader.name, err)
			return
		}
		anchorDrivers()
	})
	return loader.err
}

// anchorDrivers creates one bare instance that lives as long as the
// process. The Vulkan loader opens the drivers (ICDs) when an instance is
// created and closes them when the last one is destroyed; NVIDIA's
// libGLX_nvidia takes static TLS each time it is opened and does not give
// it back, so after about 30 Open/Close cycles vkCreateInstance failed
// with VK_ERROR_INCOMPATIBLE_DRIVER (measured: driver 580.159, one H200).
// With this instance alive the drivers stay loaded. Errors are ignored:
// Open reports them.
func anchorDrivers() {
	var in C.VkInstance
	api := C.uint32_t(vkg.MakeVersion(1, 0, 0))
	if C.vkmps_create_instance(api, nil, 0, nil, 0, 0, nil, &in) != C.VK_SUCCESS {
		return
	}
	loader.anchor = in
}

// LoaderName returns the file name of the Vulkan loader library in use,
// loading it if needed.
func LoaderName() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	return loader.name, nil
}
