// C half of package vk: what the vulkan-go binding lacks (Properties2, the
// debug-utils messenger) and the per-dispatch recording path, which runs as
// one cgo call with no Go allocation.
#ifndef VKMPS_H
#define VKMPS_H

#define VK_NO_PROTOTYPES 1
#include <stdint.h>
#include "vulkan/vulkan_core.h"

// VK_KHR_pipeline_executable_properties postdates the vendored header
// (version 88): its definitions, as the Vulkan registry gives them.
#ifndef VK_KHR_pipeline_executable_properties
#define VK_KHR_pipeline_executable_properties 1
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR ((VkStructureType)1000269000)
#define VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR ((VkStructureType)1000269001)
#define VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR ((VkStructureType)1000269002)
#define VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR ((VkStructureType)1000269003)
#define VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR ((VkStructureType)1000269004)
#define VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR 0x00000040u
typedef struct VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR {
	VkStructureType sType;
	void* pNext;
	VkBool32 pipelineExecutableInfo;
} VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR;
typedef struct VkPipelineInfoKHR {
	VkStructureType sType;
	const void* pNext;
	VkPipeline pipeline;
} VkPipelineInfoKHR;
typedef struct VkPipelineExecutablePropertiesKHR {
	VkStructureType sType;
	void* pNext;
	VkShaderStageFlags stages;
	char name[VK_MAX_DESCRIPTION_SIZE];
	char description[VK_MAX_DESCRIPTION_SIZE];
	uint32_t subgroupSize;
} VkPipelineExecutablePropertiesKHR;
typedef struct VkPipelineExecutableInfoKHR {
	VkStructureType sType;
	const void* pNext;
	VkPipeline pipeline;
	uint32_t executableIndex;
} VkPipelineExecutableInfoKHR;
typedef enum VkPipelineExecutableStatisticFormatKHR {
	VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR = 0,
	VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR = 1,
	VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR = 2,
	VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR = 3,
	VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_MAX_ENUM_KHR = 0x7FFFFFFF
} VkPipelineExecutableStatisticFormatKHR;
typedef union VkPipelineExecutableStatisticValueKHR {
	VkBool32 b32;
	int64_t i64;
	uint64_t u64;
	double f64;
} VkPipelineExecutableStatisticValueKHR;
typedef struct VkPipelineExecutableStatisticKHR {
	VkStructureType sType;
	void* pNext;
	char name[VK_MAX_DESCRIPTION_SIZE];
	char description[VK_MAX_DESCRIPTION_SIZE];
	VkPipelineExecutableStatisticFormatKHR format;
	VkPipelineExecutableStatisticValueKHR value;
} VkPipelineExecutableStatisticKHR;
typedef VkResult(VKAPI_PTR* PFN_vkGetPipelineExecutablePropertiesKHR)(VkDevice device, const VkPipelineInfoKHR* pPipelineInfo,
                                                                       uint32_t* pExecutableCount,
                                                                       VkPipelineExecutablePropertiesKHR* pProperties);
typedef VkResult(VKAPI_PTR* PFN_vkGetPipelineExecutableStatisticsKHR)(VkDevice device,
                                                                       const VkPipelineExecutableInfoKHR* pExecutableInfo,
                                                                       uint32_t* pStatisticCount,
                                                                       VkPipelineExecutableStatisticKHR* pStatistics);
#endif

