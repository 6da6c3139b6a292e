// SPDX-License-Identifier: MIT
/*
 * What the module, the kernel, amdkfd and this build of the library
 * support, asked once up front (kfdsync_ctx_get_caps()), and why something
 * is not (kfdsync_caps_why_not()). Every bit is probed: the module is
 * asked, a device opened, an ioctl tried on a file made for the purpose;
 * none is read from a version number. What cannot be probed without a cost
 * the caller did not agree to (/dev/kfd: the process would become an amdkfd
 * process) or without something to ask (no DRM render node, no dma-buf
 * source) is reported in caps->unprobed, not guessed.
 */
#include <fcntl.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kfdsync.h"
#include "internal.h"
#include "relay.h"

/* amdkfd's event ages: KFD ioctl 1.14 (Linux 6.5). */
#define KFD_AGES_VERSION	((1u << 16) | 14)

/* Does the module know ioctl @req? A call it must refuse tells (EINVAL vs EOPNOTSUPP). */
static bool module_has(int fd, unsigned long req)
{
	/* Unknown flags everywhere: every kfdsync ioctl checks them first. */
	uint32_t arg[16] = { 0, 0xffffffffu, 0xffffffffu };

	return kfdsync_ctx_ioctl(fd, req, arg) != -EOPNOTSUPP;
}

/* amdkfd's ioctl version, from an fd of our own: 0 and *@version, or -errno. */
static int kfd_version(uint32_t *version)
{
	struct kfd_get_version_args v = { 0 };
	int fd = kfdsync_open_device("/dev/kfd"), ret;

	if (fd < 0)
		return fd;
	ret = kfdsync_ioctl(fd, KFD_IOC_GET_VERSION, &v);
	close(fd);
	if (ret < 0)
		return ret;
	*version = (v.major_version << 16) | (v.minor_version & 0xffff);
	return 0;
}


/* Is this process an amdkfd process already (its /sys/class/kfd/kfd/proc entry)? */
static bool kfd_process_already(void)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/class/kfd/kfd/proc/%d", (int)getpid());
	return !stat(path, &st);
}

/* 1 yes, 0 no (-EOPNOTSUPP), -1 could not tell: how a probe call answered. */
static int answer(int ret, int yes)
{
	return ret == yes || (yes == 0 && ret >= 0) ? 1 : ret == -EOPNOTSUPP ? 0 : -1;
}

/* A dma-buf of a DRM device's dumb buffer (vgem, say), exported by PRIME; fd or -errno. */
static int dumb_dmabuf(void)
{
	for (int minor = 0; minor < 16; minor++) {
		struct drm_mode_create_dumb dumb = { .width = 64, .height = 1, .bpp = 32 };
		char path[32];
		int fd, buf = -1;

		snprintf(path, sizeof(path), "/dev/dri/card%d", minor);
		fd = kfdsync_open_device(path);
		if (fd < 0)
			continue;
		/* The dma-buf holds the buffer; closing the device frees the handle. */
		if (!drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb) &&
		    drmPrimeHandleToFD(fd, dumb.handle, DRM_CLOEXEC | DRM_RDWR, &buf))
			buf = -1;
		close(fd);
		if (buf >= 0)
			return buf;
	}
	return -ENODEV;
}

/* A dma-buf to ask: the system heap, udmabuf, or a DRM dumb buffer; fd or -errno. */
static int scratch_dmabuf(void)
{
	struct dma_heap_allocation_data heap = { .len = 4096, .fd_flags = O_RDWR | O_CLOEXEC };
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = 4096 };
	int fd = kfdsync_open_device("/dev/dma_heap/system"), mfd, ret;

	if (fd >= 0) {
		ret = kfdsync_ioctl(fd, DMA_HEAP_IOCTL_ALLOC, &heap);
		close(fd);
		if (!ret)
			return (int)heap.fd;
	}
	fd = kfdsync_open_device("/dev/udmabuf");
	if (fd < 0)
		return dumb_dmabuf();
	mfd = memfd_create("kfdsync-caps", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0 || ftruncate(mfd, 4096) || fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		ret = -errno;
	} else {
		create.memfd = (uint32_t)mfd;
		ret = kfdsync_ioctl(fd, UDMABUF_CREATE, &create);
	}
	if (mfd >= 0)
		close(mfd);
	close(fd);
	return ret;
}

/* DMABUF: a sync_file export from a dma-buf made for the purpose. */
static int probe_dmabuf(void)
{
	int buf = scratch_dmabuf(), ret;

	if (buf < 0)
		return -1;
	ret = kfdsync_dmabuf_export_sync_file(buf, KFDSYNC_DMABUF_READ);
	if (ret >= 0)
		close(ret);
	close(buf);
	return answer(ret, 0);
}

