#include "vkmps.h"
#include "loader.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static PFN_vkGetInstanceProcAddr gipa(void) { return (PFN_vkGetInstanceProcAddr)vkmps_gipa; }

int vkmps_fns_init(vkmps_fns* f, VkInstance inst, VkDevice dev) {
	memset(f, 0, sizeof(*f));
	f->device = dev;
	PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa()(inst, "vkGetDeviceProcAddr");
	if (gdpa == NULL) return 0;
#define LOAD(name) f->name = (PFN_vk##name)gdpa(dev, "vk" #name); if (f->name == NULL) return 0;
	LOAD(AllocateDescriptorSets)
	LOAD(UpdateDescriptorSets)
	LOAD(ResetDescriptorPool)
	LOAD(CmdBindPipeline)
	LOAD(CmdBindDescriptorSets)
	LOAD(CmdPushConstants)
	LOAD(CmdDispatch)
	LOAD(CmdPipelineBarrier)
	LOAD(CmdCopyBuffer)
	LOAD(CmdFillBuffer)
	LOAD(CmdWriteTimestamp)
	LOAD(CmdResetQueryPool)
	LOAD(BeginCommandBuffer)
	LOAD(EndCommandBuffer)
	LOAD(ResetCommandPool)
	LOAD(QueueSubmit)
	LOAD(WaitForFences)
	LOAD(ResetFences)
	LOAD(GetFenceStatus)
	LOAD(GetQueryPoolResults)
	LOAD(CreateDescriptorSetLayout)
	LOAD(CreatePipelineLayout)
	LOAD(CreateDescriptorPool)
	LOAD(CreateComputePipelines)
	LOAD(FlushMappedMemoryRanges)
	LOAD(InvalidateMappedMemoryRanges)
#undef LOAD
	f->GetPipelineExecutableProperties =
	    (PFN_vkGetPipelineExecutablePropertiesKHR)gdpa(dev, "vkGetPipelineExecutablePropertiesKHR");
	f->GetPipelineExecutableStatistics =
	    (PFN_vkGetPipelineExecutableStatisticsKHR)gdpa(dev, "vkGetPipelineExecutableStatisticsKHR");
	return 1;
}

static const VkPipelineStageFlags kStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
static const VkAccessFlags kWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
static const VkAccessFlags kAll = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                  VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

void vkmps_barrier(const vkmps_fns* f, VkCommandBuffer cmd, int kind) {
	VkMemoryBarrier b = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, kWrites, kAll};
	VkPipelineStageFlags src = kStages, dst = kStages;
	if (kind == 1) {
		src |= VK_PIPELINE_STAGE_HOST_BIT;
		b.srcAccessMask |= VK_ACCESS_HOST_WRITE_BIT;
	} else if (kind == 2) {
		dst = VK_PIPELINE_STAGE_HOST_BIT;
		b.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
	}
	f->CmdPipelineBarrier(cmd, src, dst, 0, 1, &b, 0, NULL, 0, NULL);
}

VkResult vkmps_record_dispatch(const vkmps_fns* f, const vkmps_dispatch* a) {
	VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, a->pool, 1, &a->set_layout};
	VkDescriptorSet set = VK_NULL_HANDLE;
	VkResult r = f->AllocateDescriptorSets(f->device, &ai, &set);
	if (r != VK_SUCCESS) return r;
	VkDescriptorBufferInfo infos[VKMPS_MAX_BINDINGS];
	VkWriteDescriptorSet writes[VKMPS_MAX_BINDINGS];
	for (uint32_t i = 0; i < a->nbind; i++) {
		infos[i].buffer = a->buffers[i];
		infos[i].offset = a->offsets[i];
		infos[i].range = a->ranges[i];
		VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, i, 0, 1,
		                          VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &infos[i], NULL};
		writes[i] = w;
	}
	if (a->nbind > 0) f->UpdateDescriptorSets(f->device, a->nbind, writes, 0, NULL);
	if (a->barrier) vkmps_barrier(f, a->cmd, 0);
	if (a->bind_pipe) f->CmdBindPipeline(a->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->pipeline);
	f->CmdBindDescriptorSets(a->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, a->layout, 0, 1, &set, 0, NULL);
	if (a->push_size > 0) f->CmdPushConstants(a->cmd, a->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, a->push_size, a->push);
	f->CmdDispatch(a->cmd, a->groups[0], a->groups[1], a->groups[2]);
	return VK_SUCCESS;
}

