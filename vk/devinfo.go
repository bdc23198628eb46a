package vk

/*
#include "vkmps.h"
*/
import "C"

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// DeviceType is VkPhysicalDeviceType.
type DeviceType int

const (
	DeviceOther DeviceType = iota
	DeviceIntegratedGPU
	DeviceDiscreteGPU
	DeviceVirtualGPU
	DeviceCPU
)

func (t DeviceType) String() string {
	switch t {
	case DeviceIntegratedGPU:
		return "integrated-gpu"
	case DeviceDiscreteGPU:
		return "discrete-gpu"
	case DeviceVirtualGPU:
		return "virtual-gpu"
	case DeviceCPU:
		return "cpu"
	}
	return "other"
}

// preference orders device types for the default choice: discrete >
// integrated > virtual > CPU > other.
func (t DeviceType) preference() int {
	switch t {
	case DeviceDiscreteGPU:
		return 4
	case DeviceIntegratedGPU:
		return 3
	case DeviceVirtualGPU:
		return 2
	case DeviceCPU:
		return 1
	}
	return 0
}

// Version is a Vulkan version number (VK_MAKE_VERSION encoding).
type Version uint32

func (v Version) Major() int { return int(uint32(v) >> 22) }
func (v Version) Minor() int { return int(uint32(v) >> 12 & 0x3ff) }
func (v Version) Patch() int { return int(uint32(v) & 0xfff) }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch()) }

// Limits are the device limits that matter to compute kernels.
type Limits struct {
	MaxStorageBufferRange           uint64    // bytes one storage-buffer binding may span
	MinStorageBufferOffsetAlignment uint64    // binding offsets are multiples of this
	MaxPushConstantsSize            uint32    // bytes
	MaxComputeWorkGroupCount        [3]uint32 // groups per dispatch, per axis
	MaxComputeWorkGroupSize         [3]uint32 // invocations per group, per axis
	MaxComputeWorkGroupInvocations  uint32    // invocations per group
	MaxComputeSharedMemorySize      uint32    // bytes of shared memory per group
	SubgroupSize                    uint32    // 0 when unknown
	MaxMemoryAllocationSize         uint64    // bytes; 0 when unknown
	MaxStorageBuffersPerStage       uint32
	NonCoherentAtomSize             uint64
	TimestampsSupported             bool    // the compute queue can write timestamps
	TimestampPeriod                 float32 // nanoseconds per timestamp tick
	DeviceLocalBytes                uint64  // size of the largest device-local heap
	UnifiedMemory                   bool    // device-local memory is also host-visible (UMA, CPU devices)
	// Float16Storage: the device has storageBuffer16BitAccess
	// (VK_KHR_16bit_storage, core in Vulkan 1.1), which Open enables, so
	// shaders may load and store 16-bit values in storage buffers (ops's
	// float16 images).
	Float16Storage bool
	// CooperativeMatrixNV lists the device's subgroup-scope cooperative
	// matrix shapes (VK_NV_cooperative_matrix,
	// vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) when it can run
	// the cooperative-matrix shaders vkmps builds: the extension with
	// cooperativeMatrix, shaderFloat16 (VK_KHR_shader_float16_int8: half
	// values in shared memory), vulkanMemoryModel (VK_KHR_vulkan_memory_model:
	// glslang's cooperative-matrix SPIR-V declares the Vulkan memory
	// model), 16-bit storage, and cooperative matrices and subgroup basic
	// operations in compute shaders. Open enables those extensions and features then. nil
	// otherwise.
	CooperativeMatrixNV []CooperativeMatrixShape
	// CooperativeMatrixKHR is CooperativeMatrixNV through
	// VK_KHR_cooperative_matrix (vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR;
	// shapes with saturating accumulation left out), on the same
	// conditions with that extension's cooperativeMatrix: NVIDIA, AMD
	// (RADV on RDNA3 and newer), Intel (Xe2) and Mesa 26's lavapipe list
	// it. Open enables it too. nil otherwise.
	CooperativeMatrixKHR []CooperativeMatrixShape
	// Float16Arithmetic: the device has shaderFloat16
	// (VK_KHR_shader_float16_int8) as well as Float16Storage, which Open
	// enables, so shaders may compute on half values (ops's packed float16
	// pooling passes).
	Float16Arithmetic bool
	// ComputeUnits is the device's count of multiprocessors where it
	// reports one (VK_NV_shader_sm_builtins' shaderSMCount); 0 when
	// unknown. Kernels size their work to fill the device with it.
	ComputeUnits uint32
}

