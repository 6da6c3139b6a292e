// SPDX-License-Identifier: MIT
/*
 * What the module, the kernel, amdkfd and this build of the library
 * support, asked once up front (kfdsync_ctx_get_caps()), and why something
 * is not (kfdsync_caps_why_not()). Everything a missing capability would
 * make fail fails with -EOPNOTSUPP (kfdsync.h, "Errors").
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"
#include "relay.h"

#define KV(a, b) (((a) << 16) + ((b) << 8))

/* Kernel releases that brought a capability (KERNEL_VERSION). */
#define KV_DMABUF_SYNC_FILE	KV(6, 0)
#define KV_DEADLINE		KV(6, 4)
#define KV_SYNCOBJ_EVENTFD	KV(6, 6)
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

KFDSYNC_EXPORT int kfdsync_ctx_get_caps(struct kfdsync_ctx *ctx, struct kfdsync_caps *caps)
{
	struct kfdsync_module_status st;
	struct kfdsync_amdkfd_abi abi;
	struct kfdsync_module_info mi;
	uint32_t c = 0;
	int ret;

	if (!ctx || !caps)
		return -EINVAL;
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

	ret = kfd_version(&caps->kfd_version);
	caps->kfd_error = ret < 0 ? ret : 0;
	if (!ret)
		c |= KFDSYNC_CAP_EVENTS;
	/* No thread needed: the hooks count, or a probe loses nothing (ages). */
	if (!ret && ((c & KFDSYNC_CAP_HOOKS_WATCH) || caps->kfd_version >= KFD_AGES_VERSION))
		c |= KFDSYNC_CAP_DISPATCH;

	if (module_has(ctx->fd, KFDSYNC_IOCTL_EXPORT_CONDITION))
		c |= KFDSYNC_CAP_HSA;
	if (module_has(ctx->fd, KFDSYNC_IOCTL_IMPORT_SYNC_FILE))
		c |= KFDSYNC_CAP_IMPORT;
	if (access("/dev/kfdsync_timeline", R_OK | W_OK) == 0)
		c |= KFDSYNC_CAP_TIMELINES;
	if (mi.kernel_version >= KV_DMABUF_SYNC_FILE)
		c |= KFDSYNC_CAP_DMABUF;
	if (mi.kernel_version >= KV_DEADLINE)
		c |= KFDSYNC_CAP_DEADLINE;
	c |= KFDSYNC_CAP_SYNCOBJ;
	if (mi.kernel_version >= KV_SYNCOBJ_EVENTFD)
		c |= KFDSYNC_CAP_SYNCOBJ_EVENTFD;
#ifdef KFDSYNC_HAVE_AMDGPU
	c |= KFDSYNC_CAP_AMDGPU;
#endif
	caps->supported = c;
	return 0;
}

/* "6.4" of a KERNEL_VERSION. */
static void kv_text(char *buf, size_t size, uint32_t kv)
{
	snprintf(buf, size, "%u.%u", kv >> 16, (kv >> 8) & 0xff);
}

KFDSYNC_EXPORT int kfdsync_caps_why_not(const struct kfdsync_caps *caps, uint32_t cap,
					char *buf, size_t size)
{
	char have[16], need[16];
	uint32_t need_kv = 0;
	char why[256] = "";

	if (!caps || (size && !buf) || !cap || (cap & (cap - 1)) || cap > KFDSYNC_CAP_HOOKS_WATCH)
		return -EINVAL;
	if (caps->supported & cap) {
		if (size)
			buf[0] = '\0';
		return 1;
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
		need_kv = KV_DMABUF_SYNC_FILE;
		break;
	case KFDSYNC_CAP_DEADLINE:
		need_kv = KV_DEADLINE;
		break;
	case KFDSYNC_CAP_SYNCOBJ_EVENTFD:
		need_kv = KV_SYNCOBJ_EVENTFD;
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
	if (need_kv) {
		kv_text(have, sizeof(have), caps->kernel_version);
		kv_text(need, sizeof(need), need_kv);
		snprintf(why, sizeof(why), "Linux %s; needs %s or later", have, need);
	}
	if (size)
		snprintf(buf, size, "%s", why);
	return 0;
}