void vkmps_copy(const vkmps_fns* f, VkCommandBuffer cmd, VkBuffer src, uint64_t src_off, VkBuffer dst, uint64_t dst_off, uint64_t size) {
	VkBufferCopy c = {src_off, dst_off, size};
	f->CmdCopyBuffer(cmd, src, dst, 1, &c);
}

void vkmps_fill(const vkmps_fns* f, VkCommandBuffer cmd, VkBuffer dst, uint64_t off, uint64_t size, uint32_t value) {
	f->CmdFillBuffer(cmd, dst, off, size, value);
}

VkResult vkmps_begin(const vkmps_fns* f, VkCommandBuffer cmd, int reusable) {
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
	                               reusable ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
	return f->BeginCommandBuffer(cmd, &bi);
}

VkResult vkmps_end(const vkmps_fns* f, VkCommandBuffer cmd) { return f->EndCommandBuffer(cmd); }

VkResult vkmps_submit(const vkmps_fns* f, VkQueue q, VkCommandBuffer cmd, VkFence fence) {
	VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cmd, 0, NULL};
	return f->QueueSubmit(q, 1, &si, fence);
}

VkResult vkmps_wait_fence(const vkmps_fns* f, VkFence fence, uint64_t timeout_ns) {
	if (timeout_ns == 0) return f->GetFenceStatus(f->device, fence);
	return f->WaitForFences(f->device, 1, &fence, VK_TRUE, timeout_ns);
}

VkResult vkmps_reset_fence(const vkmps_fns* f, VkFence fence) { return f->ResetFences(f->device, 1, &fence); }

void vkmps_timestamp(const vkmps_fns* f, VkCommandBuffer cmd, VkQueryPool qp, uint32_t query, int end) {
	f->CmdWriteTimestamp(cmd, end ? VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, query);
}

void vkmps_reset_queries(const vkmps_fns* f, VkCommandBuffer cmd, VkQueryPool qp, uint32_t first, uint32_t count) {
	f->CmdResetQueryPool(cmd, qp, first, count);
}

VkResult vkmps_query_results(const vkmps_fns* f, VkQueryPool qp, uint32_t first, uint32_t count, uint64_t* out) {
	return f->GetQueryPoolResults(f->device, qp, first, count, count * sizeof(uint64_t), out, sizeof(uint64_t),
	                              VK_QUERY_RESULT_64_BIT);
}

void vkmps_get_props2(VkInstance inst, VkPhysicalDevice pd, int has_driver_props, vkmps_props2* out) {
	memset(out, 0, sizeof(*out));
	PFN_vkGetPhysicalDeviceProperties2 get =
	    (PFN_vkGetPhysicalDeviceProperties2)gipa()(inst, "vkGetPhysicalDeviceProperties2");
	if (get == NULL) get = (PFN_vkGetPhysicalDeviceProperties2)gipa()(inst, "vkGetPhysicalDeviceProperties2KHR");
	if (get == NULL) return;
	VkPhysicalDeviceDriverPropertiesKHR drv;
	memset(&drv, 0, sizeof(drv));
	drv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES_KHR;
	VkPhysicalDeviceMaintenance3Properties m3;
	memset(&m3, 0, sizeof(m3));
	m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
	m3.pNext = has_driver_props ? (void*)&drv : NULL;
	VkPhysicalDeviceSubgroupProperties sg;
	memset(&sg, 0, sizeof(sg));
	sg.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
	sg.pNext = &m3;
	VkPhysicalDeviceProperties2 p2;
	memset(&p2, 0, sizeof(p2));
	p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	p2.pNext = &sg;
	get(pd, &p2);
	out->ok = 1;
	out->subgroup_size = sg.subgroupSize;
	out->subgroup_stages = sg.supportedStages;
	out->subgroup_ops = sg.supportedOperations;
	out->max_memory_allocation_size = m3.maxMemoryAllocationSize;
	out->max_per_set_descriptors = m3.maxPerSetDescriptors;
	if (has_driver_props) {
		out->has_driver = 1;
		out->driver_id = drv.driverID;
		memcpy(out->driver_name, drv.driverName, sizeof(out->driver_name));
		memcpy(out->driver_info, drv.driverInfo, sizeof(out->driver_info));
		out->driver_name[255] = 0;
		out->driver_info[255] = 0;
	}
}