// ComponentType is a cooperative matrix element type (VkComponentTypeNV).
type ComponentType uint32

// The component types of VK_NV_cooperative_matrix.
const (
	ComponentFloat16 ComponentType = 0
	ComponentFloat32 ComponentType = 1
	ComponentFloat64 ComponentType = 2
	ComponentSInt8   ComponentType = 3
	ComponentSInt16  ComponentType = 4
	ComponentSInt32  ComponentType = 5
	ComponentSInt64  ComponentType = 6
	ComponentUInt8   ComponentType = 7
	ComponentUInt16  ComponentType = 8
	ComponentUInt32  ComponentType = 9
	ComponentUInt64  ComponentType = 10
)

func (c ComponentType) String() string {
	names := [...]string{"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
	if int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("ComponentType(%d)", uint32(c))
}

// CooperativeMatrixShape is one multiply-add a device's cooperative
// matrices support at subgroup scope: D (M x N) = A (M x K) * B (K x N) + C
// (M x N), of component types A, B, C, D.
type CooperativeMatrixShape struct {
	M, N, K    uint32
	A, B, C, D ComponentType
}

func (s CooperativeMatrixShape) String() string {
	return fmt.Sprintf("%dx%dx%d %v*%v+%v=%v", s.M, s.N, s.K, s.A, s.B, s.C, s.D)
}

// HasCooperativeMatrix reports whether l lists the shape M x N x K with
// float16 A and B and float32 C and D in CooperativeMatrixNV.
func (l Limits) HasCooperativeMatrix(m, n, k uint32) bool {
	return hasHalfShape(l.CooperativeMatrixNV, m, n, k)
}

// HasCooperativeMatrixKHR is HasCooperativeMatrix for CooperativeMatrixKHR.
func (l Limits) HasCooperativeMatrixKHR(m, n, k uint32) bool {
	return hasHalfShape(l.CooperativeMatrixKHR, m, n, k)
}

func hasHalfShape(shapes []CooperativeMatrixShape, m, n, k uint32) bool {
	for _, s := range shapes {
		if s.M == m && s.N == n && s.K == k && s.A == ComponentFloat16 && s.B == ComponentFloat16 &&
			s.C == ComponentFloat32 && s.D == ComponentFloat32 {
			return true
		}
	}
	return false
}

// Info describes a physical device.
type Info struct {
	Index         int // position in the loader's enumeration
	Name          string
	Type          DeviceType
	VendorID      uint32
	DeviceID      uint32
	Vendor        string // "NVIDIA", "AMD", "Intel", "Apple", "Mesa", ... or the hex ID
	DriverVersion string // decoded per vendor convention
	DriverName    string // from VkPhysicalDeviceDriverProperties; "" when not reported
	DriverInfo    string
	APIVersion    Version
	Limits        Limits

	queueFamily        uint32
	portabilitySubset  bool
	pipelineStats      bool // VK_KHR_pipeline_executable_properties with pipelineExecutableInfo
	hasDriverProps     bool
	timestampValidBits uint32
}

// String returns a one-line description.
func (i Info) String() string {
	drv := i.DriverVersion
	if i.DriverName != "" {
		drv = i.DriverName + " " + drv
	}
	return fmt.Sprintf("%d: %s (%s, %s, Vulkan %s, driver %s)", i.Index, i.Name, i.Type, i.Vendor, i.APIVersion, drv)
}

func vendorName(id uint32) string {
	switch id {
	case 0x10DE:
		return "NVIDIA"
	case 0x1002, 0x1022:
		return "AMD"
	case 0x8086:
		return "Intel"
	case 0x106B:
		return "Apple"
	case 0x13B5:
		return "ARM"
	case 0x5143:
		return "Qualcomm"
	case 0x1010:
		return "ImgTec"
	case 0x14E4:
		return "Broadcom"
	case 0x10005:
		return "Mesa"
	}
	return fmt.Sprintf("0x%04X", id)
}

func driverVersionString(vendor, v uint32) string {
	switch vendor {
	case 0x10DE: // NVIDIA: 10.8.8.6 bits
		return fmt.Sprintf("%d.%d.%d", v>>22, v>>14&0xff, v>>6&0xff)
	}
	return Version(v).String()
}

// physicalDevices lists the instance's devices that have a compute queue.
func (in *instance) physicalDevices() ([]vkg.PhysicalDevice, []Info, error) {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", Result(vkg.EnumeratePhysicalDevices(in.handle, &n, nil))); err != nil {
		return nil, nil, err
	}
	pds := make([]vkg.PhysicalDevice, n)
	if err := check("vkEnumeratePhysicalDevices", Result(vkg.EnumeratePhysicalDevices(in.handle, &n, pds))); err != nil {
		return nil, nil, err
	}
	pds = pds[:n]
	var outPD []vkg.PhysicalDevice
	var infos []Info
	for i, pd := range pds {
		info, ok := in.describe(i, pd)
		if !ok {
			continue
		}
		outPD = append(outPD, pd)
		infos = append(infos, info)
	}
	return outPD, infos, nil
}

