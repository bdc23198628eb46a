#include "present.h"
#include "loader.h"
#include <stdlib.h>
#include <string.h>

// Non-dispatchable handles are pointers on 64-bit platforms and uint64_t
// elsewhere; Go holds surfaces as uint64.
#if defined(__LP64__) || defined(_WIN64) || defined(__x86_64__) || defined(__aarch64__)
#define SURFACE(s) ((VkSurfaceKHR)(uintptr_t)(s))
#define SURFACE_BITS(s) ((uint64_t)(uintptr_t)(s))
#else
#define SURFACE(s) ((VkSurfaceKHR)(s))
#define SURFACE_BITS(s) ((uint64_t)(s))
#endif

int vkmps_present_init(vkmps_present_fns* f, VkInstance inst, VkPhysicalDevice pd, VkDevice dev) {
	memset(f, 0, sizeof(*f));
	f->instance = inst;
	f->pd = pd;
	f->device = dev;
	PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)vkmps_gipa;
	if (gipa == NULL) return 0;
	PFN_vkGetDeviceProcAddr gdpa = (PFN_vkGetDeviceProcAddr)gipa(inst, "vkGetDeviceProcAddr");
	if (gdpa == NULL) return 0;
#define INST(name) f->name = (PFN_vk##name)gipa(inst, "vk" #name); if (f->name == NULL) return 0;
#define DEV(name) f->name = (PFN_vk##name)gdpa(dev, "vk" #name); if (f->name == NULL) return 0;
	INST(DestroySurfaceKHR)
	INST(GetPhysicalDeviceSurfaceSupportKHR)
	INST(GetPhysicalDeviceSurfaceCapabilitiesKHR)
	INST(GetPhysicalDeviceSurfaceFormatsKHR)
	INST(GetPhysicalDeviceSurfacePresentModesKHR)
	DEV(CreateSwapchainKHR)
	DEV(DestroySwapchainKHR)
	DEV(GetSwapchainImagesKHR)
	DEV(AcquireNextImageKHR)
	DEV(QueuePresentKHR)
	DEV(CreateSemaphore)
	DEV(DestroySemaphore)
	DEV(CmdPipelineBarrier)
	DEV(CmdCopyBufferToImage)
	DEV(CmdCopyImageToBuffer)
	DEV(CmdClearColorImage)
	DEV(QueueSubmit)
	DEV(QueueWaitIdle)
#undef INST
#undef DEV
	return 1;
}

uint64_t vkmps_surface_at(uintptr_t p) {
	if (p == 0) return 0;
	return SURFACE_BITS(*(VkSurfaceKHR*)p);
}

void vkmps_destroy_surface(const vkmps_present_fns* f, uint64_t surface) {
	if (surface != 0) f->DestroySurfaceKHR(f->instance, SURFACE(surface), NULL);
}

// pick_format prefers 8-bit BGRA, then RGBA (UNORM, then SRGB: a copy
// stores bytes unchanged either way); 0 when none is offered.
static VkFormat pick_format(const VkSurfaceFormatKHR* fs, uint32_t n, VkColorSpaceKHR* cs) {
	static const VkFormat want[] = {VK_FORMAT_B8G8R8A8_UNORM, VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_B8G8R8A8_SRGB,
	                                VK_FORMAT_R8G8B8A8_SRGB};
	if (n == 1 && fs[0].format == VK_FORMAT_UNDEFINED) {
		*cs = fs[0].colorSpace;
		return VK_FORMAT_B8G8R8A8_UNORM;
	}
	for (uint32_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		for (uint32_t i = 0; i < n; i++) {
			if (fs[i].format == want[w]) {
				*cs = fs[i].colorSpace;
				return want[w];
			}
		}
	}
	return VK_FORMAT_UNDEFINED;
}