void vkmps_get_features2(VkInstance inst, VkPhysicalDevice pd, int has_pipeline_stats, vkmps_features2* out) {
	memset(out, 0, sizeof(*out));
	PFN_vkGetPhysicalDeviceFeatures2 get = (PFN_vkGetPhysicalDeviceFeatures2)gipa()(inst, "vkGetPhysicalDeviceFeatures2");
	if (get == NULL) get = (PFN_vkGetPhysicalDeviceFeatures2)gipa()(inst, "vkGetPhysicalDeviceFeatures2KHR");
	if (get == NULL) return;
	VkPhysicalDevice16BitStorageFeatures s16;
	memset(&s16, 0, sizeof(s16));
	s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe;
	memset(&pe, 0, sizeof(pe));
	pe.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
	if (has_pipeline_stats) s16.pNext = &pe;
	VkPhysicalDeviceFeatures2 f2;
	memset(&f2, 0, sizeof(f2));
	f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	f2.pNext = &s16;
	get(pd, &f2);
	out->ok = 1;
	out->storage_buffer_16bit = s16.storageBuffer16BitAccess == VK_TRUE;
	out->pipeline_executable_info = pe.pipelineExecutableInfo == VK_TRUE;
}

void vkmps_get_coop_features(VkInstance inst, VkPhysicalDevice pd, int has_coopmat, int has_float16, int has_memory_model,
                             vkmps_coop_features* out) {
	memset(out, 0, sizeof(*out));
	PFN_vkGetPhysicalDeviceFeatures2 get = (PFN_vkGetPhysicalDeviceFeatures2)gipa()(inst, "vkGetPhysicalDeviceFeatures2");
	if (get == NULL) get = (PFN_vkGetPhysicalDeviceFeatures2)gipa()(inst, "vkGetPhysicalDeviceFeatures2KHR");
	if (get == NULL) return;
	VkPhysicalDeviceFeatures2 f2;
	memset(&f2, 0, sizeof(f2));
	f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	// Only the structures of extensions the device lists go in the chain.
	vkmps_coopmat_features_nv cm;
	memset(&cm, 0, sizeof(cm));
	cm.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
	vkmps_float16_int8_features fi;
	memset(&fi, 0, sizeof(fi));
	fi.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
	vkmps_memory_model_features mm;
	memset(&mm, 0, sizeof(mm));
	mm.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;
	if (has_coopmat) {
		if (has_coopmat == 2) cm.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR; // same layout
		cm.pNext = f2.pNext;
		f2.pNext = &cm;
	}
	if (has_float16) {
		fi.pNext = f2.pNext;
		f2.pNext = &fi;
	}
	if (has_memory_model) {
		mm.pNext = f2.pNext;
		f2.pNext = &mm;
	}
	get(pd, &f2);
	out->ok = 1;
	out->cooperative_matrix = cm.cooperativeMatrix == VK_TRUE;
	out->shader_float16 = fi.shaderFloat16 == VK_TRUE;
	out->memory_model = mm.vulkanMemoryModel == VK_TRUE;
}

