package vk

/*
#include <stdlib.h>
#include "loader.h"
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
	once sync.Once
	name string
	err  error
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
		}
	})
	return loader.err
}

// LoaderName returns the file name of the Vulkan loader library in use,
// loading it if needed.
func LoaderName() (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	return loader.name, nil
}
