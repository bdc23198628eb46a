// C half of presentation (VK_KHR_surface, VK_KHR_swapchain): entry points
// the vulkan-go binding lacks or wraps with nested arrays, the choice of
// swapchain parameters, and the recording of the copy into a swapchain
// image. See present.go.
#ifndef VKMPS_PRESENT_H
#define VKMPS_PRESENT_H

#define VK_NO_PROTOTYPES 1
#include <stdint.h>
#include "vulkan/vulkan_core.h"

typedef struct vkmps_present_fns {
	VkInstance instance;
	VkPhysicalDevice pd;
	VkDevice device;
	PFN_vkDestroySurfaceKHR DestroySurfaceKHR;
	PFN_vkGetPhysicalDeviceSurfaceSupportKHR GetPhysicalDeviceSurfaceSupportKHR;
	PFN_vkGetPhysicalDeviceSurfaceCapabilitiesKHR GetPhysicalDeviceSurfaceCapabilitiesKHR;
	PFN_vkGetPhysicalDeviceSurfaceFormatsKHR GetPhysicalDeviceSurfaceFormatsKHR;
	PFN_vkGetPhysicalDeviceSurfacePresentModesKHR GetPhysicalDeviceSurfacePresentModesKHR;
	PFN_vkCreateSwapchainKHR CreateSwapchainKHR;
	PFN_vkDestroySwapchainKHR DestroySwapchainKHR;
	PFN_vkGetSwapchainImagesKHR GetSwapchainImagesKHR;
	PFN_vkAcquireNextImageKHR AcquireNextImageKHR;
	PFN_vkQueuePresentKHR QueuePresentKHR;
	PFN_vkCreateSemaphore CreateSemaphore;
	PFN_vkDestroySemaphore DestroySemaphore;
	PFN_vkCmdPipelineBarrier CmdPipelineBarrier;
	PFN_vkCmdCopyBufferToImage CmdCopyBufferToImage;
	PFN_vkCmdCopyImageToBuffer CmdCopyImageToBuffer;
	PFN_vkCmdClearColorImage CmdClearColorImage;
	PFN_vkQueueSubmit QueueSubmit;
	PFN_vkQueueWaitIdle QueueWaitIdle;
} vkmps_present_fns;

// vkmps_present_init fills f; it returns 0 when an entry point is missing
// (the instance or device lacks the surface or swapchain extension).
int vkmps_present_init(vkmps_present_fns* f, VkInstance inst, VkPhysicalDevice pd, VkDevice dev);

// vkmps_surface_at reads the VkSurfaceKHR stored at address p (glfw's
// Window.CreateWindowSurface returns such an address).
uint64_t vkmps_surface_at(uintptr_t p);

void vkmps_destroy_surface(const vkmps_present_fns* f, uint64_t surface);

// What vkmps_create_swapchain is asked for and what it chose.
typedef struct vkmps_swapchain_desc {
	uint32_t width, height; // in: the window's size; out: the extent
	int readback;           // in: images are also transfer sources
	int vsync;              // in: FIFO; else MAILBOX or IMMEDIATE where offered
	VkFormat format;        // out
	uint32_t nimages;       // out
	const char* why;        // out: what is missing, on VK_ERROR_FEATURE_NOT_PRESENT
} vkmps_swapchain_desc;

#define VKMPS_MAX_SWAPCHAIN_IMAGES 16

// vkmps_create_swapchain checks that queue family `family` can present to
// surface, chooses format, extent, image count and present mode, creates
// the swapchain (replacing old, which the caller destroys) and writes its
// images. It returns VK_NOT_READY, creating nothing, when the surface's
// extent is 0 (a minimised window), and VK_ERROR_FEATURE_NOT_PRESENT with
// d->why set when the surface cannot be used.
VkResult vkmps_create_swapchain(const vkmps_present_fns* f, uint64_t surface, uint32_t family, VkSwapchainKHR old,
                                vkmps_swapchain_desc* d, VkSwapchainKHR* out, VkImage* images);

VkResult vkmps_create_semaphore(const vkmps_present_fns* f, VkSemaphore* out);
void vkmps_destroy_semaphore(const vkmps_present_fns* f, VkSemaphore s);
void vkmps_destroy_swapchain(const vkmps_present_fns* f, VkSwapchainKHR sc);
VkResult vkmps_present_wait_idle(const vkmps_present_fns* f, VkQueue q);

VkResult vkmps_acquire(const vkmps_present_fns* f, VkSwapchainKHR sc, uint64_t timeout_ns, VkSemaphore sem,
                       uint32_t* index);

// vkmps_record_present_copy records, for swapchain image img of iw x ih
// pixels: the image's transition to a transfer destination (after the
// acquire semaphore's wait), a clear to black when the picture (pw x ph
// 4-byte pixels at src_off in src) does not cover it, the copy of the
// picture's top-left part that fits, and with rb a copy of the whole image
// into rb at rb_off; then the transition to the present layout.
void vkmps_record_present_copy(const vkmps_present_fns* f, VkCommandBuffer cmd, VkImage img, uint32_t iw, uint32_t ih,
                               VkBuffer src, uint64_t src_off, uint32_t pw, uint32_t ph, VkBuffer rb, uint64_t rb_off);

// vkmps_submit_present submits cmd waiting on wait (at the transfer stage)
// and signalling signal and fence.
VkResult vkmps_submit_present(const vkmps_present_fns* f, VkQueue q, VkCommandBuffer cmd, VkSemaphore wait,
                              VkSemaphore signal, VkFence fence);

VkResult vkmps_queue_present(const vkmps_present_fns* f, VkQueue q, VkSwapchainKHR sc, uint32_t index, VkSemaphore wait);

#endif