// coopmat_properties returns the n records of size bytes (sType st) that
// get (vkGetPhysicalDeviceCooperativeMatrixPropertiesNV or ...KHR: the
// same signature but for the record type) lists, calloc'd; NULL when
// there are none or the call fails.
typedef VkResult(VKAPI_PTR* vkmps_coopmat_query)(VkPhysicalDevice, uint32_t*, void*);
static void* coopmat_properties(vkmps_coopmat_query get, VkPhysicalDevice pd, size_t size, VkStructureType st, uint32_t* n) {
	*n = 0;
	if (get == NULL || get(pd, n, NULL) != VK_SUCCESS || *n == 0) return NULL;
	char* p = (char*)calloc(*n, size);
	if (p == NULL) return NULL;
	for (uint32_t i = 0; i < *n; i++) ((VkBaseOutStructure*)(p + i * size))->sType = st;
	VkResult r = get(pd, n, p);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		free(p);
		return NULL;
	}
	return p;
}

uint32_t vkmps_coopmat_shapes(VkInstance inst, VkPhysicalDevice pd, int khr, uint32_t* out, uint32_t max) {
	vkmps_coopmat_query get = (vkmps_coopmat_query)gipa()(
	    inst, khr ? "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR" : "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
	uint32_t n = 0, w = 0;
	void* p = khr ? coopmat_properties(get, pd, sizeof(vkmps_coopmat_properties_khr), VKMPS_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR, &n)
	              : coopmat_properties(get, pd, sizeof(vkmps_coopmat_properties_nv), VKMPS_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV, &n);
	for (uint32_t i = 0; p != NULL && i < n && w < max; i++) {
		uint32_t* o = out + 8 * w;
		if (khr) {
			vkmps_coopmat_properties_khr* k = (vkmps_coopmat_properties_khr*)p + i;
			if (k->saturatingAccumulation) continue;
			uint32_t rec[8] = {k->MSize, k->NSize, k->KSize, (uint32_t)k->AType, (uint32_t)k->BType, (uint32_t)k->CType, (uint32_t)k->ResultType, (uint32_t)k->scope};
			memcpy(o, rec, sizeof(rec));
		} else {
			vkmps_coopmat_properties_nv* v = (vkmps_coopmat_properties_nv*)p + i;
			uint32_t rec[8] = {v->MSize, v->NSize, v->KSize, (uint32_t)v->AType, (uint32_t)v->BType, (uint32_t)v->CType, (uint32_t)v->DType, (uint32_t)v->scope};
			memcpy(o, rec, sizeof(rec));
		}
		w++;
	}
	free(p);
	return w;
}

uint32_t vkmps_coopmat_stages(VkInstance inst, VkPhysicalDevice pd, int khr) {
	PFN_vkGetPhysicalDeviceProperties2 get =
	    (PFN_vkGetPhysicalDeviceProperties2)gipa()(inst, "vkGetPhysicalDeviceProperties2");
	if (get == NULL) get = (PFN_vkGetPhysicalDeviceProperties2)gipa()(inst, "vkGetPhysicalDeviceProperties2KHR");
	if (get == NULL) return 0;
	vkmps_physical_coopmat_properties_nv cp; // the KHR structure has the same layout
	memset(&cp, 0, sizeof(cp));
	cp.sType = khr ? VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR
	               : VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_NV;
	VkPhysicalDeviceProperties2 p2;
	memset(&p2, 0, sizeof(p2));
	p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	p2.pNext = &cp;
	get(pd, &p2);
	return cp.cooperativeMatrixSupportedStages;
}

uint32_t vkmps_sm_count(VkInstance inst, VkPhysicalDevice pd) {
	PFN_vkGetPhysicalDeviceProperties2 get =
	    (PFN_vkGetPhysicalDeviceProperties2)gipa()(inst, "vkGetPhysicalDeviceProperties2");
	if (get == NULL) get = (PFN_vkGetPhysicalDeviceProperties2)gipa()(inst, "vkGetPhysicalDeviceProperties2KHR");
	if (get == NULL) return 0;
	vkmps_sm_builtins_properties_nv sm;
	memset(&sm, 0, sizeof(sm));
	sm.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV;
	VkPhysicalDeviceProperties2 p2;
	memset(&p2, 0, sizeof(p2));
	p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
	p2.pNext = &sm;
	get(pd, &p2);
	return sm.shaderSMCount;
}

extern void vkmpsDebugMessage(uintptr_t token, int severity, int type, char* id, char* msg);

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT sev,
                                               VkDebugUtilsMessageTypeFlagsEXT type,
                                               const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
	vkmpsDebugMessage((uintptr_t)user, (int)sev, (int)type, (char*)(data->pMessageIdName ? data->pMessageIdName : ""),
	                  (char*)(data->pMessage ? data->pMessage : ""));
	return VK_FALSE;
}

