package vk

/*
#include <stdlib.h>
#include "vkmps.h"
*/
import "C"

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	vkg "github.com/vulkan-go/vulkan"
)

// Pipeline is a compute pipeline: a shader with its specialization
// constants fixed. Pipelines belong to their Device, which caches them by
// shader and constants and destroys them when it closes.
type Pipeline struct {
	key       string // shader name and constants: "name/v0/v1/..."
	dev       *Device
	shader    Shader
	spec      []uint32
	handle    vkg.Pipeline
	layout    *layout
	localSize [3]uint32
	writes    []bool // per binding: the shader may write it
}

type layout struct {
	setLayout  vkg.DescriptorSetLayout
	pipeLayout vkg.PipelineLayout
	nbind      int
	push       uint32
}

// String names the pipeline: its shader and specialization constants in
// ID order, "name/v0/v1/...".
func (p *Pipeline) String() string { return p.key }

// Statistics returns the driver compiler's statistics of the pipeline,
// one "executable: name = value" per line (for example NVIDIA's register
// count and instruction count), for a device opened with
// Options.PipelineStatistics; an error wrapping ErrUnsupported where the
// device does not offer them.
func (p *Pipeline) Statistics() (string, error) {
	if p == nil {
		return "", invalidf("nil pipeline")
	}
	if err := p.dev.usable(); err != nil {
		return "", err
	}
	if !p.dev.PipelineStatistics() {
		return "", fmt.Errorf("%w: pipeline statistics (open the device with Options.PipelineStatistics; needs VK_KHR_pipeline_executable_properties)", ErrUnsupported)
	}
	buf := make([]byte, 1<<16)
	r := Result(C.vkmps_pipeline_stats(p.dev.fns, p.cHandle(), (*C.char)(unsafe.Pointer(&buf[0])), C.uint32_t(len(buf))))
	if err := check("vkGetPipelineExecutableStatisticsKHR", r); err != nil {
		return "", err
	}
	return C.GoString((*C.char)(unsafe.Pointer(&buf[0]))), nil
}

// PipelineStatistics reports whether the device's pipelines carry the
// compiler's statistics: it was opened with Options.PipelineStatistics and
// offers VK_KHR_pipeline_executable_properties.
func (d *Device) PipelineStatistics() bool {
	return d.usable() == nil && d.fns.pipeline_flags != 0
}