/* DEADLINE: a deadline on a CPU timeline's fence (a timeline of our own). */
static int probe_deadline(struct kfdsync_timeline *tl)
{
	int f = kfdsync_timeline_create_fence(tl, 1, NULL), ret;

	if (f < 0)
		return -1;
	ret = kfdsync_sync_file_set_deadline(f, (uint64_t)kfdsync_now_ns() + 1000000000);
	close(f);
	return answer(ret, 0);
}

/*
 * SYNCOBJ and SYNCOBJ_EVENTFD: the render nodes, until one has both
 * (DRM_CAP_SYNCOBJ; an eventfd on handle 0, which no syncobj has, is
 * -ENOENT where the ioctl exists). @c: the bits found; returns the bits
 * probed (none without a render node).
 */
static uint32_t probe_syncobj(uint32_t *c)
{
	uint32_t probed = 0;

	for (int minor = 128; minor < 192; minor++) {
		char path[32];
		uint64_t cap = 0;
		int fd, efd;

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", minor);
		fd = kfdsync_open_device(path);
		if (fd < 0)
			continue;
		probed = KFDSYNC_CAP_SYNCOBJ | KFDSYNC_CAP_SYNCOBJ_EVENTFD;
		if (!drmGetCap(fd, DRM_CAP_SYNCOBJ, &cap) && cap)
			*c |= KFDSYNC_CAP_SYNCOBJ;
		efd = eventfd(0, EFD_CLOEXEC);
		if (efd >= 0 && kfdsync_syncobj_eventfd(fd, 0, 0, 0, efd) == -ENOENT)
			*c |= KFDSYNC_CAP_SYNCOBJ_EVENTFD;
		if (efd >= 0)
			close(efd);
		close(fd);
		if ((*c & probed) == probed)
			break;
	}
	return probed;
}

static int get_caps(struct kfdsync_ctx *ctx, uint32_t flags, struct kfdsync_caps *caps)
{
	struct kfdsync_timeline *tl = NULL;
	struct kfdsync_module_status st;
	struct kfdsync_amdkfd_abi abi;
	struct kfdsync_module_info mi;
	uint32_t c = 0, unprobed = 0;
	int ret;

	ret = kfdsync_ctx_get_module_info(ctx, &mi);
	if (ret < 0)
		return ret;
	memset(caps, 0, sizeof(*caps));
	caps->kernel_version = mi.kernel_version;
	caps->module_abi = mi.abi_version;
	if (mi.abi_version == KFDSYNC_ABI_VERSION)
		c |= KFDSYNC_CAP_MODULE_ABI;

	if (kfdsync_ctx_get_module_status(ctx, &st) == 0) {
		caps->source = st.source;
		caps->relay_reason = st.relay_reason;
		if (st.watch & KFDSYNC_STATUS_WATCH_SLOTS)
			c |= KFDSYNC_CAP_HOOKS_WATCH;
		memcpy(caps->relay_detail, st.detail, sizeof(caps->relay_detail));
	} else {
		/* A module older than STATUS: INFO says as much. */
		caps->source = mi.hooks ? KFDSYNC_SOURCE_HOOKS : KFDSYNC_SOURCE_RELAY;
	}
	if (caps->source == KFDSYNC_SOURCE_HOOKS)
		c |= KFDSYNC_CAP_HOOKS;
	/* The gate's verdict (modules without it: unchecked, and said so). */
	memset(&abi, 0, sizeof(abi));
	ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_AMDKFD_ABI, &abi);
	if (ret == 0) {
		_Static_assert(sizeof(caps->amdkfd_abi) == sizeof(abi.abi), "abi");
		_Static_assert(sizeof(caps->amdkfd_reason) == sizeof(abi.reason), "reason");
		caps->amdkfd_verdict = abi.verdict;
		memcpy(caps->amdkfd_abi, abi.abi, sizeof(caps->amdkfd_abi));
		memcpy(caps->amdkfd_reason, abi.reason, sizeof(caps->amdkfd_reason));
		caps->amdkfd_abi[sizeof(caps->amdkfd_abi) - 1] = '\0';
		caps->amdkfd_reason[sizeof(caps->amdkfd_reason) - 1] = '\0';
		if (abi.verdict == KFDSYNC_AMDKFD_ABI_MATCH)
			c |= KFDSYNC_CAP_AMDKFD_ABI;
	} else {
		snprintf(caps->amdkfd_reason, sizeof(caps->amdkfd_reason),
			 "kfdsync.ko has no amdkfd ABI gate report (%s)", strerror(-ret));
	}

	/* /dev/kfd only when asked, or when opening it again costs nothing. */
	if ((flags & KFDSYNC_CAPS_OPEN_KFD) || kfd_process_already()) {
		ret = kfd_version(&caps->kfd_version);
		caps->kfd_error = ret < 0 ? ret : 0;
		if (!ret)
			c |= KFDSYNC_CAP_EVENTS;
	} else {
		ret = -1;
		unprobed |= KFDSYNC_CAP_EVENTS;
	}
	/* No thread needed: the hooks count, or a probe loses nothing (ages). */
	if ((c & KFDSYNC_CAP_HOOKS_WATCH) ||
	    (!ret && caps->kfd_version >= KFD_AGES_VERSION))
		c |= KFDSYNC_CAP_DISPATCH;
	else if (unprobed & KFDSYNC_CAP_EVENTS)
		unprobed |= KFDSYNC_CAP_DISPATCH;

	if (module_has(ctx->fd, KFDSYNC_IOCTL_EXPORT_CONDITION))
		c |= KFDSYNC_CAP_HSA;
	if (module_has(ctx->fd, KFDSYNC_IOCTL_IMPORT_SYNC_FILE))
		c |= KFDSYNC_CAP_IMPORT;
	if (!kfdsync_timeline_new(&tl))
		c |= KFDSYNC_CAP_TIMELINES;
	ret = tl ? probe_deadline(tl) : -1;
	kfdsync_timeline_free(tl);
	if (ret > 0)
		c |= KFDSYNC_CAP_DEADLINE;
	else if (ret < 0)
		unprobed |= KFDSYNC_CAP_DEADLINE;
	ret = probe_dmabuf();
	if (ret > 0)
		c |= KFDSYNC_CAP_DMABUF;
	else if (ret < 0)
		unprobed |= KFDSYNC_CAP_DMABUF;
	unprobed |= (KFDSYNC_CAP_SYNCOBJ | KFDSYNC_CAP_SYNCOBJ_EVENTFD) & ~probe_syncobj(&c);