VkResult vkmps_create_messenger(VkInstance inst, uintptr_t token, VkDebugUtilsMessengerEXT* out) {
	PFN_vkCreateDebugUtilsMessengerEXT create =
	    (PFN_vkCreateDebugUtilsMessengerEXT)gipa()(inst, "vkCreateDebugUtilsMessengerEXT");
	if (create == NULL) return VK_ERROR_EXTENSION_NOT_PRESENT;
	VkDebugUtilsMessengerCreateInfoEXT ci;
	memset(&ci, 0, sizeof(ci));
	ci.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
	ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
	ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
	                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
	ci.pfnUserCallback = debug_cb;
	ci.pUserData = (void*)token;
	return create(inst, &ci, NULL, out);
}

void vkmps_destroy_messenger(VkInstance inst, VkDebugUtilsMessengerEXT m) {
	PFN_vkDestroyDebugUtilsMessengerEXT destroy =
	    (PFN_vkDestroyDebugUtilsMessengerEXT)gipa()(inst, "vkDestroyDebugUtilsMessengerEXT");
	if (destroy != NULL) destroy(inst, m, NULL);
}

// VkValidationFeaturesEXT postdates the 1.1.88 headers; laid out by hand.
typedef struct {
	int32_t sType;
	const void* pNext;
	uint32_t enabledCount;
	const int32_t* pEnabled;
	uint32_t disabledCount;
	const int32_t* pDisabled;
} vkmps_validation_features_t;

void* vkmps_validation_features(int sync) {
	// One allocation holds the struct and its array.
	struct both {
		vkmps_validation_features_t f;
		int32_t enabled[1];
	};
	struct both* b = (struct both*)calloc(1, sizeof(struct both));
	if (b == NULL) return NULL;
	b->f.sType = 1000247000; // VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT
	b->enabled[0] = 4;        // VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
	b->f.enabledCount = sync ? 1 : 0;
	b->f.pEnabled = b->enabled;
	return b;
}

uint32_t vkmps_instance_version(void) {
	PFN_vkEnumerateInstanceVersion f = (PFN_vkEnumerateInstanceVersion)gipa()(NULL, "vkEnumerateInstanceVersion");
	if (f == NULL) return VK_API_VERSION_1_0;
	uint32_t v = VK_API_VERSION_1_0;
	if (f(&v) != VK_SUCCESS) return VK_API_VERSION_1_0;
	return v;
}

// ---- Calls whose create-infos hold arrays. vulkan-go copies nested arrays
// into C memory that a finalizer may free before the call reads it (its
// unpackS* helpers attach the finalizer to a local that dies at return), so
// vkmps makes these calls itself.

VkResult vkmps_create_instance(uint32_t api, const char* const* layers, uint32_t nlayers, const char* const* exts,
                               uint32_t nexts, uint32_t flags, const void* pnext, VkInstance* out) {
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa()(NULL, "vkCreateInstance");
	if (create == NULL) return VK_ERROR_INITIALIZATION_FAILED;
	VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "vkmps", 1, "vkmps", 1, api};
	VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, pnext, flags, &app, nlayers, layers, nexts, exts};
	return create(&ci, NULL, out);
}

