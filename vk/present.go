package vk

/*
#include <stdlib.h>
#include "vkmps.h"
#include "present.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Presentation: showing a picture that kernels computed in a window,
// copied on the GPU from a buffer into a swapchain image of the same
// device, with no trip through the CPU.
//
// The window-system library stays outside this package: it creates the
// window and, from the device's instance (InstanceHandle), a surface; the
// device must be opened with Options.Present and the instance extensions
// the library asks for (Options.InstanceExtensions).

const swapchainExtension = "VK_KHR_swapchain"

// VkResult values of the WSI extensions.
const (
	suboptimal       Result = 1000001003  // VK_SUBOPTIMAL_KHR
	errorOutOfDate   Result = -1000001004 // VK_ERROR_OUT_OF_DATE_KHR
	errorSurfaceLost Result = -1000000000 // VK_ERROR_SURFACE_LOST_KHR
)

// presentFramesLive is the number of frames in flight: Present waits for
// the one before last before reusing its command buffer and semaphore.
const presentFramesLive = 2

// Surface is a VkSurfaceKHR that a window-system library made for the
// device's instance (see Device.InstanceHandle). NewSwapchain takes
// ownership of it.
type Surface uint64

// SurfaceFromPointer returns the surface stored at address p. glfw's
// Window.CreateWindowSurface returns such an address (of a variable it
// does not keep alive), not the handle: call this at once on its result.
func SurfaceFromPointer(p uintptr) Surface { return Surface(C.vkmps_surface_at(C.uintptr_t(p))) }

// PixelOrder is the byte order of a swapchain's 4-byte pixels, which the
// picture given to Present must use: a copy does not convert.
type PixelOrder int

const (
	PixelBGRA PixelOrder = iota // bytes B, G, R, A (the usual X11 and Windows format)
	PixelRGBA                   // bytes R, G, B, A
)

func (o PixelOrder) String() string {
	if o == PixelRGBA {
		return "RGBA"
	}
	return "BGRA"
}

// presentState is what a device opened with Options.Present holds for
// presentation.
type presentState struct {
	fns        *C.vkmps_present_fns // C memory
	mu         sync.Mutex
	swapchains map[*Swapchain]struct{}
}

// instanceExtensions returns the instance extensions opts ask for.
func instanceExtensions(opts Options) []string {
	exts := append([]string(nil), opts.InstanceExtensions...)
	if opts.Present {
		exts = append(exts, "VK_KHR_surface")
	}
	return exts
}

// checkSwapchainExtension fails with ErrUnsupported when the device cannot
// present at all.
func (d *Device) checkSwapchainExtension() error {
	exts, err := enumerate(d.inst.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(d.pd)), false)
	if err != nil {
		return err
	}
	if !exts[swapchainExtension] {
		return fmt.Errorf("%w: %s cannot present to windows (no %s)", ErrUnsupported, d.info.Name, swapchainExtension)
	}
	return nil
}

func (d *Device) initPresent() error {
	fns := (*C.vkmps_present_fns)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vkmps_present_fns{}))))
	if fns == nil {
		return ErrOutOfHostMemory
	}
	d.present = &presentState{fns: fns, swapchains: map[*Swapchain]struct{}{}}
	if C.vkmps_present_init(fns, d.inst.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(d.pd)), d.cHandle()) == 0 {
		return fmt.Errorf("%w: a presentation entry point is missing", ErrInitializationFailed)
	}
	return nil
}

// destroyPresent destroys the swapchains still open (and their surfaces)
// before the device and instance go.
func (d *Device) destroyPresent() {
	p := d.present
	if p == nil {
		return
	}
	p.mu.Lock()
	open := make([]*Swapchain, 0, len(p.swapchains))
	for s := range p.swapchains {
		open = append(open, s)
	}
	p.swapchains = nil
	p.mu.Unlock()
	for _, s := range open {
		s.destroy(false)
	}
	C.free(unsafe.Pointer(p.fns))
	d.present = nil
}

// InstanceHandle returns the device's VkInstance, for window-system
// libraries that create surfaces (glfw's Window.CreateWindowSurface takes
// it as a typed pointer: pass (*byte)(h)). It stays valid until Close.
func (d *Device) InstanceHandle() unsafe.Pointer { return unsafe.Pointer(d.inst.handle) }
