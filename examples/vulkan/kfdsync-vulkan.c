// SPDX-License-Identifier: MIT
/*
 * kfdsync-vulkan - Vulkan waits for a KFD compute queue, and the queue waits
 * for Vulkan: SYNC_FD semaphores both ways, no CPU wait in between.
 *
 * How this program works
 * ======================
 *
 * Each frame goes around once:
 *
 *   compute queue (kfdsim)            kfdsync.ko              Vulkan (lavapipe)
 *   ----------------------            ----------              -----------------
 *   A: compute time, then fill the
 *      input buffer with frame N's
 *      colour; RELEASE_MEM on a
 *      KFD event  ------------------> exported as a sync_file -> imported into a
 *                                     (the compute fence)        VkSemaphore (SYNC_FD);
 *                                                                 the submission waits
 *                                                                 for it, then copies the
 *                                                                 input into an image,
 *                                                                 draws a white square
 *                                                                 (render pass clear),
 *                                                                 copies the image out
 *   B: WAIT_REG_MEM gate >= N+1  <--- sync_file imported: when <- its signal semaphore,
 *      then copy Vulkan's output      it signals, write N+1      exported as SYNC_FD,
 *      into a result buffer           into the gate              merged with the compute
 *                                                                 fence (see below)
 *
 * 1. Compute -> Vulkan. kfdsync_event_export_sync_file() turns "the next
 *    signal of the event after the age read before submitting A" into a
 *    sync_file; vkImportSemaphoreFdKHR() (temporary, SYNC_FD) makes it the
 *    wait semaphore of the frame's submission. Vulkan's queue does not run
 *    the copy before the fence signals: the image shows frame N's colour,
 *    which A writes only at the end of its compute time.
 * 2. Vulkan -> compute. The submission signals a semaphore exported as a
 *    SYNC_FD (vkGetSemaphoreFdKHR); kfdsync_import_to_memory() writes N+1
 *    into the gate word when it signals, and B's WAIT_REG_MEM waits for
 *    that: the simulated GPU waits for Vulkan without the CPU. B copies
 *    Vulkan's output into a result buffer, which therefore shows frame N.
 * 3. Errors. A Vulkan semaphore carries no error: a compute fence that ends
 *    with -ETIMEDOUT (--error-frame) is "signalled" for Vulkan, and its
 *    completion fence signals normally. So the fence handed back to kfdsync
 *    is Vulkan's completion merged with the compute fence
 *    (kfdsync_sync_file_accumulate()): an upstream error ends it with that
 *    error, kfdsync writes GATE_ERROR, and B sees it. The program reports
 *    the failed frame and exits 1.
 *
 * Everything is checked per frame from the pixels (Vulkan's output, B's
 * copy) and from CLOCK_MONOTONIC timestamps (the fences' own, and
 * RELEASE_MEM timestamps the queue writes): the compute fence signalled
 * before Vulkan's completion, which signalled before B passed its gate.
 *
 * The compute side is the test rig's simulated GPU (sim/, kfdsim.ko,
 * in the project's QEMU guest); A and B are submitted by the stage this
 * program shares with kfdsync-egl (examples/common/sim_stage.c). Vulkan
 * needs VK_KHR_external_semaphore_fd with SYNC_FD import and export:
 * Mesa's lavapipe has it when /dev/udmabuf exists (Linux 6.12 here).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include <kfdsync.h>

#include "common.h"
#include "kfdsim.h"
#include "sim_stage.h"

#define PROG "kfdsync-vulkan"
#define MS 1000000LL

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* a frame failed: ordering, pixels, an error fence */
	EXIT_SETUP = 2,		/* bad options, or Vulkan/kfdsync/kfdsim cannot do this */
};

