package vk

/*
#include <stdlib.h>
#include "vkmps.h"
*/
import "C"

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Options configure Open.
type Options struct {
	// Device selects the device: a decimal index or a case-insensitive part
	// of its name (see Choose); Open fails with ErrNoSuchDevice when none
	// matches. Empty means the default rule of Choose (discrete >
	// integrated > virtual > CPU).
	Device string
	// Validation turns on VK_LAYER_KHRONOS_validation: ValidationSync
	// with synchronization validation, ValidationCore without. The zero
	// value, ValidationDefault, is off here; ValidationOff is off too, and
	// says so explicitly: package vkenv, which fills ValidationDefault from
	// $VKMPS_VALIDATION, leaves it off. Messages are collected; read them
	// with Device.ValidationMessages.
	//
	// Open reads no environment variable: the commands and the tests map
	// $VKMPS_DEVICE and $VKMPS_VALIDATION to these fields with package
	// vk/vkenv.
	Validation Validation
	// BlockSize is the size of the memory blocks buffers are sub-allocated
	// from; 0 means 64 MiB.
	BlockSize uint64
	// StagingSize is the size of the host-visible staging ring used to move
	// data to and from device-local memory on discrete GPUs; 0 means 32 MiB.
	StagingSize uint64
	// ForceStaging moves all buffer data through the staging ring, as on a
	// discrete GPU, even where device memory is host-visible. Tests use it
	// to exercise the discrete-GPU path on lavapipe.
	ForceStaging bool
	// Present enables presentation to windows (see NewSwapchain): the
	// instance gets VK_KHR_surface and the device VK_KHR_swapchain; Open
	// fails with ErrUnsupported where either is missing. Off by default:
	// compute needs neither.
	Present bool
	// InstanceExtensions are extra instance extensions to enable, such as
	// those a window-system library needs for its surfaces (glfw's
	// GetRequiredInstanceExtensions); Open fails with ErrUnsupported where
	// one is missing.
	InstanceExtensions []string
	// MaxStorageBufferRange, when non-zero, caps the device's reported
	// limit of the same name, so tests can exercise the splitting of large
	// tensors with small ones.
	MaxStorageBufferRange uint64
	// NoFloat16Storage opens the device without storageBuffer16BitAccess
	// even where it has it (Limits.Float16Storage is then false), so tests
	// can exercise a device that lacks it.
	NoFloat16Storage bool
	// PipelineStatistics asks the driver to keep its compiler's statistics
	// of every pipeline (registers, instructions, spills, ...; see
	// Pipeline.Statistics), where it offers them
	// (VK_KHR_pipeline_executable_properties). A tuning aid: it may slow
	// pipeline creation.
	PipelineStatistics bool
}

// Device is an open Vulkan device with one compute queue. It is safe for
// concurrent use by several goroutines: queue submissions are serialized.
// CommandBuffers are not: each is recorded by one goroutine at a time.
type Device struct {
	info   Info
	inst   *instance
	pd     vkg.PhysicalDevice
	handle vkg.Device
	queue  vkg.Queue
	fns    *C.vkmps_fns // C memory: entry points for the hot paths

	mem     *allocator
	staging *staging

	pipeMu    sync.Mutex
	pipeCache vkg.PipelineCache
	pipelines map[pipelineKey]*Pipeline
	layouts   map[Shader]*layout
	modules   map[Shader]vkg.ShaderModule
	// waitIdle is vkDeviceWaitIdle; internal tests replace it to see that
	// Close reports its failure.
	waitIdle func(vkg.Device) vkg.Result

	// mu guards the fields below.
	mu        sync.Mutex
	queueMu   sync.Mutex // held around vkQueueSubmit
	serial    uint64     // last submission serial handed out
	pending   []*pendingSubmit
	fences    []C.VkFence // free, unsignaled fences
	allFences []C.VkFence
	freeSubs  []*pendingSubmit
	completed uint64 // every submission with serial <= completed has finished
	retired   []retired
	frames    []*frame             // free command-buffer frames
	descPools []C.VkDescriptorPool // free descriptor pools
	allPools  []C.VkDescriptorPool
	allFrames []*frame
	live      map[string]int
	closed    atomic.Bool
	lost      atomic.Bool

	submissions atomic.Uint64

	present *presentState // nil unless Options.Present
}

// retired is work to run once a submission has finished: freeing memory
// of objects closed while the GPU still used them.
type retired struct {
	serial uint64
	fn     func()
}