// describe reads a physical device's properties; ok is false when it has
// no compute queue.
func (in *instance) describe(index int, pd vkg.PhysicalDevice) (Info, bool) {
	var p vkg.PhysicalDeviceProperties
	vkg.GetPhysicalDeviceProperties(pd, &p)
	p.Deref()
	p.Limits.Deref()
	info := Info{
		Index:         index,
		Name:          vkg.ToString(p.DeviceName[:]),
		Type:          DeviceType(p.DeviceType),
		VendorID:      p.VendorID,
		DeviceID:      p.DeviceID,
		Vendor:        vendorName(p.VendorID),
		DriverVersion: driverVersionString(p.VendorID, p.DriverVersion),
		APIVersion:    Version(p.ApiVersion),
	}
	l := &p.Limits
	info.Limits = Limits{
		MaxStorageBufferRange:           uint64(l.MaxStorageBufferRange),
		MinStorageBufferOffsetAlignment: uint64(l.MinStorageBufferOffsetAlignment),
		MaxPushConstantsSize:            l.MaxPushConstantsSize,
		MaxComputeWorkGroupCount:        l.MaxComputeWorkGroupCount,
		MaxComputeWorkGroupSize:         l.MaxComputeWorkGroupSize,
		MaxComputeWorkGroupInvocations:  l.MaxComputeWorkGroupInvocations,
		MaxComputeSharedMemorySize:      l.MaxComputeSharedMemorySize,
		MaxStorageBuffersPerStage:       l.MaxPerStageDescriptorStorageBuffers,
		NonCoherentAtomSize:             uint64(l.NonCoherentAtomSize),
		TimestampPeriod:                 l.TimestampPeriod,
	}

	var flags, tsBits [64]C.uint32_t
	nq := int(C.vkmps_queue_families(in.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(pd)), &flags[0], &tsBits[0], 64))
	found := false
	for i := 0; i < nq; i++ {
		if uint32(flags[i])&uint32(vkg.QueueComputeBit) != 0 {
			info.queueFamily = uint32(i)
			info.timestampValidBits = uint32(tsBits[i])
			found = true
			break
		}
	}
	if !found {
		return info, false
	}
	info.Limits.TimestampsSupported = info.timestampValidBits > 0 && info.Limits.TimestampPeriod > 0

	exts, _ := enumerate(in.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(pd)), false)
	info.portabilitySubset = exts["VK_KHR_portability_subset"]
	info.hasDriverProps = info.APIVersion >= Version(vkg.MakeVersion(1, 2, 0)) || exts["VK_KHR_driver_properties"]
	var p2 C.vkmps_props2
	if info.APIVersion >= Version(vkg.MakeVersion(1, 1, 0)) || exts["VK_KHR_get_physical_device_properties2"] {
		C.vkmps_get_props2(in.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(pd)), boolInt(info.hasDriverProps), &p2)
		if p2.ok != 0 && exts["VK_NV_shader_sm_builtins"] {
			info.Limits.ComputeUnits = uint32(C.vkmps_sm_count(in.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(pd))))
		}
		if p2.ok != 0 {
			info.Limits.SubgroupSize = uint32(p2.subgroup_size)
			info.Limits.MaxMemoryAllocationSize = uint64(p2.max_memory_allocation_size)
			if p2.has_driver != 0 {
				info.DriverName = C.GoString(&p2.driver_name[0])
				info.DriverInfo = C.GoString(&p2.driver_info[0])
			}
		}
	}

	// Features: the 16-bit storage struct is core 1.1, so the instance and
	// the device must both be 1.1 (vkmps's shaders target 1.1 anyway).
	v11 := Version(vkg.MakeVersion(1, 1, 0))
	if info.APIVersion >= v11 && Version(in.apiVersion) >= v11 {
		var f2 C.vkmps_features2
		hasStats := exts["VK_KHR_pipeline_executable_properties"]
		C.vkmps_get_features2(in.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(pd)), boolInt(hasStats), &f2)
		info.Limits.Float16Storage = f2.ok != 0 && f2.storage_buffer_16bit != 0
		info.pipelineStats = hasStats && f2.ok != 0 && f2.pipeline_executable_info != 0
		info.Limits.CooperativeMatrixNV = in.coopMatShapes(pd, exts, &p2, info.Limits.Float16Storage, false)
		info.Limits.CooperativeMatrixKHR = in.coopMatShapes(pd, exts, &p2, info.Limits.Float16Storage, true)
		if info.Limits.Float16Storage && exts[float16Extension] {
			var f C.vkmps_coop_features
			C.vkmps_get_coop_features(in.cHandle(), C.VkPhysicalDevice(unsafe.Pointer(pd)), 0, 1, 0, &f)
			info.Limits.Float16Arithmetic = f.ok != 0 && f.shader_float16 != 0
		}
	}

	var mp vkg.PhysicalDeviceMemoryProperties
	vkg.GetPhysicalDeviceMemoryProperties(pd, &mp)
	mp.Deref()
	for i := uint32(0); i < mp.MemoryHeapCount; i++ {
		mp.MemoryHeaps[i].Deref()
	}
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		mp.MemoryTypes[i].Deref()
		t := mp.MemoryTypes[i]
		h := mp.MemoryHeaps[t.HeapIndex]
		if t.PropertyFlags&vkg.MemoryPropertyFlags(vkg.MemoryPropertyDeviceLocalBit) == 0 {
			continue
		}
		if uint64(h.Size) > info.Limits.DeviceLocalBytes {
			info.Limits.DeviceLocalBytes = uint64(h.Size)
		}
	}
	info.Limits.UnifiedMemory = info.Type != DeviceDiscreteGPU && hostVisibleDeviceLocal(&mp)
	return info, true
}