// VK_NV_cooperative_matrix, VK_KHR_shader_float16_int8 and
// VK_NV_shader_sm_builtins also postdate it, and its
// VkPhysicalDeviceVulkanMemoryModelFeaturesKHR lacks the third member the
// final extension has: their definitions, as the Vulkan registry gives
// them, under vkmps_ names.
#define VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV ((VkStructureType)1000249000)
#define VKMPS_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV ((VkStructureType)1000249001)
#define VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV ((VkStructureType)1000249002)
#define VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES ((VkStructureType)1000082000)
#define VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES ((VkStructureType)1000211000)
#define VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV ((VkStructureType)1000154001)
typedef struct vkmps_coopmat_features_nv {
	VkStructureType sType;
	void* pNext;
	VkBool32 cooperativeMatrix;
	VkBool32 cooperativeMatrixRobustBufferAccess;
} vkmps_coopmat_features_nv;
typedef struct vkmps_coopmat_properties_nv { // VkCooperativeMatrixPropertiesNV
	VkStructureType sType;
	void* pNext;
	uint32_t MSize, NSize, KSize;
	int32_t AType, BType, CType, DType; // VkComponentTypeNV: 0 float16, 1 float32, ...
	int32_t scope;                      // VkScopeNV: 3 subgroup
} vkmps_coopmat_properties_nv;
typedef struct vkmps_physical_coopmat_properties_nv {
	VkStructureType sType;
	void* pNext;
	VkShaderStageFlags cooperativeMatrixSupportedStages;
} vkmps_physical_coopmat_properties_nv;
// VK_KHR_cooperative_matrix (Vulkan 1.3.255): the features and the
// device-wide properties have the NV structures' layout; a shape record
// has ResultType for DType and a saturatingAccumulation member before its
// scope.
#define VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)
#define VKMPS_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
#define VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506002)
typedef struct vkmps_coopmat_properties_khr { // VkCooperativeMatrixPropertiesKHR
	VkStructureType sType;
	void* pNext;
	uint32_t MSize, NSize, KSize;
	int32_t AType, BType, CType, ResultType; // VkComponentTypeKHR: 0 float16, 1 float32, ...
	VkBool32 saturatingAccumulation;
	int32_t scope; // VkScopeKHR: 3 subgroup
} vkmps_coopmat_properties_khr;
typedef struct vkmps_float16_int8_features {
	VkStructureType sType;
	void* pNext;
	VkBool32 shaderFloat16;
	VkBool32 shaderInt8;
} vkmps_float16_int8_features;
typedef struct vkmps_memory_model_features {
	VkStructureType sType;
	void* pNext;
	VkBool32 vulkanMemoryModel;
	VkBool32 vulkanMemoryModelDeviceScope;
	VkBool32 vulkanMemoryModelAvailabilityVisibilityChains;
} vkmps_memory_model_features;
typedef struct vkmps_sm_builtins_properties_nv {
	VkStructureType sType;
	void* pNext;
	uint32_t shaderSMCount;
	uint32_t shaderWarpsPerSM;
} vkmps_sm_builtins_properties_nv;

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
	// Optional (VK_KHR_pipeline_executable_properties): NULL unless the
	// device was made with VKMPS_FEATURE_PIPELINE_STATS.
	PFN_vkGetPipelineExecutablePropertiesKHR GetPipelineExecutableProperties;
	PFN_vkGetPipelineExecutableStatisticsKHR GetPipelineExecutableStatistics;
	VkPipelineCreateFlags pipeline_flags; // added to every compute pipeline
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
	int pipeline_executable_info; // VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR (when has_pipeline_stats)
} vkmps_features2;

void vkmps_get_features2(VkInstance inst, VkPhysicalDevice pd, int has_pipeline_stats, vkmps_features2* out);

// Optional features vkmps_create_device enables (a bit set).
#define VKMPS_FEATURE_STORAGE16 1u // storageBuffer16BitAccess (core 1.1 struct in pNext)
#define VKMPS_FEATURE_PIPELINE_STATS 2u // pipelineExecutableInfo (VK_KHR_pipeline_executable_properties enabled by the caller)
#define VKMPS_FEATURE_COOPMAT_NV 4u // cooperativeMatrix (VK_NV_cooperative_matrix enabled by the caller)
#define VKMPS_FEATURE_FLOAT16 8u // shaderFloat16 (VK_KHR_shader_float16_int8 enabled by the caller)
#define VKMPS_FEATURE_MEMORY_MODEL 16u // vulkanMemoryModel (VK_KHR_vulkan_memory_model enabled by the caller)
#define VKMPS_FEATURE_COOPMAT_KHR 32u // cooperativeMatrix (VK_KHR_cooperative_matrix enabled by the caller)

// What the cooperative-matrix shaders need, read with
// vkGetPhysicalDeviceFeatures2 for the extensions the caller says the
// device lists (has_* nonzero); ok is 0 when the entry point is missing.
typedef struct vkmps_coop_features {
	int ok;
	int cooperative_matrix; // VK_NV_cooperative_matrix's cooperativeMatrix (has_coopmat 1), or VK_KHR_cooperative_matrix's (2)
	int shader_float16;     // VK_KHR_shader_float16_int8's shaderFloat16
	int memory_model;       // VK_KHR_vulkan_memory_model's vulkanMemoryModel
} vkmps_coop_features;

void vkmps_get_coop_features(VkInstance inst, VkPhysicalDevice pd, int has_coopmat, int has_float16, int has_memory_model,
                             vkmps_coop_features* out);

// vkmps_coopmat_shapes writes up to max of the device's cooperative matrix
// shapes (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV, or
// vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR when khr) to out as
// records of 8 values: M, N, K, A, B, C, D (result) types, scope; KHR
// shapes with saturatingAccumulation are left out. It returns how many it
// wrote (0 when the entry point is missing or the call fails).
uint32_t vkmps_coopmat_shapes(VkInstance inst, VkPhysicalDevice pd, int khr, uint32_t* out, uint32_t max);

// vkmps_coopmat_stages returns VkPhysicalDeviceCooperativeMatrixPropertiesNV's
// (KHR's when khr) cooperativeMatrixSupportedStages (the caller checked
// the device lists the extension), 0 when unknown.
uint32_t vkmps_coopmat_stages(VkInstance inst, VkPhysicalDevice pd, int khr);

// vkmps_sm_count returns VK_NV_shader_sm_builtins's shaderSMCount (the
// caller checked the device lists the extension), 0 when unknown.
uint32_t vkmps_sm_count(VkInstance inst, VkPhysicalDevice pd);

// vkmps_pipeline_stats writes the compiler's statistics of every
// executable of pipeline p as lines "executable: name = value\n" into out
// (at most max bytes, NUL-terminated).
VkResult vkmps_pipeline_stats(const vkmps_fns* f, VkPipeline p, char* out, uint32_t max);

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