VkResult vkmps_create_device(VkInstance inst, VkPhysicalDevice pd, uint32_t family, const char* const* exts,
                             uint32_t nexts, uint32_t features, VkDevice* out) {
	PFN_vkCreateDevice create = (PFN_vkCreateDevice)gipa()(inst, "vkCreateDevice");
	if (create == NULL) return VK_ERROR_INITIALIZATION_FAILED;
	float prio = 1.0f;
	VkDeviceQueueCreateInfo q = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, family, 1, &prio};
	VkDeviceCreateInfo ci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &q, 0, NULL, nexts, exts, NULL};
	// Vulkan 1.1: "VkPhysicalDevice16BitStorageFeatures can also be used in
	// the pNext chain of VkDeviceCreateInfo to selectively enable these
	// features" (the caller checked the device supports them).
	VkPhysicalDevice16BitStorageFeatures s16;
	memset(&s16, 0, sizeof(s16));
	s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
	if (features & VKMPS_FEATURE_STORAGE16) {
		s16.storageBuffer16BitAccess = VK_TRUE;
		s16.pNext = (void*)ci.pNext;
		ci.pNext = &s16;
	}
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR pe;
	memset(&pe, 0, sizeof(pe));
	pe.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR;
	if (features & VKMPS_FEATURE_PIPELINE_STATS) {
		pe.pipelineExecutableInfo = VK_TRUE;
		pe.pNext = (void*)ci.pNext;
		ci.pNext = &pe;
	}
	vkmps_coopmat_features_nv cm;
	memset(&cm, 0, sizeof(cm));
	cm.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
	if (features & (VKMPS_FEATURE_COOPMAT_NV | VKMPS_FEATURE_COOPMAT_KHR)) {
		if (!(features & VKMPS_FEATURE_COOPMAT_NV)) cm.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
		cm.cooperativeMatrix = VK_TRUE;
		cm.pNext = (void*)ci.pNext;
		ci.pNext = &cm;
	}
	vkmps_coopmat_features_nv ck; // VkPhysicalDeviceCooperativeMatrixFeaturesKHR, beside NV's when both
	memset(&ck, 0, sizeof(ck));
	ck.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
	if ((features & VKMPS_FEATURE_COOPMAT_NV) && (features & VKMPS_FEATURE_COOPMAT_KHR)) {
		ck.cooperativeMatrix = VK_TRUE;
		ck.pNext = (void*)ci.pNext;
		ci.pNext = &ck;
	}
	vkmps_float16_int8_features fi;
	memset(&fi, 0, sizeof(fi));
	fi.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
	if (features & VKMPS_FEATURE_FLOAT16) {
		fi.shaderFloat16 = VK_TRUE;
		fi.pNext = (void*)ci.pNext;
		ci.pNext = &fi;
	}
	vkmps_memory_model_features mm;
	memset(&mm, 0, sizeof(mm));
	mm.sType = VKMPS_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;
	if (features & VKMPS_FEATURE_MEMORY_MODEL) {
		mm.vulkanMemoryModel = VK_TRUE;
		mm.pNext = (void*)ci.pNext;
		ci.pNext = &mm;
	}
	return create(pd, &ci, NULL, out);
}

// Names of instance extensions (layer NULL), a layer's, instance layers
// (layers != 0) or a device's extensions (pd != NULL), as 256-byte records
// in out (room for max); *count receives the number available.
VkResult vkmps_enumerate(VkInstance inst, VkPhysicalDevice pd, int layers, char* out, uint32_t max, uint32_t* count) {
	if (layers) {
		PFN_vkEnumerateInstanceLayerProperties f =
		    (PFN_vkEnumerateInstanceLayerProperties)gipa()(NULL, "vkEnumerateInstanceLayerProperties");
		if (f == NULL) return VK_ERROR_INITIALIZATION_FAILED;
		VkResult r = f(count, NULL);
		if (r != VK_SUCCESS || out == NULL) return r;
		uint32_t n = *count < max ? *count : max;
		VkLayerProperties* p = (VkLayerProperties*)calloc(n ? n : 1, sizeof(VkLayerProperties));
		if (p == NULL) return VK_ERROR_OUT_OF_HOST_MEMORY;
		r = f(&n, p);
		for (uint32_t i = 0; i < n; i++) memcpy(out + 256 * i, p[i].layerName, 256);
		*count = n;
		free(p);
		return r;
	}
	VkResult r;
	VkExtensionProperties* p = NULL;
	uint32_t n = 0;
	if (pd != NULL) {
		PFN_vkEnumerateDeviceExtensionProperties f =
		    (PFN_vkEnumerateDeviceExtensionProperties)gipa()(inst, "vkEnumerateDeviceExtensionProperties");
		if (f == NULL) return VK_ERROR_INITIALIZATION_FAILED;
		r = f(pd, NULL, count, NULL);
		if (r != VK_SUCCESS || out == NULL) return r;
		n = *count < max ? *count : max;
		p = (VkExtensionProperties*)calloc(n ? n : 1, sizeof(VkExtensionProperties));
		if (p == NULL) return VK_ERROR_OUT_OF_HOST_MEMORY;
		r = f(pd, NULL, &n, p);
	} else {
		PFN_vkEnumerateInstanceExtensionProperties f =
		    (PFN_vkEnumerateInstanceExtensionProperties)gipa()(NULL, "vkEnumerateInstanceExtensionProperties");
		if (f == NULL) return VK_ERROR_INITIALIZATION_FAILED;
		r = f(NULL, count, NULL);
		if (r != VK_SUCCESS || out == NULL) return r;
		n = *count < max ? *count : max;
		p = (VkExtensionProperties*)calloc(n ? n : 1, sizeof(VkExtensionProperties));
		if (p == NULL) return VK_ERROR_OUT_OF_HOST_MEMORY;
		r = f(NULL, &n, p);
	}
	for (uint32_t i = 0; i < n; i++) memcpy(out + 256 * i, p[i].extensionName, 256);
	*count = n;
	free(p);
	return r;
}