#ifdef KFDSYNC_HAVE_AMDGPU
	c |= KFDSYNC_CAP_AMDGPU;
#endif
	caps->unprobed = unprobed;
	caps->supported = c;
	return 0;
}

KFDSYNC_EXPORT int kfdsync_get_caps(struct kfdsync_ctx *ctx, uint32_t flags,
				    struct kfdsync_caps *caps)
{
	struct kfdsync_ctx *own = NULL;
	int ret;

	if (!caps || (flags & ~KFDSYNC_CAPS_OPEN_KFD))
		return -EINVAL;
	/* Before the application chose a form: a context of our own, for the call. */
	if (!ctx) {
		ret = kfdsync_ctx_new(&own);
		if (ret)
			return ret;
	}
	ret = get_caps(ctx ? ctx : own, flags, caps);
	kfdsync_ctx_free(own);
	return ret;
}

KFDSYNC_EXPORT int kfdsync_ctx_get_caps(struct kfdsync_ctx *ctx, struct kfdsync_caps *caps)
{
	return ctx ? kfdsync_get_caps(ctx, 0, caps) : -EINVAL;
}

/* Why @cap was not probed (it is in caps->unprobed). */
static const char *unprobed_why(uint32_t cap)
{
	switch (cap) {
	case KFDSYNC_CAP_EVENTS:
	case KFDSYNC_CAP_DISPATCH:
		return "not probed: /dev/kfd was not opened (ask with KFDSYNC_CAPS_OPEN_KFD)";
	case KFDSYNC_CAP_DEADLINE:
		return "not probed: no sync_file to ask (no CPU timeline could be made)";
	case KFDSYNC_CAP_DMABUF:
		return "not probed: no dma-buf to ask (no /dev/dma_heap/system, /dev/udmabuf, "
		       "or /dev/dri/card* with dumb buffers)";
	default:
		return "not probed: no DRM render node (/dev/dri/renderD*) to ask";
	}
}

/* "Linux 6.1: " from a KERNEL_VERSION. */
static void kv_text(char *buf, size_t size, uint32_t kv)
{
	snprintf(buf, size, "Linux %u.%u", kv >> 16, (kv >> 8) & 0xff);
}

