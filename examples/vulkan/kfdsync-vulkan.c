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
 * in the project's QEMU guest). Vulkan needs VK_KHR_external_semaphore_fd
 * with SYNC_FD import and export: Mesa's lavapipe has it when /dev/udmabuf
 * exists (Linux 6.12 here).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include <hsakmt.h>
#include <kfdsync.h>

#include "kfdsim.h"

#define PROG "kfdsync-vulkan"
#define MS 1000000LL
#define GATE_ERROR UINT32_MAX

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* a frame failed: ordering, pixels, an error fence */
	EXIT_SETUP = 2,		/* bad options, or Vulkan/kfdsync/kfdsim cannot do this */
};

struct options {
	int frames, width, height, compute_ms, hold_frame, hold_ms, error_frame, error_ms;
	int timeout_ms;
};

/* Memory the queue and kfdsync write and the CPU reads. */
struct shared {
	uint64_t gate;		/* kfdsync writes N + 1 when frame N's Vulkan work is done */
	uint64_t gate_seen;	/* the gate as B passed it */
	uint64_t a_done_ns;	/* RELEASE_MEM timestamp: A filled the input */
	uint64_t b_pass_ns;	/* RELEASE_MEM timestamp: B passed its gate */
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
	struct options o;
	struct vk vk;
	size_t bytes;			/* one image, width * height * 4 */
	struct kfdsync_ctx *ctx;
	bool kfd_open;
	HsaEvent *event;
	uint64_t signals;
	int sim_fd;
	uint32_t queue;
	struct shared *shared;
	uint32_t *result;		/* B's copy of Vulkan's output */
};

static const uint32_t colours[] = {	/* B8G8R8A8: 0xAARRGGBB in memory order */
	0xffd03030, 0xff30a040, 0xff2050d0, 0xffd0a020, 0xffa030c0, 0xff20b0b0,
};
#define WHITE 0xffffffffu

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 0 pending, 1 signalled, < 0 the error it ended with; *ts its timestamp. */
static int fence_state(int fd, int64_t *ts)
{
	struct kfdsync_fence_status fs = { 0 };
	struct kfdsync_sync_file_status st = { 0 };
	int ret = kfdsync_sync_file_get_status(fd, &st, &fs, 1);

	if (ret < 0)
		return ret;
	if (ts)
		*ts = (int64_t)fs.timestamp_ns;
	return st.status;
}

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

/* ---- the simulated GPU ---- */