// coopMatExtensions are the device extensions a device made for the
// cooperative-matrix shaders enables (Limits.CooperativeMatrixNV), and
// coopMatExtensionsKHR those of their KHR builds (CooperativeMatrixKHR).
var (
	coopMatExtensions    = []string{"VK_NV_cooperative_matrix", float16Extension, memoryModelExtension}
	coopMatExtensionsKHR = []string{"VK_KHR_cooperative_matrix", float16Extension, memoryModelExtension}
)

// float16Extension has shaderFloat16 (Limits.Float16Arithmetic);
// memoryModelExtension the memory model glslang's cooperative-matrix
// SPIR-V declares.
const (
	float16Extension     = "VK_KHR_shader_float16_int8"
	memoryModelExtension = "VK_KHR_vulkan_memory_model"
)

// coopMatShapes returns the subgroup-scope cooperative matrix shapes of
// pd through VK_NV_cooperative_matrix, or VK_KHR_cooperative_matrix when
// khr, when it has everything the cooperative-matrix shaders need (see
// Limits.CooperativeMatrixNV), else nil.
func (in *instance) coopMatShapes(pd vkg.PhysicalDevice, exts map[string]bool, p2 *C.vkmps_props2, storage16, khr bool) []CooperativeMatrixShape {
	need, which := coopMatExtensions, 1
	if khr {
		need, which = coopMatExtensionsKHR, 2
	}
	for _, e := range need {
		if !exts[e] {
			return nil
		}
	}
	const computeStage, basicOps = 0x20, 0x1 // VK_SHADER_STAGE_COMPUTE_BIT, VK_SUBGROUP_FEATURE_BASIC_BIT
	if !storage16 || p2.ok == 0 || uint32(p2.subgroup_stages)&computeStage == 0 || uint32(p2.subgroup_ops)&basicOps == 0 {
		return nil
	}
	cpd := C.VkPhysicalDevice(unsafe.Pointer(pd))
	if uint32(C.vkmps_coopmat_stages(in.cHandle(), cpd, C.int(which-1)))&computeStage == 0 {
		return nil
	}
	var f C.vkmps_coop_features
	C.vkmps_get_coop_features(in.cHandle(), cpd, C.int(which), 1, 1, &f)
	if f.ok == 0 || f.cooperative_matrix == 0 || f.shader_float16 == 0 || f.memory_model == 0 {
		return nil
	}
	const most = 64
	var raw [8 * most]C.uint32_t
	n := int(C.vkmps_coopmat_shapes(in.cHandle(), cpd, C.int(which-1), &raw[0], most))
	var shapes []CooperativeMatrixShape
	for i := 0; i < n; i++ {
		r := raw[8*i : 8*i+8]
		if r[7] != 3 { // VK_SCOPE_SUBGROUP_NV, VK_SCOPE_SUBGROUP_KHR
			continue
		}
		shapes = append(shapes, CooperativeMatrixShape{M: uint32(r[0]), N: uint32(r[1]), K: uint32(r[2]),
			A: ComponentType(r[3]), B: ComponentType(r[4]), C: ComponentType(r[5]), D: ComponentType(r[6])})
	}
	return shapes
}

