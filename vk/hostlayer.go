package vk

/*
#include <stdlib.h>
#include <string.h>
#include "loader.h"
#include "vkmps.h"

// VkPhysicalDeviceToolProperties (VK_EXT_tooling_info, core in 1.3),
// declared here since the pinned headers are 1.1.
typedef struct {
	VkStructureType sType;
	void* pNext;
	char name[256];
	char version[256];
	uint32_t purposes;
	char description[256];
	char layer[256];
} vkmps_tool_properties;

typedef VkResult (VKAPI_PTR *vkmps_pfn_tools)(VkPhysicalDevice, uint32_t*, vkmps_tool_properties*);

// vkmps_validation_tool reports whether a tool whose purposes include
// validation (VK_TOOL_PURPOSE_VALIDATION_BIT) is active on inst's first
// physical device: 1 yes, 0 no or cannot tell.
static int vkmps_validation_tool(VkInstance inst) {
	PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)vkmps_gipa;
	PFN_vkEnumeratePhysicalDevices enumerate = (PFN_vkEnumeratePhysicalDevices)gipa(inst, "vkEnumeratePhysicalDevices");
	vkmps_pfn_tools tools = (vkmps_pfn_tools)gipa(inst, "vkGetPhysicalDeviceToolPropertiesEXT");
	if (tools == NULL) tools = (vkmps_pfn_tools)gipa(inst, "vkGetPhysicalDeviceToolProperties");
	if (enumerate == NULL || tools == NULL) return 0;
	uint32_t n = 1;
	VkPhysicalDevice pd;
	VkResult r = enumerate(inst, &n, &pd);
	if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) return 0;
	vkmps_tool_properties t[16];
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 16; i++) t[i].sType = (VkStructureType)1000245000; // ..._PHYSICAL_DEVICE_TOOL_PROPERTIES
	n = 16;
	r = tools(pd, &n, t);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) return 0;
	for (uint32_t i = 0; i < n; i++) {
		if (t[i].purposes & 0x1) return 1; // VK_TOOL_PURPOSE_VALIDATION_BIT
	}
	return 0;
}

// vkmps_host_validation asks a bare instance (see hostValidationActive).
static int vkmps_host_validation(void) {
	VkInstance inst;
	if (vkmps_create_instance(VK_MAKE_VERSION(1, 1, 0), NULL, 0, NULL, 0, 0, NULL, &inst) != VK_SUCCESS) return 0;
	int active = vkmps_validation_tool(inst);
	PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)((PFN_vkGetInstanceProcAddr)vkmps_gipa)(inst, "vkDestroyInstance");
	if (destroy != NULL) destroy(inst, NULL);
	return active;
}
*/
import "C"

import "runtime"

// hostValidationActive reports whether the validation layer is already in
// the instance call chain although the loader does not list it. That is
// Wine: its winevulkan refuses every layer a Windows program names
// (VK_ERROR_LAYER_NOT_PRESENT) and lists none, but the Linux Vulkan loader
// under it loads the Linux validation layer when the Wine process's Unix
// environment says so (VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation;
// Wine keeps VK_* variables from Windows programs). The layer reports
// itself as a validation tool (VK_EXT_tooling_info), which is what this
// asks a bare instance.
func hostValidationActive() bool {
	createMu.Lock() // wine.go
	defer createMu.Unlock()
	return C.vkmps_host_validation() == 1
}

// hostLayerHint is added to the error for a missing validation layer on
// Windows, where Wine is the likely reason.
func hostLayerHint() string {
	if runtime.GOOS != "windows" {
		return ""
	}
	return "; under Wine, enable the Linux layer in the Unix environment: VK_INSTANCE_LAYERS=" + validationLayer
}
