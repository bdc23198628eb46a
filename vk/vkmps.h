// C half of package vk: what the vulkan-go binding lacks (Properties2, the
// debug-utils messenger) and the per-dispatch recording path, which runs as
// one cgo call with no Go allocation.
#ifndef VKMPS_H
#define VKMPS_H

#define VK_NO_PROTOTYPES 1
#include <stdint.h>
#include "vulkan/vulkan_core.h"

#define VKMPS_MAX_BINDINGS 8
#define VKMPS_MAX_PUSH 128

// Device-level entry points used on hot paths, from vkGetDeviceProcAddr.
typedef struct vkmps_fns {
	VkDevice device;
	PFN_vkAllocateDescriptorSets AllocateDescriptorSets;
	PFN_vkUpdateDescriptorSets UpdateDescriptorSets;
	PFN_vkResetDescriptorPool ResetDescriptorPool;
	PFN_vkCmdBindPipeline CmdBindPipeline;
	PFN_vkCmdBindDescriptorSets CmdBindDescriptorSets;
	PFN_vkCmdPushConstants CmdPushConstants;
	PFN_vkCmdDispatch CmdDispatch;
	PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
	PFN_vkCmdCopyBuffer CmdCopyBuffer;
	PFN_vkCmdFillBuffer CmdFillBuffer;
	PFN_vkCmdWriteTimestamp CmdWriteTimestamp;
	PFN_vkCmdResetQueryPool CmdResetQueryPool;
	PFN_vkBeginCommandBuffer BeginCommandBuffer;
	PFN_vkEndCommandBuffer EndCommandBuffer;
	PFN_vkResetCommandPool ResetCommandPool;
	PFN_vkQueueSubmit QueueSubmit;
	PFN_vkWaitForFences WaitForFences;
	PFN_vkResetFences ResetFences;
	PFN_vkGetFenceStatus GetFenceStatus;
	PFN_vkGetQueryPoolResults GetQueryPoolResults;
	PFN_vkCreateDescriptorSetLayout CreateDescriptorSetLayout;
	PFN_vkCreatePipelineLayout CreatePipelineLayout;
	PFN_vkCreateDescriptorPool CreateDescriptorPool;
	PFN_vkCreateComputePipelines CreateComputePipelines;
	PFN_vkFlushMappedMemoryRanges FlushMappedMemoryRanges;
	PFN_vkInvalidateMappedMemoryRanges InvalidateMappedMemoryRanges;
} vkmps_fns;

// vkmps_fns_init fills f for device dev of instance inst; it returns 0 when
// an entry point is missing.
int vkmps_fns_init(vkmps_fns* f, VkInstance inst, VkDevice dev);

// Arguments of one dispatch, kept in C memory by each command buffer.
typedef struct vkmps_dispatch {
	VkCommandBuffer cmd;
	VkDescriptorPool pool;
	VkDescriptorSetLayout set_layout;
	VkPipelineLayout layout;
	VkPipeline pipeline;
	uint32_t nbind;
	VkBuffer buffers[VKMPS_MAX_BINDINGS];
	uint64_t offsets[VKMPS_MAX_BINDINGS];
	uint64_t ranges[VKMPS_MAX_BINDINGS];
	uint32_t push_size;
	uint8_t push[VKMPS_MAX_PUSH];
	uint32_t groups[3];
	int barrier;    // 1: a compute/transfer memory barrier before the dispatch
	int bind_pipe;  // 1: the pipeline differs from the last one bound
} vkmps_dispatch;

// vkmps_record_dispatch allocates a descriptor set from a->pool, writes the
// bindings, and records barrier, bind, push constants and dispatch. It
// returns the VkResult of the allocation; on VK_ERROR_OUT_OF_POOL_MEMORY or
// VK_ERROR_FRAGMENTED_POOL nothing is recorded and the caller retries with
// a fresh pool.
VkResult vkmps_record_dispatch(const vkmps_fns* f, const vkmps_dispatch* a);

// vkmps_barrier records a global memory barrier. kind 0: compute/transfer
// writes before compute/transfer reads and writes; kind 1: host writes and
// all earlier compute/transfer work before this command buffer's work; kind
// 2: compute/transfer writes before host reads.
void vkmps_barrier(const vkmps_fns* f, VkCommandBuffer cmd, int kind);

void vkmps_copy(const vkmps_fns* f, VkCommandBuffer cmd, VkBuffer src, uint64_t src_off, VkBuffer dst, uint64_t dst_off, uint64_t size);
void vkmps_fill(const vkmps_fns* f, VkCommandBuffer cmd, VkBuffer dst, uint64_t off, uint64_t size, uint32_t value);