uint32_t vkmps_queue_families(VkInstance inst, VkPhysicalDevice pd, uint32_t* flags, uint32_t* ts_bits, uint32_t max) {
	PFN_vkGetPhysicalDeviceQueueFamilyProperties f =
	    (PFN_vkGetPhysicalDeviceQueueFamilyProperties)gipa()(inst, "vkGetPhysicalDeviceQueueFamilyProperties");
	if (f == NULL) return 0;
	uint32_t n = 0;
	f(pd, &n, NULL);
	if (n > max) n = max;
	VkQueueFamilyProperties* p = (VkQueueFamilyProperties*)calloc(n ? n : 1, sizeof(VkQueueFamilyProperties));
	if (p == NULL) return 0;
	f(pd, &n, p);
	for (uint32_t i = 0; i < n; i++) {
		flags[i] = p[i].queueFlags;
		ts_bits[i] = p[i].timestampValidBits;
	}
	free(p);
	return n;
}

VkResult vkmps_create_set_layout(const vkmps_fns* f, uint32_t nbind, VkDescriptorSetLayout* out) {
	VkDescriptorSetLayoutBinding b[VKMPS_MAX_BINDINGS];
	for (uint32_t i = 0; i < nbind; i++) {
		VkDescriptorSetLayoutBinding x = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
		b[i] = x;
	}
	VkDescriptorSetLayoutCreateInfo ci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, nbind, b};
	return f->CreateDescriptorSetLayout(f->device, &ci, NULL, out);
}

VkResult vkmps_create_pipeline_layout(const vkmps_fns* f, VkDescriptorSetLayout set, uint32_t push_size,
                                      VkPipelineLayout* out) {
	VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
	VkPipelineLayoutCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &set,
	                                 push_size ? 1 : 0, push_size ? &pr : NULL};
	return f->CreatePipelineLayout(f->device, &ci, NULL, out);
}

VkResult vkmps_create_descriptor_pool(const vkmps_fns* f, uint32_t max_sets, uint32_t nbuffers, VkDescriptorPool* out) {
	VkDescriptorPoolSize s = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nbuffers};
	VkDescriptorPoolCreateInfo ci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL, 0, max_sets, 1, &s};
	return f->CreateDescriptorPool(f->device, &ci, NULL, out);
}