VkResult vkmps_create_swapchain(const vkmps_present_fns* f, uint64_t surface, uint32_t family, VkSwapchainKHR old,
                                vkmps_swapchain_desc* d, VkSwapchainKHR* out, VkImage* images) {
	VkSurfaceKHR s = SURFACE(surface);
	d->why = NULL;
	VkBool32 ok = VK_FALSE;
	VkResult r = f->GetPhysicalDeviceSurfaceSupportKHR(f->pd, family, s, &ok);
	if (r != VK_SUCCESS) return r;
	if (!ok) {
		d->why = "the device's compute queue cannot present to this window";
		return VK_ERROR_FEATURE_NOT_PRESENT;
	}
	VkSurfaceCapabilitiesKHR caps;
	r = f->GetPhysicalDeviceSurfaceCapabilitiesKHR(f->pd, s, &caps);
	if (r != VK_SUCCESS) return r;
	VkImageUsageFlags usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT;
	if (d->readback) usage |= VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
	if ((caps.supportedUsageFlags & usage) != usage) {
		d->why = d->readback ? "the surface's images cannot be copied to and from" : "the surface's images cannot be copied to";
		return VK_ERROR_FEATURE_NOT_PRESENT;
	}

	uint32_t n = 0;
	r = f->GetPhysicalDeviceSurfaceFormatsKHR(f->pd, s, &n, NULL);
	if (r != VK_SUCCESS) return r;
	VkSurfaceFormatKHR* fs = (VkSurfaceFormatKHR*)calloc(n ? n : 1, sizeof(VkSurfaceFormatKHR));
	if (fs == NULL) return VK_ERROR_OUT_OF_HOST_MEMORY;
	r = f->GetPhysicalDeviceSurfaceFormatsKHR(f->pd, s, &n, fs);
	VkColorSpaceKHR cs = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR;
	VkFormat format = r >= 0 ? pick_format(fs, n, &cs) : VK_FORMAT_UNDEFINED;
	free(fs);
	if (r < 0) return r;
	if (format == VK_FORMAT_UNDEFINED) {
		d->why = "the surface offers no 8-bit RGBA or BGRA format";
		return VK_ERROR_FEATURE_NOT_PRESENT;
	}

	VkPresentModeKHR mode = VK_PRESENT_MODE_FIFO_KHR; // always supported
	if (!d->vsync) {
		VkPresentModeKHR modes[16];
		uint32_t nm = 16;
		r = f->GetPhysicalDeviceSurfacePresentModesKHR(f->pd, s, &nm, modes);
		if (r < 0) return r;
		for (uint32_t i = 0; i < nm; i++) {
			if (modes[i] == VK_PRESENT_MODE_MAILBOX_KHR) mode = modes[i];
		}
		for (uint32_t i = 0; i < nm && mode == VK_PRESENT_MODE_FIFO_KHR; i++) {
			if (modes[i] == VK_PRESENT_MODE_IMMEDIATE_KHR) mode = modes[i];
		}
	}

	// The spec: currentExtent is 0xFFFFFFFF when "the surface size will be
	// determined by the extent of a swapchain targeting the surface".
	VkExtent2D ext = caps.currentExtent;
	if (ext.width == 0xFFFFFFFFu) {
		ext.width = d->width;
		ext.height = d->height;
		if (ext.width < caps.minImageExtent.width) ext.width = caps.minImageExtent.width;
		if (ext.height < caps.minImageExtent.height) ext.height = caps.minImageExtent.height;
		if (ext.width > caps.maxImageExtent.width) ext.width = caps.maxImageExtent.width;
		if (ext.height > caps.maxImageExtent.height) ext.height = caps.maxImageExtent.height;
	}
	if (ext.width == 0 || ext.height == 0) return VK_NOT_READY;
	d->width = ext.width;
	d->height = ext.height;

	uint32_t count = caps.minImageCount + 1;
	if (caps.maxImageCount > 0 && count > caps.maxImageCount) count = caps.maxImageCount;
	if (count > VKMPS_MAX_SWAPCHAIN_IMAGES) count = VKMPS_MAX_SWAPCHAIN_IMAGES;
	VkCompositeAlphaFlagBitsKHR alpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR;
	if (!(caps.supportedCompositeAlpha & alpha)) {
		for (uint32_t bit = 1; bit <= VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR; bit <<= 1) {
			if (caps.supportedCompositeAlpha & bit) {
				alpha = (VkCompositeAlphaFlagBitsKHR)bit;
				break;
			}
		}
	}
	VkSwapchainCreateInfoKHR ci;
	memset(&ci, 0, sizeof(ci));
	ci.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR;
	ci.surface = s;
	ci.minImageCount = count;
	ci.imageFormat = format;
	ci.imageColorSpace = cs;
	ci.imageExtent = ext;
	ci.imageArrayLayers = 1;
	ci.imageUsage = usage;
	ci.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
	ci.preTransform = caps.currentTransform;
	ci.compositeAlpha = alpha;
	ci.presentMode = mode;
	ci.clipped = VK_TRUE;
	ci.oldSwapchain = old;
	r = f->CreateSwapchainKHR(f->device, &ci, NULL, out);
	if (r != VK_SUCCESS) return r;
	uint32_t ni = VKMPS_MAX_SWAPCHAIN_IMAGES;
	r = f->GetSwapchainImagesKHR(f->device, *out, &ni, images);
	if (r < 0) {
		f->DestroySwapchainKHR(f->device, *out, NULL);
		*out = VK_NULL_HANDLE;
		return r;
	}
	d->format = format;
	d->nimages = ni;
	return VK_SUCCESS;
}

VkResult vkmps_create_semaphore(const vkmps_present_fns* f, VkSemaphore* out) {
	VkSemaphoreCreateInfo ci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, NULL, 0};
	return f->CreateSemaphore(f->device, &ci, NULL, out);
}

void vkmps_destroy_semaphore(const vkmps_present_fns* f, VkSemaphore s) {
	if (s != VK_NULL_HANDLE) f->DestroySemaphore(f->device, s, NULL);
}