VkResult vkmps_begin(const vkmps_fns* f, VkCommandBuffer cmd, int reusable);
VkResult vkmps_end(const vkmps_fns* f, VkCommandBuffer cmd);
VkResult vkmps_submit(const vkmps_fns* f, VkQueue q, VkCommandBuffer cmd, VkFence fence);
VkResult vkmps_wait_fence(const vkmps_fns* f, VkFence fence, uint64_t timeout_ns);
VkResult vkmps_reset_fence(const vkmps_fns* f, VkFence fence);
void vkmps_timestamp(const vkmps_fns* f, VkCommandBuffer cmd, VkQueryPool qp, uint32_t query, int end);
void vkmps_reset_queries(const vkmps_fns* f, VkCommandBuffer cmd, VkQueryPool qp, uint32_t first, uint32_t count);
VkResult vkmps_query_results(const vkmps_fns* f, VkQueryPool qp, uint32_t first, uint32_t count, uint64_t* out);

// Properties that need vkGetPhysicalDeviceProperties2.
typedef struct vkmps_props2 {
	int ok;
	uint32_t subgroup_size;
	uint32_t subgroup_stages;
	uint32_t subgroup_ops;
	uint64_t max_memory_allocation_size;
	uint32_t max_per_set_descriptors;
	int has_driver;
	uint32_t driver_id;
	char driver_name[256];
	char driver_info[256];
} vkmps_props2;

void vkmps_get_props2(VkInstance inst, VkPhysicalDevice pd, int has_driver_props, vkmps_props2* out);

// Features that need vkGetPhysicalDeviceFeatures2 (Vulkan 1.1): ok is 0
// when the entry point is missing.
typedef struct vkmps_features2 {
	int ok;
	int storage_buffer_16bit; // VkPhysicalDevice16BitStorageFeatures.storageBuffer16BitAccess
} vkmps_features2;

void vkmps_get_features2(VkInstance inst, VkPhysicalDevice pd, vkmps_features2* out);

// Optional features vkmps_create_device enables (a bit set).
#define VKMPS_FEATURE_STORAGE16 1u // storageBuffer16BitAccess (core 1.1 struct in pNext)

// Debug-utils messenger whose callback hands messages to Go
// (vkmpsDebugMessage) with the user data token.
VkResult vkmps_create_messenger(VkInstance inst, uintptr_t token, VkDebugUtilsMessengerEXT* out);
void vkmps_destroy_messenger(VkInstance inst, VkDebugUtilsMessengerEXT m);

// Validation features chained into VkInstanceCreateInfo (synchronization
// validation). The returned memory is freed with free().
void* vkmps_validation_features(int sync);

// Calls whose create-infos hold arrays, made here rather than through
// vulkan-go (see vkmps.c).
VkResult vkmps_create_instance(uint32_t api, const char* const* layers, uint32_t nlayers, const char* const* exts,
                               uint32_t nexts, uint32_t flags, const void* pnext, VkInstance* out);
VkResult vkmps_create_device(VkInstance inst, VkPhysicalDevice pd, uint32_t family, const char* const* exts,
                             uint32_t nexts, uint32_t features, VkDevice* out);
VkResult vkmps_enumerate(VkInstance inst, VkPhysicalDevice pd, int layers, char* out, uint32_t max, uint32_t* count);
uint32_t vkmps_queue_families(VkInstance inst, VkPhysicalDevice pd, uint32_t* flags, uint32_t* ts_bits, uint32_t max);
VkResult vkmps_create_set_layout(const vkmps_fns* f, uint32_t nbind, VkDescriptorSetLayout* out);
VkResult vkmps_create_pipeline_layout(const vkmps_fns* f, VkDescriptorSetLayout set, uint32_t push_size,
                                      VkPipelineLayout* out);
VkResult vkmps_create_descriptor_pool(const vkmps_fns* f, uint32_t max_sets, uint32_t nbuffers, VkDescriptorPool* out);
VkResult vkmps_create_compute_pipeline(const vkmps_fns* f, VkPipelineCache cache, VkShaderModule module,
                                       VkPipelineLayout layout, const uint32_t* ids, const uint32_t* spec, uint32_t nspec,
                                       VkPipeline* out);
VkResult vkmps_flush(const vkmps_fns* f, VkDeviceMemory mem, uint64_t off, uint64_t size, int invalidate);

// vkmps_instance_version is vkEnumerateInstanceVersion, or 1.0 without it.
uint32_t vkmps_instance_version(void);

#endif