struct vk {
	VkInstance instance;
	VkPhysicalDevice phys;
	VkDevice dev;
	VkQueue queue;
	uint32_t queue_family;
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	PFN_vkImportSemaphoreFdKHR import_fd;
	PFN_vkGetSemaphoreFdKHR get_fd;
	VkCommandPool pool;
	VkCommandBuffer cmd;
	VkBuffer in, out;
	VkDeviceMemory in_mem, out_mem;
	void *in_map, *out_map;
	VkImage image;
	VkDeviceMemory image_mem;
	VkImageView view;
	VkRenderPass pass;
	VkFramebuffer fb;
	VkSemaphore wait_sem, signal_sem;
	VkFence done;
};

struct app {
	struct frame_options o;
	struct vk vk;
	size_t bytes;			/* one image, width * height * 4 */
	struct sim_stage sim;		/* the compute side (examples/common) */
};

static const uint32_t colours[] = {	/* B8G8R8A8: 0xAARRGGBB in memory order */
	0xffd03030, 0xff30a040, 0xff2050d0, 0xffd0a020, 0xffa030c0, 0xff20b0b0,
};

/* ---- Vulkan ---- */

#define VK_CHECK(call, what)							\
	do {									\
		VkResult r_ = (call);						\
		if (r_ != VK_SUCCESS) {						\
			err("%s failed: VkResult %d", what, r_);		\
			return -EIO;						\
		}								\
	} while (0)

static bool has_extension(VkPhysicalDevice phys, const char *name)
{
	VkExtensionProperties *props;
	uint32_t n = 0;
	bool found = false;

	vkEnumerateDeviceExtensionProperties(phys, NULL, &n, NULL);
	props = calloc(n ? n : 1, sizeof(*props));
	if (!props)
		return false;
	vkEnumerateDeviceExtensionProperties(phys, NULL, &n, props);
	for (uint32_t i = 0; i < n; i++)
		found |= !strcmp(props[i].extensionName, name);
	free(props);
	return found;
}

/* Can @phys import and export binary semaphores as SYNC_FD? */
static bool sync_fd_semaphores(VkPhysicalDevice phys)
{
	VkPhysicalDeviceExternalSemaphoreInfo info = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
		.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT,
	};
	VkExternalSemaphoreProperties props = {
		.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES,
	};
	const VkExternalSemaphoreFeatureFlags want =
		VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT |
		VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT;

	vkGetPhysicalDeviceExternalSemaphoreProperties(phys, &info, &props);
	return (props.externalSemaphoreFeatures & want) == want;
}

static int vk_pick_device(struct vk *vk)
{
	VkPhysicalDevice *devs;
	uint32_t n = 0;
	int best = -1;
	char why[512] = "";

	vkEnumeratePhysicalDevices(vk->instance, &n, NULL);
	if (!n) {
		err("no Vulkan device (is mesa-vulkan-drivers installed? lavapipe is Mesa's "
		    "CPU device)");
		return -ENODEV;
	}
	devs = calloc(n, sizeof(*devs));
	if (!devs)
		return -ENOMEM;
	vkEnumeratePhysicalDevices(vk->instance, &n, devs);
	for (uint32_t i = 0; i < n && best < 0; i++) {
		VkPhysicalDeviceProperties p;
		size_t len = strlen(why);

		vkGetPhysicalDeviceProperties(devs[i], &p);
		if (p.apiVersion < VK_API_VERSION_1_1)
			snprintf(why + len, sizeof(why) - len, "; %s: Vulkan 1.0 only",
				 p.deviceName);
		else if (!has_extension(devs[i], VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME))
			snprintf(why + len, sizeof(why) - len, "; %s: no %s", p.deviceName,
				 VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME);
		else if (!sync_fd_semaphores(devs[i]))
			snprintf(why + len, sizeof(why) - len,
				 "; %s: no SYNC_FD semaphore import and export", p.deviceName);
		else {
			best = (int)i;
			vk->phys = devs[i];
			snprintf(vk->name, sizeof(vk->name), "%s", p.deviceName);
		}
	}
	free(devs);
	if (best < 0) {
		err("no Vulkan device can import and export SYNC_FD semaphores%s (lavapipe can "
		    "when /dev/udmabuf exists: Linux 6.12 and Mesa 25 here)", why);
		return -EOPNOTSUPP;
	}
	return 0;
}