// Open opens a device. See Options for how it is chosen. It reads no
// environment variable (package vk/vkenv maps them to Options).
func Open(opts Options) (*Device, error) {
	if !opts.Validation.valid() {
		return nil, invalidf("Options.Validation %d: want ValidationDefault, ValidationOff, ValidationCore or ValidationSync", int(opts.Validation))
	}
	mode := validationOff
	switch opts.Validation {
	case ValidationCore:
		mode = validationCore
	case ValidationSync:
		mode = validationSync
	}
	in, err := newInstance(mode, instanceExtensions(opts)...)
	if err != nil {
		return nil, err
	}
	pds, infos, err := in.physicalDevices()
	if err != nil {
		in.destroy()
		return nil, err
	}
	idx, err := Choose(infos, opts.Device)
	if err != nil {
		in.destroy()
		return nil, err
	}
	info := infos[idx]
	if c := opts.MaxStorageBufferRange; c > 0 && c < info.Limits.MaxStorageBufferRange {
		info.Limits.MaxStorageBufferRange = c
	}
	if opts.NoFloat16Storage {
		info.Limits.Float16Storage = false
		info.Limits.CooperativeMatrixNV = nil // its float16 shaders need the storage
		info.Limits.CooperativeMatrixKHR = nil
		info.Limits.Float16Arithmetic = false
	}
	d := &Device{
		info:      info,
		inst:      in,
		pd:        pds[idx],
		pipelines: map[pipelineKey]*Pipeline{},
		layouts:   map[Shader]*layout{},
		modules:   map[Shader]vkg.ShaderModule{},
		live:      map[string]int{},
		waitIdle:  vkg.DeviceWaitIdle,
	}
	if err := d.init(opts); err != nil {
		d.destroy()
		return nil, err
	}
	return d, nil
}

func (d *Device) init(opts Options) error {
	var exts []string
	if d.info.portabilitySubset {
		exts = append(exts, "VK_KHR_portability_subset")
	}
	if opts.Present {
		if err := d.checkSwapchainExtension(); err != nil {
			return err
		}
		exts = append(exts, swapchainExtension)
	}
	var features C.uint32_t
	if d.info.Limits.Float16Storage {
		features |= C.VKMPS_FEATURE_STORAGE16
	}
	stats := opts.PipelineStatistics && d.info.pipelineStats
	if stats {
		features |= C.VKMPS_FEATURE_PIPELINE_STATS
		exts = append(exts, "VK_KHR_pipeline_executable_properties")
	}
	nv, khr := len(d.info.Limits.CooperativeMatrixNV) > 0, len(d.info.Limits.CooperativeMatrixKHR) > 0
	if nv || khr {
		// describe found every extension and feature listed.
		features |= C.VKMPS_FEATURE_FLOAT16 | C.VKMPS_FEATURE_MEMORY_MODEL
		exts = append(exts, float16Extension, memoryModelExtension)
		if nv {
			features |= C.VKMPS_FEATURE_COOPMAT_NV
			exts = append(exts, coopMatExtensions[0])
		}
		if khr {
			features |= C.VKMPS_FEATURE_COOPMAT_KHR
			exts = append(exts, coopMatExtensionsKHR[0])
		}
	} else if d.info.Limits.Float16Arithmetic {
		features |= C.VKMPS_FEATURE_FLOAT16
		exts = append(exts, float16Extension)
	}
	ce, freeExts := cStrings(exts)
	defer freeExts()
	var ch C.VkDevice
	createMu.Lock() // wine.go
	cr := Result(C.vkmps_create_device(d.inst.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(d.pd)),
		C.uint32_t(d.info.queueFamily), ce, C.uint32_t(len(exts)), features, &ch))
	createMu.Unlock()
	if err := check("vkCreateDevice", cr); err != nil {
		return err
	}
	h := vkg.Device(unsafe.Pointer(ch))
	d.handle = h
	var q vkg.Queue
	vkg.GetDeviceQueue(h, d.info.queueFamily, 0, &q)
	d.queue = q
	d.fns = (*C.vkmps_fns)(C.calloc(1, C.size_t(unsafe.Sizeof(C.vkmps_fns{}))))
	if d.fns == nil {
		return ErrOutOfHostMemory
	}
	if C.vkmps_fns_init(d.fns, d.inst.cHandle(), d.cHandle()) == 0 {
		return fmt.Errorf("%w: a device entry point is missing", ErrInitializationFailed)
	}
	if stats {
		d.fns.pipeline_flags = C.VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
	}
	if opts.Present {
		if err := d.initPresent(); err != nil {
			return err
		}
	}
	pci := vkg.PipelineCacheCreateInfo{SType: vkg.StructureTypePipelineCacheCreateInfo}
	var pc vkg.PipelineCache
	r := vkg.CreatePipelineCache(h, &pci, nil, &pc)
	pci.Free()
	if err := check("vkCreatePipelineCache", Result(r)); err != nil {
		return err
	}
	d.pipeCache = pc
	var mp vkg.PhysicalDeviceMemoryProperties
	vkg.GetPhysicalDeviceMemoryProperties(d.pd, &mp)
	mp.Deref()
	d.mem = newAllocator(d, &mp, opts.BlockSize)
	d.mem.mapStorage = d.info.Limits.UnifiedMemory && !opts.ForceStaging
	if !d.mem.mapStorage {
		size := opts.StagingSize
		if size == 0 {
			size = 32 << 20
		}
		st, err := newStaging(d, size)
		if err != nil {
			return err
		}
		d.staging = st
	}
	return nil
}