static int sim_open(struct app *app)
{
	HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };
	int ret;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS) {
		err("cannot open /dev/kfd (hsaKmtOpenKFD): is amdgpu loaded?");
		return -ENODEV;
	}
	app->kfd_open = true;
	ret = kfdsync_ctx_new(&app->ctx);
	if (ret) {
		err("cannot open a kfdsync context: %s%s", strerror(-ret),
		    ret == -ENOENT ? " (kfdsync.ko is not loaded)" : "");
		return ret;
	}
	app->sim_fd = kfdsim_open();
	if (app->sim_fd < 0) {
		err("cannot open " KFDSIM_DEVICE ": %s (the GPU simulator kfdsim.ko is loaded "
		    "only in the project's test guest)", strerror(-app->sim_fd));
		return app->sim_fd;
	}
	ret = kfdsim_queue_create(app->sim_fd, 16384, &app->queue, NULL);
	if (ret) {
		err("cannot create a simulated queue: %s", strerror(-ret));
		return ret;
	}
	if (hsaKmtCreateEvent(&desc, false, false, &app->event) != HSAKMT_STATUS_SUCCESS) {
		app->event = NULL;
		err("hsaKmtCreateEvent failed");
		return -EIO;
	}
	ret = kfdsync_event_add_hsa(app->ctx, app->event, NULL);
	if (ret) {
		err("cannot register KFD event %u with kfdsync: %s", app->event->EventId,
		    strerror(-ret));
		return ret;
	}
	app->shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	app->result = mmap(NULL, app->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	if (app->shared == MAP_FAILED || app->result == MAP_FAILED) {
		app->shared = NULL;
		app->result = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void sim_close(struct app *app)
{
	/* The queue first (also inside a wait), then the context: fences end. */
	if (app->sim_fd >= 0) {
		kfdsim_queue_destroy(app->sim_fd, app->queue);
		close(app->sim_fd);
	}
	kfdsync_ctx_free(app->ctx);
	if (app->event)
		hsaKmtDestroyEvent(app->event);
	if (app->kfd_open)
		hsaKmtCloseKFD();
	if (app->shared)
		munmap(app->shared, 4096);
	if (app->result)
		munmap(app->result, app->bytes);
}

/*
 * A: the compute time, then fill the input with frame @n's colour, then
 * signal the event. The fill comes last: Vulkan copying before the fence
 * would find the previous frame's colour. Returns the compute fence.
 */
static int submit_a(struct app *app, int n, int64_t *submit_ns)
{
	uint32_t dw[256];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct kfdsync_event_state st;
	int busy = n == app->o.hold_frame || n == app->o.error_frame ? app->o.hold_ms :
		   app->o.compute_ms;
	int64_t watchdog = n == app->o.error_frame ? app->o.error_ms * MS :
			   2 * (int64_t)app->o.timeout_ms * MS;
	int ret;

	ret = kfdsync_event_get_state(app->ctx, app->event->EventId, &st);
	if (ret || st.age != app->signals) {
		err("frame %d: the event's age is not what was submitted (%s)", n,
		    ret ? strerror(-ret) : "a signal is missing");
		return ret ? ret : -EPROTO;
	}
	for (int left = busy; left > 0; left -= 60000)
		pm4_sim_delay(&b, (uint32_t)(left > 60000 ? 60000 : left) * 1000);
	pm4_dma_fill(&b, (uintptr_t)app->vk.in_map, colours[n % 6], app->bytes);
	pm4_release_mem(&b, (uintptr_t)&app->shared->a_done_ns, 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_release_mem_event(&b, app->event->EventData.HWData2, app->event->EventId);
	*submit_ns = now_ns();
	ret = kfdsim_submit_buf(app->sim_fd, app->queue, &b, NULL);
	if (ret) {
		err("frame %d: cannot submit to the simulated queue: %s", n, strerror(-ret));
		return ret;
	}
	app->signals++;
	ret = kfdsync_event_export_sync_file(app->ctx, app->event->EventId, st.age, watchdog);
	if (ret < 0)
		err("frame %d: cannot export the event as a sync_file: %s", n, strerror(-ret));
	return ret;
}

/* B: wait for the gate (Vulkan done), then copy Vulkan's output. */
static int submit_b(struct app *app, int n, uint64_t *end)
{
	uint32_t dw[64];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	int ret;

	pm4_wait_reg_mem(&b, (uintptr_t)&app->shared->gate, PM4_WAIT_GE, (uint32_t)n + 1,
			 0xffffffffu);
	pm4_release_mem(&b, (uintptr_t)&app->shared->b_pass_ns, 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
			PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_dma_copy(&b, (uintptr_t)&app->shared->gate_seen, (uintptr_t)&app->shared->gate, 8);
	pm4_dma_copy(&b, (uintptr_t)app->result, (uintptr_t)app->vk.out_map, app->bytes);
	ret = kfdsim_submit_buf(app->sim_fd, app->queue, &b, end);
	if (ret)
		err("frame %d: cannot submit to the simulated queue: %s", n, strerror(-ret));
	return ret;
}

/* What a frame should look like: its colour, a white square in the middle. */
static bool image_is_frame(const struct app *app, const uint32_t *px, int n, char *why,
			   size_t len)
{
	const int w = app->o.width, h = app->o.height;
	const struct { int x, y; uint32_t want; } probes[] = {
		{ 2, 2, colours[n % 6] }, { w - 3, h - 3, colours[n % 6] },
		{ w / 2, h / 2, WHITE }, { w / 8, h / 2, colours[n % 6] },
	};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint32_t got = px[(size_t)probes[i].y * (size_t)w + (size_t)probes[i].x];

		if (got != probes[i].want) {
			snprintf(why, len, "pixel (%d, %d) is %08x, frame %d's is %08x",
				 probes[i].x, probes[i].y, got, n, probes[i].want);
			return false;
		}
	}
	return true;
}

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

	compute_fence = submit_a(app, n, &submit_ns);
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
		ret = kfdsync_import_to_memory(app->ctx, merged, &app->shared->gate,
					       ret == 1 ? GATE_ERROR : (uint64_t)n + 1,
					       GATE_ERROR);
	if (!ret)
		ret = submit_b(app, n, &end);
	if (ret) {
		err("frame %d: cannot hand Vulkan's completion to the compute queue: %s", n,
		    strerror(-ret));
		goto out_fail;
	}
	/* Bounded waits: the queue, then Vulkan's own fence. */
	ret = kfdsim_queue_wait(app->sim_fd, app->queue, end, app->o.timeout_ms);
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
	gate_seen = app->shared->gate_seen & 0xffffffffu;
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
	vk_ok = image_is_frame(app, app->vk.out_map, n, why, sizeof(why));
	if (!vk_ok)
		err("frame %d: Vulkan's image is not frame %d: %s (it did not wait for the "
		    "compute fence)", n, n, why);
	copy_ok = image_is_frame(app, app->result, n, why, sizeof(why));
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
	       rel_ms(submit_ns, (int64_t)app->shared->b_pass_ns), gate_seen,
	       vk_ok ? "is frame N" : "WRONG", copy_ok ? "is frame N" : "WRONG");
	ret = EXIT_OK;
	if (!vk_ok || !copy_ok || cstate != 1 || vstate != 1 || mstate != 1 ||
	    gate_seen != (uint64_t)n + 1)
		ret = EXIT_FAIL;
	/* The order, from the fences' and the queue's CLOCK_MONOTONIC stamps. */
	if ((int64_t)app->shared->a_done_ns > compute_ts || compute_ts > vk_ts ||
	    vk_ts > (int64_t)app->shared->b_pass_ns) {
		err("frame %d: out of order: compute done %+.3f, its fence %+.3f, Vulkan done "
		    "%+.3f, gate passed %+.3f ms", n,
		    rel_ms(submit_ns, (int64_t)app->shared->a_done_ns),
		    rel_ms(submit_ns, compute_ts), rel_ms(submit_ns, vk_ts),
		    rel_ms(submit_ns, (int64_t)app->shared->b_pass_ns));
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
"Options:\n"
"  -n, --frames=N       frames (default 3)\n"
"  -s, --size=WxH       image size (default 128x128)\n"
"  -c, --compute-ms=MS  compute time of a frame (default 100)\n"
"      --hold-frame=N   frame N's compute takes --hold-ms\n"
"      --hold-ms=MS     (default 2000)\n"
"      --error-frame=N  frame N's fence gets a watchdog of --error-ms, shorter\n"
"                       than its compute (--hold-ms): it ends with -ETIMEDOUT\n"
"      --error-ms=MS    (default 300)\n"
"  -t, --timeout-ms=MS  longest wait for the queue or Vulkan (default 30000)\n"
"  -h, --help           show this help and exit\n"
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
"or no such Vulkan device, kfdsync or simulator.\n");
}

static int parse_int(const char *opt, const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		err("%s: \"%s\" is not a number from %d to %d", opt, s, min, max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_args(struct options *o, int argc, char **argv)
{
	enum { OPT_HOLD_FRAME = 256, OPT_HOLD_MS, OPT_ERROR_FRAME, OPT_ERROR_MS };
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "compute-ms", required_argument, NULL, 'c' },
		{ "hold-frame", required_argument, NULL, OPT_HOLD_FRAME },
		{ "hold-ms", required_argument, NULL, OPT_HOLD_MS },
		{ "error-frame", required_argument, NULL, OPT_ERROR_FRAME },
		{ "error-ms", required_argument, NULL, OPT_ERROR_MS },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:s:c:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_int("--frames", optarg, 1, 100000, &o->frames))
				return -1;
			break;
		case 's': {
			char *x = strchr(optarg, 'x');

			if (!x) {
				err("--size: \"%s\" is not WxH", optarg);
				return -1;
			}
			*x = '\0';
			if (parse_int("--size width", optarg, 16, 4096, &o->width) ||
			    parse_int("--size height", x + 1, 16, 4096, &o->height))
				return -1;
			break;
		}
		case 'c':
			if (parse_int("--compute-ms", optarg, 0, 600000, &o->compute_ms))
				return -1;
			break;
		case OPT_HOLD_FRAME:
			if (parse_int("--hold-frame", optarg, 0, INT_MAX, &o->hold_frame))
				return -1;
			break;
		case OPT_HOLD_MS:
			if (parse_int("--hold-ms", optarg, 0, 600000, &o->hold_ms))
				return -1;
			break;
		case OPT_ERROR_FRAME:
			if (parse_int("--error-frame", optarg, 0, INT_MAX, &o->error_frame))
				return -1;
			break;
		case OPT_ERROR_MS:
			if (parse_int("--error-ms", optarg, 10, 60000, &o->error_ms))
				return -1;
			break;
		case 't':
			if (parse_int("--timeout-ms", optarg, 1, 3600000, &o->timeout_ms))
				return -1;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		err("unexpected argument \"%s\"", argv[optind]);
		return -1;
	}
	if (o->error_frame >= 0 && o->error_ms >= o->hold_ms) {
		err("--error-ms (%d) must be shorter than --hold-ms (%d)", o->error_ms, o->hold_ms);
		return -1;
	}
	if (o->hold_ms >= o->timeout_ms) {
		err("--hold-ms (%d) must be shorter than --timeout-ms (%d)", o->hold_ms,
		    o->timeout_ms);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct app app = {
		.o = { .frames = 3, .width = 128, .height = 128, .compute_ms = 100,
		       .hold_frame = -1, .hold_ms = 2000, .error_frame = -1, .error_ms = 300,
		       .timeout_ms = 30000 },
		.sim_fd = -1,
	};
	int ret = EXIT_OK;

	if (parse_args(&app.o, argc, argv))
		return EXIT_SETUP;
	app.bytes = (size_t)app.o.width * (size_t)app.o.height * 4;
	if (vk_open(&app)) {
		vk_close(&app.vk);
		return EXIT_SETUP;
	}
	printf("vulkan: %s, SYNC_FD semaphores imported and exported\n", app.vk.name);
	if (sim_open(&app)) {
		ret = EXIT_SETUP;
		goto out;
	}
	printf("compute: simulated GPU (kfdsim), KFD event %u exported by kfdsync\n",
	       app.event->EventId);
	fflush(stdout);
	for (int n = 0; n < app.o.frames && ret == EXIT_OK; n++)
		ret = run_frame(&app, n);
	printf("summary: frames=%d result=%s\n", app.o.frames, ret == EXIT_OK ? "ok" : "failed");
out:
	/* Stop the queue and end its fences before Vulkan goes away. */
	sim_close(&app);
	vk_close(&app.vk);
	return ret;
}