static int find_memory(struct vk *vk, uint32_t type_bits, VkMemoryPropertyFlags want)
{
	VkPhysicalDeviceMemoryProperties mp;

	vkGetPhysicalDeviceMemoryProperties(vk->phys, &mp);
	for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
		if ((type_bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
			return (int)i;
	return -1;
}

static int vk_buffer(struct vk *vk, VkDeviceSize size, VkBufferUsageFlags usage,
		     VkBuffer *buf, VkDeviceMemory *mem, void **map)
{
	VkBufferCreateInfo bi = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size, .usage = usage, .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkMemoryRequirements req;
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO };
	int type;

	VK_CHECK(vkCreateBuffer(vk->dev, &bi, NULL, buf), "vkCreateBuffer");
	vkGetBufferMemoryRequirements(vk->dev, *buf, &req);
	type = find_memory(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
			   VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	if (type < 0) {
		err("no host-visible, coherent memory for a buffer");
		return -ENOMEM;
	}
	ai.allocationSize = req.size;
	ai.memoryTypeIndex = (uint32_t)type;
	VK_CHECK(vkAllocateMemory(vk->dev, &ai, NULL, mem), "vkAllocateMemory");
	VK_CHECK(vkBindBufferMemory(vk->dev, *buf, *mem, 0), "vkBindBufferMemory");
	VK_CHECK(vkMapMemory(vk->dev, *mem, 0, VK_WHOLE_SIZE, 0, map), "vkMapMemory");
	return 0;
}

static int vk_image(struct app *app)
{
	struct vk *vk = &app->vk;
	VkImageCreateInfo ii = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO,
		.imageType = VK_IMAGE_TYPE_2D, .format = VK_FORMAT_B8G8R8A8_UNORM,
		.extent = { (uint32_t)app->o.width, (uint32_t)app->o.height, 1 },
		.mipLevels = 1, .arrayLayers = 1, .samples = VK_SAMPLE_COUNT_1_BIT,
		.tiling = VK_IMAGE_TILING_OPTIMAL,
		.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
			 VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
		.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
	};
	VkMemoryRequirements req;
	VkMemoryAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO };
	VkImageViewCreateInfo vi = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO,
		.viewType = VK_IMAGE_VIEW_TYPE_2D, .format = VK_FORMAT_B8G8R8A8_UNORM,
		.subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
	};
	VkAttachmentDescription att = {
		.format = VK_FORMAT_B8G8R8A8_UNORM, .samples = VK_SAMPLE_COUNT_1_BIT,
		.loadOp = VK_ATTACHMENT_LOAD_OP_LOAD, .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
		.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
		.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
		.initialLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
		.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
	};
	VkAttachmentReference ref = { 0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL };
	VkSubpassDescription sub = {
		.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
		.colorAttachmentCount = 1, .pColorAttachments = &ref,
	};
	VkRenderPassCreateInfo rpi = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
		.attachmentCount = 1, .pAttachments = &att, .subpassCount = 1, .pSubpasses = &sub,
	};
	VkFramebufferCreateInfo fbi = {
		.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO, .attachmentCount = 1,
		.width = (uint32_t)app->o.width, .height = (uint32_t)app->o.height, .layers = 1,
	};
	int type;

	VK_CHECK(vkCreateImage(vk->dev, &ii, NULL, &vk->image), "vkCreateImage");
	vkGetImageMemoryRequirements(vk->dev, vk->image, &req);
	type = find_memory(vk, req.memoryTypeBits, 0);
	if (type < 0)
		return -ENOMEM;
	ai.allocationSize = req.size;
	ai.memoryTypeIndex = (uint32_t)type;
	VK_CHECK(vkAllocateMemory(vk->dev, &ai, NULL, &vk->image_mem), "vkAllocateMemory");
	VK_CHECK(vkBindImageMemory(vk->dev, vk->image, vk->image_mem, 0), "vkBindImageMemory");
	vi.image = vk->image;
	VK_CHECK(vkCreateImageView(vk->dev, &vi, NULL, &vk->view), "vkCreateImageView");
	VK_CHECK(vkCreateRenderPass(vk->dev, &rpi, NULL, &vk->pass), "vkCreateRenderPass");
	fbi.renderPass = vk->pass;
	fbi.pAttachments = &vk->view;
	VK_CHECK(vkCreateFramebuffer(vk->dev, &fbi, NULL, &vk->fb), "vkCreateFramebuffer");
	return 0;
}