func hostVisibleDeviceLocal(mp *vkg.PhysicalDeviceMemoryProperties) bool {
	want := vkg.MemoryPropertyFlags(vkg.MemoryPropertyDeviceLocalBit | vkg.MemoryPropertyHostVisibleBit | vkg.MemoryPropertyHostCoherentBit)
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		if mp.MemoryTypes[i].PropertyFlags&want == want {
			return true
		}
	}
	return false
}

// Devices lists every Vulkan device with a compute queue. It creates and
// destroys an instance of its own.
func Devices() ([]Info, error) {
	in, err := newInstance(validationOff)
	if err != nil {
		return nil, err
	}
	defer in.destroy()
	_, infos, err := in.physicalDevices()
	return infos, err
}

// Choose returns the position in infos of the device that selector names:
// a decimal index (matching Info.Index) or a case-insensitive part of the
// name. An empty selector picks the default: discrete > integrated >
// virtual > CPU > other, the first of a kind. With no devices the error
// wraps ErrNoDevice; a selector that matches none of them gives one
// wrapping ErrNoSuchDevice, naming the selector and the devices.
func Choose(infos []Info, selector string) (int, error) {
	if len(infos) == 0 {
		return -1, ErrNoDevice
	}
	selector = strings.TrimSpace(selector)
	if selector == "" {
		best := 0
		for i, d := range infos {
			if d.Type.preference() > infos[best].Type.preference() {
				best = i
			}
		}
		return best, nil
	}
	if idx, err := strconv.Atoi(selector); err == nil {
		for i, d := range infos {
			if d.Index == idx {
				return i, nil
			}
		}
		return -1, fmt.Errorf("%w: no device has index %d (devices: %s)", ErrNoSuchDevice, idx, listNames(infos))
	}
	low := strings.ToLower(selector)
	for i, d := range infos {
		if strings.Contains(strings.ToLower(d.Name), low) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("%w: no device name contains %q (devices: %s)", ErrNoSuchDevice, selector, listNames(infos))
}

func listNames(infos []Info) string {
	var parts []string
	for _, d := range infos {
		parts = append(parts, fmt.Sprintf("%d %q", d.Index, d.Name))
	}
	return strings.Join(parts, ", ")
}