KFDSYNC_EXPORT int kfdsync_caps_why_not(const struct kfdsync_caps *caps, uint32_t cap,
					char *buf, size_t size)
{
	char have[24];
	char why[256] = "";

	if (!caps || (size && !buf) || !cap || (cap & (cap - 1)) || cap > KFDSYNC_CAP_HOOKS_WATCH)
		return -EINVAL;
	if (caps->supported & cap) {
		if (size)
			buf[0] = '\0';
		return 1;
	}
	kv_text(have, sizeof(have), caps->kernel_version);
	if (caps->unprobed & cap) {
		snprintf(why, sizeof(why), "%s", unprobed_why(cap));
		goto out;
	}
	switch (cap) {
	case KFDSYNC_CAP_HOOKS:
		snprintf(why, sizeof(why), "relay mode: %s",
			 caps->relay_detail[0] ? caps->relay_detail : "kfdsync's hooks are not attached");
		break;
	case KFDSYNC_CAP_EVENTS:
		snprintf(why, sizeof(why), "/dev/kfd cannot be opened: %s",
			 strerror(caps->kfd_error < 0 ? -caps->kfd_error : EIO));
		break;
	case KFDSYNC_CAP_DISPATCH:
		if (caps->kfd_error)
			snprintf(why, sizeof(why), "/dev/kfd cannot be opened: %s",
				 strerror(-caps->kfd_error));
		else
			snprintf(why, sizeof(why), "relay mode, and amdkfd %u.%u has no event ages "
				 "(KFD ioctl 1.14, Linux 6.5): a relay that does not block could "
				 "lose signals; use the threads form", caps->kfd_version >> 16,
				 caps->kfd_version & 0xffff);
		break;
	case KFDSYNC_CAP_HSA:
	case KFDSYNC_CAP_IMPORT:
		snprintf(why, sizeof(why), "kfdsync.ko is older than this library (no %s ioctl)",
			 cap == KFDSYNC_CAP_HSA ? "EXPORT_CONDITION" : "IMPORT_SYNC_FILE");
		break;
	case KFDSYNC_CAP_TIMELINES:
		snprintf(why, sizeof(why), "/dev/kfdsync_timeline is missing or not "
			 "readable and writable");
		break;
	case KFDSYNC_CAP_DMABUF:
		snprintf(why, sizeof(why), "%s has no DMA_BUF_IOCTL_EXPORT_SYNC_FILE "
			 "(Linux 6.0 brought it)", have);
		break;
	case KFDSYNC_CAP_DEADLINE:
		snprintf(why, sizeof(why), "%s has no SYNC_IOC_SET_DEADLINE "
			 "(Linux 6.4 brought it)", have);
		break;
	case KFDSYNC_CAP_SYNCOBJ:
		snprintf(why, sizeof(why), "no DRM render node here has syncobjs");
		break;
	case KFDSYNC_CAP_SYNCOBJ_EVENTFD:
		snprintf(why, sizeof(why), "%s: no render node has DRM_IOCTL_SYNCOBJ_EVENTFD "
			 "(Linux 6.6 brought it) and timeline syncobjs", have);
		break;
	case KFDSYNC_CAP_AMDGPU:
		snprintf(why, sizeof(why), "libkfdsync was built without libdrm_amdgpu");
		break;
	case KFDSYNC_CAP_HOOKS_WATCH:
		if (caps->source != KFDSYNC_SOURCE_HOOKS)
			snprintf(why, sizeof(why), "relay mode: %s",
				 caps->relay_detail[0] ? caps->relay_detail :
				 "kfdsync's hooks are not attached");
		else
			snprintf(why, sizeof(why), "amdkfd has no signal page for this process "
				 "yet (it makes one with the first signal event): events are relayed");
		break;
	case KFDSYNC_CAP_AMDKFD_ABI:
		snprintf(why, sizeof(why), "amdkfd ABI %s: %s",
			 caps->amdkfd_verdict == KFDSYNC_AMDKFD_ABI_MISMATCH ? "mismatch" :
			 caps->amdkfd_verdict == KFDSYNC_AMDKFD_ABI_NO_BTF ? "unknown (no BTF)" :
			 "not checked", caps->amdkfd_reason[0] ? caps->amdkfd_reason : "no reason given");
		break;
	case KFDSYNC_CAP_MODULE_ABI:
		snprintf(why, sizeof(why), "kfdsync.ko speaks ABI %u, this library ABI %u",
			 caps->module_abi, (unsigned int)KFDSYNC_ABI_VERSION);
		break;
	default:
		snprintf(why, sizeof(why), "not supported");
	}
out:
	if (size)
		snprintf(buf, size, "%s", why);
	return 0;
}