static int vk_open(struct app *app)
{
	struct vk *vk = &app->vk;
	VkApplicationInfo appi = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = PROG,
		.apiVersion = VK_API_VERSION_1_1,
	};
	VkInstanceCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &appi,
	};
	const float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
		.pQueuePriorities = &prio,
	};
	const char *exts[] = { VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME };
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci, .enabledExtensionCount = 1, .ppEnabledExtensionNames = exts,
	};
	VkExportSemaphoreCreateInfo esi = {
		.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO,
		.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT,
	};
	VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO };
	VkFenceCreateInfo fci = { .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO };
	VkCommandPoolCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
	};
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1,
	};
	VkQueueFamilyProperties *qf;
	uint32_t nqf = 0;
	VkResult r;
	int ret;

	r = vkCreateInstance(&ici, NULL, &vk->instance);
	if (r != VK_SUCCESS) {
		err("vkCreateInstance failed (VkResult %d): no Vulkan loader or driver", r);
		vk->instance = VK_NULL_HANDLE;
		return -ENODEV;
	}
	ret = vk_pick_device(vk);
	if (ret)
		return ret;
	vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nqf, NULL);
	qf = calloc(nqf ? nqf : 1, sizeof(*qf));
	if (!qf)
		return -ENOMEM;
	vkGetPhysicalDeviceQueueFamilyProperties(vk->phys, &nqf, qf);
	vk->queue_family = UINT32_MAX;
	for (uint32_t i = 0; i < nqf && vk->queue_family == UINT32_MAX; i++)
		if (qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)
			vk->queue_family = i;
	free(qf);
	if (vk->queue_family == UINT32_MAX) {
		err("%s has no graphics queue", vk->name);
		return -ENODEV;
	}
	qci.queueFamilyIndex = vk->queue_family;
	VK_CHECK(vkCreateDevice(vk->phys, &dci, NULL, &vk->dev), "vkCreateDevice");
	vkGetDeviceQueue(vk->dev, vk->queue_family, 0, &vk->queue);
	vk->import_fd = (PFN_vkImportSemaphoreFdKHR)vkGetDeviceProcAddr(vk->dev,
									"vkImportSemaphoreFdKHR");
	vk->get_fd = (PFN_vkGetSemaphoreFdKHR)vkGetDeviceProcAddr(vk->dev, "vkGetSemaphoreFdKHR");
	if (!vk->import_fd || !vk->get_fd) {
		err("%s: no vkImportSemaphoreFdKHR / vkGetSemaphoreFdKHR", vk->name);
		return -EOPNOTSUPP;
	}
	ret = vk_buffer(vk, app->bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &vk->in, &vk->in_mem,
			&vk->in_map);
	if (!ret)
		ret = vk_buffer(vk, app->bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &vk->out,
				&vk->out_mem, &vk->out_map);
	if (!ret)
		ret = vk_image(app);
	if (ret)
		return ret;
	/* The wait semaphore takes each frame's compute fence (a temporary import). */
	VK_CHECK(vkCreateSemaphore(vk->dev, &sci, NULL, &vk->wait_sem), "vkCreateSemaphore");
	sci.pNext = &esi;
	VK_CHECK(vkCreateSemaphore(vk->dev, &sci, NULL, &vk->signal_sem), "vkCreateSemaphore");
	VK_CHECK(vkCreateFence(vk->dev, &fci, NULL, &vk->done), "vkCreateFence");
	pci.queueFamilyIndex = vk->queue_family;
	VK_CHECK(vkCreateCommandPool(vk->dev, &pci, NULL, &vk->pool), "vkCreateCommandPool");
	cai.commandPool = vk->pool;
	VK_CHECK(vkAllocateCommandBuffers(vk->dev, &cai, &vk->cmd), "vkAllocateCommandBuffers");
	return 0;
}

