// SPDX-License-Identifier: MIT
/*
 * What today's fence consumers need around kfdsync's fences: accumulating
 * sync_files into "no fence yet" (-1), a sync_file's deadline hint, and an
 * eventfd on a drm_syncobj (timeline) point, as a wp_linux_drm_syncobj_v1
 * client or a Vulkan WSI waits for a compositor's release point.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kfdsync.h"
#include "internal.h"

/* Linux 6.4 uAPI (<linux/sync_file.h>); bookworm's headers are 6.1's. */
#ifndef SYNC_IOC_SET_DEADLINE
struct sync_set_deadline {
	__u64 deadline_ns;
	__u64 pad;
};
#define SYNC_IOC_SET_DEADLINE _IOW(SYNC_IOC_MAGIC, 5, struct sync_set_deadline)
#endif

/* Linux 6.6 uAPI (<drm/drm.h>); bookworm's libdrm 2.4.114 predates it. */
#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

/* Has the sync_file already ended with an error? */
static bool failed_already(int fd)
{
	struct kfdsync_sync_file_status st;

	return kfdsync_sync_file_get_status(fd, &st, NULL, 0) >= 0 && st.status < 0;
}

KFDSYNC_EXPORT int kfdsync_sync_file_accumulate(const char *name, int *acc, int fd)
{
	bool lost;
	int ret, merged;

	/* The fence-name rule, checked first, whether a merge happens or not. */
	if (!acc || *acc < -1 ||
	    (name && strnlen(name, KFDSYNC_NAME_MAX + 1) > KFDSYNC_NAME_MAX))
		return -EINVAL;
	ret = kfdsync_sync_file_check(fd);
	if (ret <= 0)
		return ret < 0 ? ret : -EINVAL;
	if (*acc == -1) {
		/* The first fence: a descriptor of our own for it. */
		merged = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (merged < 0)
			return -errno;
		*acc = merged;
		return 0;
	}
	/*
	 * The kernel leaves fences that have signalled out of a merge, errors
	 * and all (dma_fence_unwrap_merge()): say so when that loses one.
	 */
	lost = failed_already(*acc) || failed_already(fd);
	merged = kfdsync_sync_file_merge(name, *acc, fd);
	if (merged < 0)
		return merged;
	close(*acc);
	*acc = merged;
	return lost && !failed_already(merged) ? 1 : 0;
}

KFDSYNC_EXPORT int kfdsync_sync_file_set_deadline(int fd, uint64_t deadline_ns)
{
	struct sync_set_deadline arg;
	int ret = kfdsync_sync_file_check(fd);

	if (ret <= 0)
		return ret < 0 ? ret : -EINVAL;
	memset(&arg, 0, sizeof(arg));
	arg.deadline_ns = deadline_ns;
	ret = kfdsync_ioctl(fd, SYNC_IOC_SET_DEADLINE, &arg);
	/* A sync_file before Linux 6.4 knows no such ioctl. */
	return ret == -ENOTTY ? -EOPNOTSUPP : ret;
}

static int syncobj_eventfd_ioctl(int drm_fd, uint32_t handle, uint64_t point,
				 uint32_t flags, int eventfd)
{
	struct drm_syncobj_eventfd arg;

	memset(&arg, 0, sizeof(arg));
	arg.handle = handle;
	arg.flags = flags;
	arg.point = point;
	arg.fd = eventfd;
	return kfdsync_ioctl(drm_fd, DRM_IOCTL_SYNCOBJ_EVENTFD, &arg);
}

KFDSYNC_EXPORT int kfdsync_syncobj_eventfd(int drm_fd, uint32_t handle, uint64_t point,
					   uint32_t flags, int eventfd)
{
	uint64_t cap = 0;
	int ret;

	if (flags & ~KFDSYNC_SYNCOBJ_WAIT_AVAILABLE)
		return -EINVAL;
	/* The kernel asks for timeline syncobjs even for point 0. */
	if (drmGetCap(drm_fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) || !cap)
		return -EOPNOTSUPP;
	ret = syncobj_eventfd_ioctl(drm_fd, handle, point,
				    flags & KFDSYNC_SYNCOBJ_WAIT_AVAILABLE ?
				    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE : 0, eventfd);
	if (ret != -EINVAL)
		return ret;
	/*
	 * -EINVAL is "not an eventfd" from Linux 6.6 on, and "unknown ioctl"
	 * before. Handle 0 is never a syncobj: 6.6+ answers -ENOENT for it,
	 * an older kernel -EINVAL again.
	 */
	if (syncobj_eventfd_ioctl(drm_fd, 0, 0, 0, -1) == -EINVAL)
		return -EOPNOTSUPP;
	return -EINVAL;
}