VkResult vkmps_create_compute_pipeline(const vkmps_fns* f, VkPipelineCache cache, VkShaderModule module,
                                       VkPipelineLayout layout, const uint32_t* ids, const uint32_t* spec, uint32_t nspec,
                                       VkPipeline* out) {
	VkSpecializationMapEntry* e = NULL;
	if (nspec > 0) {
		e = (VkSpecializationMapEntry*)calloc(nspec, sizeof(VkSpecializationMapEntry));
		if (e == NULL) return VK_ERROR_OUT_OF_HOST_MEMORY;
		for (uint32_t i = 0; i < nspec; i++) {
			e[i].constantID = ids[i];
			e[i].offset = 4 * i;
			e[i].size = 4;
		}
	}
	VkSpecializationInfo si = {nspec, e, 4 * (size_t)nspec, spec};
	VkPipelineShaderStageCreateInfo st = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
	                                      VK_SHADER_STAGE_COMPUTE_BIT, module, "main", nspec ? &si : NULL};
	VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, f->pipeline_flags, st, layout, VK_NULL_HANDLE, -1};
	VkResult r = f->CreateComputePipelines(f->device, cache, 1, &ci, NULL, out);
	free(e);
	return r;
}

VkResult vkmps_flush(const vkmps_fns* f, VkDeviceMemory mem, uint64_t off, uint64_t size, int invalidate) {
	VkMappedMemoryRange r = {VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, NULL, mem, off, size};
	return invalidate ? f->InvalidateMappedMemoryRanges(f->device, 1, &r) : f->FlushMappedMemoryRanges(f->device, 1, &r);
}

VkResult vkmps_pipeline_stats(const vkmps_fns* f, VkPipeline p, char* out, uint32_t max) {
	if (max == 0) return VK_ERROR_OUT_OF_HOST_MEMORY;
	out[0] = 0;
	if (f->GetPipelineExecutableProperties == NULL || f->GetPipelineExecutableStatistics == NULL)
		return VK_ERROR_FEATURE_NOT_PRESENT;
	VkPipelineInfoKHR pi = {VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, NULL, p};
	uint32_t nexe = 0;
	VkResult r = f->GetPipelineExecutableProperties(f->device, &pi, &nexe, NULL);
	if (r != VK_SUCCESS) return r;
	VkPipelineExecutablePropertiesKHR* exe = (VkPipelineExecutablePropertiesKHR*)calloc(nexe ? nexe : 1, sizeof(*exe));
	if (exe == NULL) return VK_ERROR_OUT_OF_HOST_MEMORY;
	for (uint32_t i = 0; i < nexe; i++) exe[i].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR;
	r = f->GetPipelineExecutableProperties(f->device, &pi, &nexe, exe);
	size_t used = 0;
	for (uint32_t i = 0; r == VK_SUCCESS && i < nexe; i++) {
		VkPipelineExecutableInfoKHR ei = {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, NULL, p, i};
		uint32_t ns = 0;
		r = f->GetPipelineExecutableStatistics(f->device, &ei, &ns, NULL);
		if (r != VK_SUCCESS) break;
		VkPipelineExecutableStatisticKHR* st = (VkPipelineExecutableStatisticKHR*)calloc(ns ? ns : 1, sizeof(*st));
		if (st == NULL) { r = VK_ERROR_OUT_OF_HOST_MEMORY; break; }
		for (uint32_t j = 0; j < ns; j++) st[j].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
		r = f->GetPipelineExecutableStatistics(f->device, &ei, &ns, st);
		for (uint32_t j = 0; (r == VK_SUCCESS || r == VK_INCOMPLETE) && j < ns && used + 1 < max; j++) {
			char val[64];
			switch (st[j].format) {
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
				snprintf(val, sizeof(val), "%s", st[j].value.b32 ? "true" : "false");
				break;
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
				snprintf(val, sizeof(val), "%lld", (long long)st[j].value.i64);
				break;
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
				snprintf(val, sizeof(val), "%llu", (unsigned long long)st[j].value.u64);
				break;
			default:
				snprintf(val, sizeof(val), "%g", st[j].value.f64);
			}
			int n = snprintf(out + used, max - used, "%s: %s = %s\n", exe[i].name, st[j].name, val);
			if (n < 0) break;
			used += (size_t)n < max - used ? (size_t)n : max - used - 1;
		}
		if (r == VK_INCOMPLETE) r = VK_SUCCESS;
		free(st);
	}
	free(exe);
	return r;
}