static void vk_close(struct vk *vk)
{
	if (vk->dev) {
		vkDeviceWaitIdle(vk->dev);
		vkDestroyFence(vk->dev, vk->done, NULL);
		vkDestroySemaphore(vk->dev, vk->wait_sem, NULL);
		vkDestroySemaphore(vk->dev, vk->signal_sem, NULL);
		vkDestroyCommandPool(vk->dev, vk->pool, NULL);
		vkDestroyFramebuffer(vk->dev, vk->fb, NULL);
		vkDestroyRenderPass(vk->dev, vk->pass, NULL);
		vkDestroyImageView(vk->dev, vk->view, NULL);
		vkDestroyImage(vk->dev, vk->image, NULL);
		vkFreeMemory(vk->dev, vk->image_mem, NULL);
		vkDestroyBuffer(vk->dev, vk->in, NULL);
		vkDestroyBuffer(vk->dev, vk->out, NULL);
		vkFreeMemory(vk->dev, vk->in_mem, NULL);
		vkFreeMemory(vk->dev, vk->out_mem, NULL);
		vkDestroyDevice(vk->dev, NULL);
	}
	if (vk->instance)
		vkDestroyInstance(vk->instance, NULL);
	memset(vk, 0, sizeof(*vk));
}

static void barrier(VkCommandBuffer cmd, VkImage image, VkImageLayout from, VkImageLayout to,
		    VkAccessFlags src_access, VkAccessFlags dst_access,
		    VkPipelineStageFlags src, VkPipelineStageFlags dst)
{
	VkImageMemoryBarrier b = {
		.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
		.srcAccessMask = src_access, .dstAccessMask = dst_access,
		.oldLayout = from, .newLayout = to,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.image = image, .subresourceRange = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1 },
	};

	vkCmdPipelineBarrier(cmd, src, dst, 0, 0, NULL, 0, NULL, 1, &b);
}

/*
 * The frame's Vulkan work: copy the compute's input into the image, draw a
 * white square in the middle (a render pass with vkCmdClearAttachments),
 * copy the image into the output buffer.
 */
static int vk_record(struct app *app)
{
	struct vk *vk = &app->vk;
	const uint32_t w = (uint32_t)app->o.width, h = (uint32_t)app->o.height;
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VkBufferImageCopy copy = {
		.imageSubresource = { VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1 },
		.imageExtent = { w, h, 1 },
	};
	VkRenderPassBeginInfo rp = {
		.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO, .renderPass = vk->pass,
		.framebuffer = vk->fb, .renderArea = { { 0, 0 }, { w, h } },
	};
	VkClearAttachment clear = {
		.aspectMask = VK_IMAGE_ASPECT_COLOR_BIT, .colorAttachment = 0,
		.clearValue.color.float32 = { 1.0f, 1.0f, 1.0f, 1.0f },
	};
	VkClearRect rect = {
		.rect = { { (int32_t)(w * 3 / 8), (int32_t)(h * 3 / 8) }, { w / 4, h / 4 } },
		.baseArrayLayer = 0, .layerCount = 1,
	};
	VkBufferMemoryBarrier host = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT, .dstAccessMask = VK_ACCESS_HOST_READ_BIT,
		.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
		.buffer = vk->out, .size = VK_WHOLE_SIZE,
	};

	VK_CHECK(vkResetCommandBuffer(vk->cmd, 0), "vkResetCommandBuffer");
	VK_CHECK(vkBeginCommandBuffer(vk->cmd, &bi), "vkBeginCommandBuffer");
	barrier(vk->cmd, vk->image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		0, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
		VK_PIPELINE_STAGE_TRANSFER_BIT);
	vkCmdCopyBufferToImage(vk->cmd, vk->in, vk->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
			       1, &copy);
	barrier(vk->cmd, vk->image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
		VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_ACCESS_TRANSFER_WRITE_BIT,
		VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
		VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT);
	vkCmdBeginRenderPass(vk->cmd, &rp, VK_SUBPASS_CONTENTS_INLINE);
	vkCmdClearAttachments(vk->cmd, 1, &clear, 1, &rect);
	vkCmdEndRenderPass(vk->cmd);
	/* The render pass left the image in TRANSFER_SRC_OPTIMAL. */
	barrier(vk->cmd, vk->image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
		VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
		VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
		VK_PIPELINE_STAGE_TRANSFER_BIT);
	vkCmdCopyImageToBuffer(vk->cmd, vk->image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, vk->out,
			       1, &copy);
	vkCmdPipelineBarrier(vk->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
			     0, 0, NULL, 1, &host, 0, NULL);
	VK_CHECK(vkEndCommandBuffer(vk->cmd), "vkEndCommandBuffer");
	return 0;
}