func (d *Device) cHandle() C.VkDevice { return C.VkDevice(unsafe.Pointer(d.handle)) }

func (d *Device) cQueue() C.VkQueue { return C.VkQueue(unsafe.Pointer(d.queue)) }

// Closed reports whether Close has been called.
func (d *Device) Closed() bool { return d.closed.Load() }

// Info describes the device.
func (d *Device) Info() Info { return d.info }

// Limits returns the device's compute limits.
func (d *Device) Limits() Limits { return d.info.Limits }

// usable returns ErrClosed or ErrDeviceLost when the device cannot be used.
func (d *Device) usable() error {
	if d == nil || d.inst == nil {
		return invalidf("nil device, or one not made by vk.Open")
	}
	if d.closed.Load() {
		return ErrClosed
	}
	if d.lost.Load() {
		return ErrDeviceLost
	}
	return nil
}

// noteResult records device loss; every later call then fails fast.
func (d *Device) noteResult(err error) error {
	if err != nil && isLost(err) {
		d.lost.Store(true)
	}
	return err
}

func isLost(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Result == ErrorDeviceLost
}

// track counts live objects of a kind (+1 on create, -1 on close).
func (d *Device) track(kind string, delta int) {
	d.mu.Lock()
	d.live[kind] += delta
	if d.live[kind] == 0 {
		delete(d.live, kind)
	}
	d.mu.Unlock()
}

// LiveObjects returns the objects created on this device and not yet
// closed, by kind ("buffer", "command-buffer", ...). Tests assert it is
// empty before Close.
func (d *Device) LiveObjects() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int, len(d.live))
	for k, v := range d.live {
		out[k] = v
	}
	return out
}

// LiveSummary formats LiveObjects as "buffer=2 command-buffer=1", or "".
func (d *Device) LiveSummary() string {
	live := d.LiveObjects()
	keys := make([]string, 0, len(live))
	for k := range live {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, live[k])
	}
	return strings.Join(parts, " ")
}

// ValidationEnabled reports whether the validation layer is on.
func (d *Device) ValidationEnabled() bool { return d.inst.validation != validationOff }

// ValidationMessages returns the validation layer's messages since the
// last call, and clears them.
func (d *Device) ValidationMessages() []Message { return d.inst.takeMessages() }

// WaitIdle waits until all submitted work has finished.
func (d *Device) WaitIdle(ctx context.Context) error {
	if err := d.usable(); err != nil {
		return err
	}
	d.mu.Lock()
	s := d.serial
	d.mu.Unlock()
	return d.waitSerial(ctx, s)
}

// Close waits for the device to go idle and destroys it with everything
// made on it. Objects still open are released too; LiveObjects, called
// before Close, tells which they were. Close is safe to call twice (the
// second call does nothing and returns nil). It returns the error of
// vkDeviceWaitIdle, such as one wrapping ErrDeviceLost: work submitted
// before may not have completed. The device is destroyed either way.
func (d *Device) Close() error {
	if d.closed.Swap(true) {
		return nil
	}
	return d.destroy()
}

// destroy releases the device and everything made on it; it returns the
// error of waiting for the device to go idle.
func (d *Device) destroy() error {
	d.destroyPresent()
	var err error
	if d.handle != nil {
		err = d.noteResult(check("vkDeviceWaitIdle", Result(d.waitIdle(d.handle))))
		d.mu.Lock()
		d.pending = nil
		d.completed = d.serial
		d.runRetiredLocked()
		d.mu.Unlock()
		if d.staging != nil {
			d.staging.destroy()
		}
		for _, f := range d.allFrames {
			f.destroy(d)
		}
		for _, f := range d.allFences {
			vkg.DestroyFence(d.handle, vkg.Fence(unsafe.Pointer(f)), nil)
		}
		for _, p := range d.allPools {
			vkg.DestroyDescriptorPool(d.handle, vkg.DescriptorPool(unsafe.Pointer(p)), nil)
		}
		d.pipeMu.Lock()
		for _, p := range d.pipelines {
			vkg.DestroyPipeline(d.handle, p.handle, nil)
		}
		for _, l := range d.layouts {
			vkg.DestroyPipelineLayout(d.handle, l.pipeLayout, nil)
			vkg.DestroyDescriptorSetLayout(d.handle, l.setLayout, nil)
		}
		for _, m := range d.modules {
			vkg.DestroyShaderModule(d.handle, m, nil)
		}
		if d.pipeCache != nil {
			vkg.DestroyPipelineCache(d.handle, d.pipeCache, nil)
		}
		d.pipelines, d.layouts, d.modules = nil, nil, nil
		d.pipeMu.Unlock()
		if d.mem != nil {
			d.mem.destroy()
		}
		createMu.Lock() // wine.go
		vkg.DestroyDevice(d.handle, nil)
		createMu.Unlock()
		d.handle = nil
	}
	if d.fns != nil {
		C.free(unsafe.Pointer(d.fns))
		d.fns = nil
	}
	if d.inst != nil {
		d.inst.destroy()
	}
	return err
}