void vkmps_destroy_swapchain(const vkmps_present_fns* f, VkSwapchainKHR sc) {
	if (sc != VK_NULL_HANDLE) f->DestroySwapchainKHR(f->device, sc, NULL);
}

VkResult vkmps_present_wait_idle(const vkmps_present_fns* f, VkQueue q) { return f->QueueWaitIdle(q); }

VkResult vkmps_acquire(const vkmps_present_fns* f, VkSwapchainKHR sc, uint64_t timeout_ns, VkSemaphore sem,
                       uint32_t* index) {
	return f->AcquireNextImageKHR(f->device, sc, timeout_ns, sem, VK_NULL_HANDLE, index);
}

static void image_barrier(const vkmps_present_fns* f, VkCommandBuffer cmd, VkImage img, VkImageLayout from,
                          VkImageLayout to, VkAccessFlags src_access, VkAccessFlags dst_access,
                          VkPipelineStageFlags src_stage, VkPipelineStageFlags dst_stage) {
	VkImageMemoryBarrier b;
	memset(&b, 0, sizeof(b));
	b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
	b.srcAccessMask = src_access;
	b.dstAccessMask = dst_access;
	b.oldLayout = from;
	b.newLayout = to;
	b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
	b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
	b.image = img;
	b.subresourceRange.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
	b.subresourceRange.levelCount = 1;
	b.subresourceRange.layerCount = 1;
	f->CmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, NULL, 0, NULL, 1, &b);
}

void vkmps_record_present_copy(const vkmps_present_fns* f, VkCommandBuffer cmd, VkImage img, uint32_t iw, uint32_t ih,
                               VkBuffer src, uint64_t src_off, uint32_t pw, uint32_t ph, VkBuffer rb, uint64_t rb_off) {
	const VkPipelineStageFlags T = VK_PIPELINE_STAGE_TRANSFER_BIT;
	// The acquire semaphore is waited at the transfer stage: this barrier
	// chains to it. The old contents are discarded (UNDEFINED).
	image_barrier(f, cmd, img, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0,
	              VK_ACCESS_TRANSFER_WRITE_BIT, T, T);
	uint32_t w = pw < iw ? pw : iw, h = ph < ih ? ph : ih;
	if (w < iw || h < ih) {
		VkClearColorValue black;
		memset(&black, 0, sizeof(black));
		black.float32[3] = 1.0f;
		VkImageSubresourceRange range = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
		f->CmdClearColorImage(cmd, img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &black, 1, &range);
		image_barrier(f, cmd, img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		              VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, T, T);
	}
	VkBufferImageCopy c;
	memset(&c, 0, sizeof(c));
	c.bufferOffset = src_off;
	c.bufferRowLength = pw;
	c.bufferImageHeight = ph;
	c.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
	c.imageSubresource.layerCount = 1;
	c.imageExtent.width = w;
	c.imageExtent.height = h;
	c.imageExtent.depth = 1;
	if (w > 0 && h > 0) f->CmdCopyBufferToImage(cmd, src, img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &c);
	VkImageLayout last = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
	VkAccessFlags last_access = VK_ACCESS_TRANSFER_WRITE_BIT;
	if (rb != VK_NULL_HANDLE) {
		image_barrier(f, cmd, img, last, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_TRANSFER_WRITE_BIT,
		              VK_ACCESS_TRANSFER_READ_BIT, T, T);
		VkBufferImageCopy back;
		memset(&back, 0, sizeof(back));
		back.bufferOffset = rb_off;
		back.imageSubresource.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT;
		back.imageSubresource.layerCount = 1;
		back.imageExtent.width = iw;
		back.imageExtent.height = ih;
		back.imageExtent.depth = 1;
		f->CmdCopyImageToBuffer(cmd, img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, rb, 1, &back);
		last = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
		last_access = 0; // a read: the transition needs only the execution dependency
	}
	// Presentation needs no access mask: vkQueuePresentKHR's semaphore wait
	// makes the writes visible (see VkImageMemoryBarrier in the spec's WSI
	// chapter).
	image_barrier(f, cmd, img, last, VK_IMAGE_LAYOUT_PRESENT_SRC_KHR, last_access, 0, T,
	              VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
}

VkResult vkmps_submit_present(const vkmps_present_fns* f, VkQueue q, VkCommandBuffer cmd, VkSemaphore wait,
                              VkSemaphore signal, VkFence fence) {
	VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
	VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 1, &wait, &stage, 1, &cmd, 1, &signal};
	return f->QueueSubmit(q, 1, &si, fence);
}

VkResult vkmps_queue_present(const vkmps_present_fns* f, VkQueue q, VkSwapchainKHR sc, uint32_t index, VkSemaphore wait) {
	VkPresentInfoKHR pi = {VK_STRUCTURE_TYPE_PRESENT_INFO_KHR, NULL, 1, &wait, 1, &sc, &index, NULL};
	return f->QueuePresentKHR(q, &pi);
}