// Pipelines returns the device's cached pipelines, sorted by name.
func (d *Device) Pipelines() []*Pipeline {
	if d.usable() != nil {
		return nil
	}
	d.pipeMu.Lock()
	defer d.pipeMu.Unlock()
	out := make([]*Pipeline, 0, len(d.pipelines))
	for _, p := range d.pipelines {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// Shader returns the pipeline's shader.
func (p *Pipeline) Shader() Shader { return p.shader }

// LocalSize returns the workgroup size the pipeline was built with.
func (p *Pipeline) LocalSize() [3]uint32 { return p.localSize }

// Spec returns the specialization constant values, indexed by ID.
func (p *Pipeline) Spec() []uint32 { return append([]uint32(nil), p.spec...) }

func (p *Pipeline) cHandle() C.VkPipeline { return C.VkPipeline(unsafe.Pointer(p.handle)) }

// pipelineKey identifies a cached pipeline: the shader (by identity) and
// its name with the constants, "name/v0/v1/...".
type pipelineKey struct {
	shader Shader
	name   string
}

// Pipeline returns the compute pipeline for sh with specialization
// constants spec, in the order of sh.SpecConstants (sorted by constant
// ID); constants not given keep their declared defaults. Results are
// cached per device.
func (d *Device) Pipeline(sh Shader, spec ...uint32) (*Pipeline, error) {
	if err := d.usable(); err != nil {
		return nil, err
	}
	if sh == nil {
		return nil, invalidf("nil shader")
	}
	ids, defaults := sh.SpecConstants()
	if len(ids) != len(defaults) {
		return nil, invalidf("shader %s: %d specialization constant IDs but %d defaults", sh.ShaderName(), len(ids), len(defaults))
	}
	if len(spec) > len(ids) {
		return nil, invalidf("shader %s has %d specialization constants, %d given", sh.ShaderName(), len(ids), len(spec))
	}
	values := make([]uint32, len(ids))
	copy(values, defaults)
	copy(values, spec)
	var key strings.Builder
	key.WriteString(sh.ShaderName())
	for _, v := range values {
		key.WriteByte('/')
		key.WriteString(strconv.FormatUint(uint64(v), 10))
	}
	k := pipelineKey{sh, key.String()}
	d.pipeMu.Lock()
	defer d.pipeMu.Unlock()
	if p, ok := d.pipelines[k]; ok {
		return p, nil
	}
	p, err := d.newPipeline(sh, ids, values)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", k.name, err)
	}
	p.key = k.name
	d.pipelines[k] = p
	return p, nil
}

func (d *Device) newPipeline(sh Shader, ids, values []uint32) (*Pipeline, error) {
	lim := d.info.Limits
	local, localSpec := sh.WorkgroupSize()
	for axis, id := range localSpec {
		for i, cid := range ids {
			if id >= 0 && cid == uint32(id) {
				local[axis] = values[i]
			}
		}
	}
	inv := uint64(1)
	for axis, n := range local {
		if n == 0 || n > lim.MaxComputeWorkGroupSize[axis] {
			return nil, invalidf("workgroup size %v exceeds the device's %v", local, lim.MaxComputeWorkGroupSize)
		}
		inv *= uint64(n)
	}
	if inv > uint64(lim.MaxComputeWorkGroupInvocations) {
		return nil, invalidf("workgroup of %d invocations exceeds the device's %d", inv, lim.MaxComputeWorkGroupInvocations)
	}
	l, err := d.layoutFor(sh)
	if err != nil {
		return nil, err
	}
	mod, err := d.moduleFor(sh)
	if err != nil {
		return nil, err
	}
	var cspec, cids *C.uint32_t
	idv := append([]uint32(nil), ids...) // C reads Go memory it must not alias with the shader's
	if len(values) > 0 {
		cspec = (*C.uint32_t)(unsafe.Pointer(&values[0]))
		cids = (*C.uint32_t)(unsafe.Pointer(&idv[0]))
	}
	var ph C.VkPipeline
	r := Result(C.vkmps_create_compute_pipeline(d.fns, C.VkPipelineCache(unsafe.Pointer(d.pipeCache)),
		C.VkShaderModule(unsafe.Pointer(mod)), C.VkPipelineLayout(unsafe.Pointer(l.pipeLayout)), cids, cspec, C.uint32_t(len(values)), &ph))
	if err := check("vkCreateComputePipelines", r); err != nil {
		return nil, d.noteResult(err)
	}
	handles := []vkg.Pipeline{vkg.Pipeline(unsafe.Pointer(ph))}
	p := &Pipeline{dev: d, shader: sh, spec: values, handle: handles[0], layout: l, localSize: local,
		writes: append([]bool(nil), sh.BindingWrites()...)}
	return p, nil
}

// layoutFor returns the descriptor-set and pipeline layouts of sh; the
// caller holds pipeMu.
func (d *Device) layoutFor(sh Shader) (*layout, error) {
	if l, ok := d.layouts[sh]; ok {
		return l, nil
	}
	nbind, push := len(sh.BindingWrites()), sh.PushConstantBytes()
	if nbind > C.VKMPS_MAX_BINDINGS {
		return nil, invalidf("shader %s has %d bindings; at most %d are supported", sh.ShaderName(), nbind, C.VKMPS_MAX_BINDINGS)
	}
	if uint64(nbind) > uint64(d.info.Limits.MaxStorageBuffersPerStage) {
		return nil, fmt.Errorf("%w: shader %s needs %d storage buffers, the device allows %d", ErrUnsupported, sh.ShaderName(), nbind, d.info.Limits.MaxStorageBuffersPerStage)
	}
	if push > C.VKMPS_MAX_PUSH || push > d.info.Limits.MaxPushConstantsSize {
		return nil, fmt.Errorf("%w: shader %s has %d bytes of push constants, the device allows %d", ErrUnsupported, sh.ShaderName(), push, d.info.Limits.MaxPushConstantsSize)
	}
	var csl C.VkDescriptorSetLayout
	if err := check("vkCreateDescriptorSetLayout", Result(C.vkmps_create_set_layout(d.fns, C.uint32_t(nbind), &csl))); err != nil {
		return nil, err
	}
	sl := vkg.DescriptorSetLayout(unsafe.Pointer(csl))
	var cpl C.VkPipelineLayout
	if err := check("vkCreatePipelineLayout", Result(C.vkmps_create_pipeline_layout(d.fns, csl, C.uint32_t(push), &cpl))); err != nil {
		vkg.DestroyDescriptorSetLayout(d.handle, sl, nil)
		return nil, err
	}
	pl := vkg.PipelineLayout(unsafe.Pointer(cpl))
	l := &layout{setLayout: sl, pipeLayout: pl, nbind: nbind, push: push}
	d.layouts[sh] = l
	return l, nil
}

// moduleFor returns the shader module of sh; the caller holds pipeMu.
func (d *Device) moduleFor(sh Shader) (vkg.ShaderModule, error) {
	if m, ok := d.modules[sh]; ok {
		return m, nil
	}
	code, err := sh.Code()
	if err != nil {
		return nil, err
	}
	ci := vkg.ShaderModuleCreateInfo{
		SType:    vkg.StructureTypeShaderModuleCreateInfo,
		CodeSize: uint(4 * len(code)),
		PCode:    code,
	}
	var m vkg.ShaderModule
	r := vkg.CreateShaderModule(d.handle, &ci, nil, &m)
	ci.Free()
	if err := check("vkCreateShaderModule", Result(r)); err != nil {
		return nil, err
	}
	d.modules[sh] = m
	return m, nil
}