/*
 * Submit the frame's work, waiting for @compute_fence (borrowed: Vulkan
 * gets a dup) before the copy. Returns Vulkan's completion as a new
 * sync_file (the caller's), or -errno.
 */
static int vk_submit(struct app *app, int compute_fence, int64_t *exported_ns)
{
	struct vk *vk = &app->vk;
	VkImportSemaphoreFdInfoKHR imp = {
		.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR,
		.semaphore = vk->wait_sem, .flags = VK_SEMAPHORE_IMPORT_TEMPORARY_BIT,
		.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT,
	};
	VkSemaphoreGetFdInfoKHR get = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR,
		.semaphore = vk->signal_sem,
		.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_SYNC_FD_BIT,
	};
	const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.waitSemaphoreCount = 1, .pWaitSemaphores = &vk->wait_sem, .pWaitDstStageMask = &stage,
		.commandBufferCount = 1, .pCommandBuffers = &vk->cmd,
		.signalSemaphoreCount = 1, .pSignalSemaphores = &vk->signal_sem,
	};
	int fd, done_fd = -1, ret;
	VkResult r;

	ret = vk_record(app);
	if (ret)
		return ret;
	fd = fcntl(compute_fence, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	imp.fd = fd;
	r = vk->import_fd(vk->dev, &imp);
	if (r != VK_SUCCESS) {
		close(fd);	/* Vulkan owns the fd only on success */
		err("vkImportSemaphoreFdKHR (SYNC_FD) failed: VkResult %d", r);
		return -EIO;
	}
	/* Vulkan now owns fd. */
	VK_CHECK(vkResetFences(vk->dev, 1, &vk->done), "vkResetFences");
	VK_CHECK(vkQueueSubmit(vk->queue, 1, &si, vk->done), "vkQueueSubmit");
	/* A SYNC_FD export of a pending signal operation: the caller owns it. */
	r = vk->get_fd(vk->dev, &get, &done_fd);
	*exported_ns = now_ns();
	if (r != VK_SUCCESS) {
		err("vkGetSemaphoreFdKHR (SYNC_FD) failed: VkResult %d", r);
		return -EIO;
	}
	return done_fd;
}

/* ---- a frame: A on the simulated queue, Vulkan, then B (examples/common/sim_stage.c) ---- */

static double rel_ms(int64_t from, int64_t to)
{
	return (double)(to - from) / 1e6;
}

static int run_frame(struct app *app, int n)
{
	int compute_fence, vk_done, merged = -1, ret, cstate, vstate, mstate;
	int64_t submit_ns = 0, compute_ts = 0, vk_ts = 0, exported_ns = 0;
	bool vk_stub;
	uint64_t end, gate_seen;
	char why[128];
	bool vk_ok, copy_ok;

	compute_fence = sim_stage_submit_a(&app->sim, n, app->vk.in_map, colours[n % 6],
					   &submit_ns);
	if (compute_fence < 0)
		return EXIT_FAIL;
	vk_done = vk_submit(app, compute_fence, &exported_ns);
	if (vk_done < 0) {
		close(compute_fence);
		return vk_done == -EOPNOTSUPP ? EXIT_SETUP : EXIT_FAIL;
	}
	/*
	 * Vulkan's completion, merged with the compute fence: a Vulkan
	 * semaphore carries no error, so an upstream failure would otherwise
	 * look like success downstream.
	 */
	ret = kfdsync_sync_file_accumulate("kfdsync-vulkan", &merged, vk_done);
	if (!ret)
		ret = kfdsync_sync_file_accumulate("kfdsync-vulkan", &merged, compute_fence);
	/*
	 * 1: the compute fence had failed already, and a merge keeps no
	 * signalled fence, errors included: the gate opens with GATE_ERROR
	 * whatever the merged fence says.
	 */
	if (ret >= 0)
		ret = kfdsync_import_to_memory(app->sim.ctx, merged, &app->sim.shared->gate,
					       ret == 1 ? GATE_ERROR : (uint64_t)n + 1,
					       GATE_ERROR);
	if (!ret)
		ret = sim_stage_submit_b(&app->sim, n, app->vk.out_map, &end);
	if (ret) {
		err("frame %d: cannot hand Vulkan's completion to the compute queue: %s", n,
		    strerror(-ret));
		goto out_fail;
	}
	/* Bounded waits: the queue, then Vulkan's own fence. */
	ret = sim_stage_wait(&app->sim, end);
	if (ret) {
		err("frame %d: the compute queue did not finish within %d ms: %s", n,
		    app->o.timeout_ms, strerror(-ret));
		goto out_fail;
	}
	if (vkWaitForFences(app->vk.dev, 1, &app->vk.done, VK_TRUE,
			    (uint64_t)app->o.timeout_ms * MS) != VK_SUCCESS) {
		err("frame %d: Vulkan did not finish within %d ms", n, app->o.timeout_ms);
		goto out_fail;
	}
	cstate = fence_state(compute_fence, &compute_ts);
	vstate = fence_state(vk_done, &vk_ts);
	mstate = fence_state(merged, NULL);
	gate_seen = app->sim.shared->gate_seen & 0xffffffffu;
	if (cstate < 0) {
		printf("frame %d: failed: the compute fence ended with an error: %s; Vulkan's "
		       "completion %s, and the compute queue's gate read %s\n", n,
		       strerror(-cstate), vstate == 1 ? "signalled without one" : "did not",
		       gate_seen == GATE_ERROR ? "GATE_ERROR: the error reached it" :
		       "no error");
		err("frame %d: the compute fence ended with an error (%s): the frame failed",
		    n, strerror(-cstate));
		ret = EXIT_FAIL;
		goto out;
	}
	vk_ok = image_is_frame(&app->o, app->vk.out_map, n, colours[n % 6], why, sizeof(why));
	if (!vk_ok)
		err("frame %d: Vulkan's image is not frame %d: %s (it did not wait for the "
		    "compute fence)", n, n, why);
	copy_ok = image_is_frame(&app->o, app->sim.result, n, colours[n % 6], why, sizeof(why));
	if (!copy_ok)
		err("frame %d: the compute queue's copy is not frame %d: %s (it did not wait "
		    "for Vulkan)", n, n, why);
	/*
	 * A driver that can only wait on the CPU (lavapipe) exports a sync_file
	 * that is signalled already, after the work is done: its timestamp is
	 * not Vulkan's completion. Then the time the export returned is the
	 * latest Vulkan can have finished.
	 */
	vk_stub = vk_ts < submit_ns;
	if (vk_stub)
		vk_ts = exported_ns;
	printf("frame %d: compute fence signalled %+.3f ms, Vulkan done (SYNC_FD) %s%+.3f ms, "
	       "queue passed the Vulkan gate %+.3f ms after submission (gate %" PRIu64 "); "
	       "Vulkan's image %s, the queue's copy %s\n", n,
	       rel_ms(submit_ns, compute_ts),
	       vk_stub ? "exported signalled at " : "", rel_ms(submit_ns, vk_ts),
	       rel_ms(submit_ns, (int64_t)app->sim.shared->b_pass_ns), gate_seen,
	       vk_ok ? "is frame N" : "WRONG", copy_ok ? "is frame N" : "WRONG");
	ret = EXIT_OK;
	if (!vk_ok || !copy_ok || cstate != 1 || vstate != 1 || mstate != 1 ||
	    gate_seen != (uint64_t)n + 1)
		ret = EXIT_FAIL;
	/* The order, from the fences' and the queue's CLOCK_MONOTONIC stamps. */
	if ((int64_t)app->sim.shared->a_done_ns > compute_ts || compute_ts > vk_ts ||
	    vk_ts > (int64_t)app->sim.shared->b_pass_ns) {
		err("frame %d: out of order: compute done %+.3f, its fence %+.3f, Vulkan done "
		    "%+.3f, gate passed %+.3f ms", n,
		    rel_ms(submit_ns, (int64_t)app->sim.shared->a_done_ns),
		    rel_ms(submit_ns, compute_ts), rel_ms(submit_ns, vk_ts),
		    rel_ms(submit_ns, (int64_t)app->sim.shared->b_pass_ns));
		ret = EXIT_FAIL;
	}
	goto out;
out_fail:
	ret = EXIT_FAIL;
out:
	fflush(stdout);
	close(compute_fence);
	close(vk_done);
	if (merged >= 0)
		close(merged);
	return ret;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [OPTION]...\n"
"\n"
"A KFD compute queue (the test rig's simulated GPU) and Vulkan wait for each\n"
"other through sync_files: each frame's compute fence, exported by kfdsync,\n"
"is imported as a Vulkan SYNC_FD semaphore the frame's submission waits for;\n"
"Vulkan's completion, exported as a SYNC_FD, is imported into kfdsync, which\n"
"writes the gate the next compute job waits for (WAIT_REG_MEM).\n"
"\n"
"%s"
"\n"
"Per frame it prints when the compute fence and Vulkan's completion signalled\n"
"and when the queue passed its gate, and whether Vulkan's image and the\n"
"queue's copy of it show the frame.\n"
"\n"
"Needs kfdsync.ko and kfdsim.ko (the project's test guest), amdgpu's /dev/kfd,\n"
"and a Vulkan device with VK_KHR_external_semaphore_fd SYNC_FD import and\n"
"export (Mesa's lavapipe, with /dev/udmabuf).\n"
"\n"
"Exit status: 0 every frame in order and right; 1 a frame failed (wrong\n"
"pixels or order, a fence that ended with an error, a timeout); 2 bad options,\n"
"or no such Vulkan device, kfdsync or simulator.\n", frame_options_usage);
}

int main(int argc, char **argv)
{
	struct app app = {
		.o = FRAME_OPTIONS_DEFAULT,
	};
	int ret = EXIT_OK;

	if (frame_options_parse(&app.o, argc, argv, PROG, usage))
		return EXIT_SETUP;
	app.bytes = (size_t)app.o.width * (size_t)app.o.height * 4;
	if (vk_open(&app)) {
		vk_close(&app.vk);
		return EXIT_SETUP;
	}
	printf("vulkan: %s, SYNC_FD semaphores imported and exported\n", app.vk.name);
	if (sim_stage_open(&app.sim, &app.o, app.bytes)) {
		ret = EXIT_SETUP;
		goto out;
	}
	printf("compute: simulated GPU (kfdsim), KFD event %u exported by kfdsync\n",
	       app.sim.ev.event.id);
	fflush(stdout);
	for (int n = 0; n < app.o.frames && ret == EXIT_OK; n++)
		ret = run_frame(&app, n);
	printf("summary: frames=%d result=%s\n", app.o.frames, ret == EXIT_OK ? "ok" : "failed");
out:
	/* Stop the queue and end its fences before Vulkan goes away. */
	sim_stage_close(&app.sim);
	vk_close(&app.vk);
	return ret;
}
