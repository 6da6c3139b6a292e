// SPDX-License-Identifier: MIT
/* sync_file utilities: libdrm's libsync.h where it fits, plus inspection. */
#include <errno.h>
#include <fcntl.h>
/* Before libsync.h, which otherwise duplicates its structs. */
#include <linux/sync_file.h>
#include <libsync.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"

KFDSYNC_EXPORT int kfdsync_sync_file_check(int fd)
{
	struct sync_file_info info;
	int ret;

	if (fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	memset(&info, 0, sizeof(info));
	ret = kfdsync_ioctl(fd, SYNC_IOC_FILE_INFO, &info);
	if (ret == 0)
		return 1;
	/* Other files reject the ioctl with ENOTTY (or EINVAL, EBADF...). */
	return 0;
}

KFDSYNC_EXPORT int kfdsync_sync_file_merge(const char *name, int fd1, int fd2)
{
	int ret;

	/*
	 * One rule for fence names (kfdsync.h): at most 31 bytes, longer ones
	 * refused. libsync's sync_merge() would cut them.
	 */
	if (name && strnlen(name, KFDSYNC_NAME_MAX + 1) > KFDSYNC_NAME_MAX)
		return -EINVAL;
	/*
	 * The kernel answers ENOTTY for a non-sync_file fd1 and ENOENT for a
	 * non-sync_file fd2: check both, so the documented codes hold.
	 */
	for (int i = 0; i < 2; i++) {
		ret = kfdsync_sync_file_check(i ? fd2 : fd1);
		if (ret <= 0)
			return ret < 0 ? ret : -EINVAL;
	}
	ret = sync_merge(name ? name : "kfdsync-merge", fd1, fd2);
	if (ret < 0)
		return -errno;
	/* SYNC_IOC_MERGE returns an O_CLOEXEC fd since Linux 4.7. */
	return ret;
}

KFDSYNC_EXPORT int kfdsync_sync_file_wait(int fd, int64_t timeout_ns)
{
	int64_t deadline = timeout_ns < 0 ? -1 : kfdsync_now_ns() + timeout_ns;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = kfdsync_sync_file_check(fd);

	if (ret < 0)
		return ret;
	if (ret == 0)
		return -EINVAL;
	/*
	 * libsync's sync_wait() takes milliseconds; poll directly so that
	 * sub-millisecond timeouts and long ones both keep their meaning.
	 */
	for (;;) {
		int ms = -1;

		if (deadline >= 0) {
			int64_t left = deadline - kfdsync_now_ns();

			/* Round up: never return before the deadline. */
			left = left < 0 ? 0 : (left + 999999) / 1000000;
			ms = left > INT32_MAX ? INT32_MAX : (int)left;
		}
		ret = poll(&pfd, 1, ms);
		if (ret > 0) {
			if (pfd.revents & (POLLERR | POLLNVAL))
				return -EINVAL;
			return 0;
		}
		if (ret == 0 && (deadline < 0 || kfdsync_now_ns() >= deadline))
			return -ETIME;
		if (ret < 0 && errno != EINTR && errno != EAGAIN)
			return -errno;
	}
}

KFDSYNC_EXPORT int kfdsync_sync_file_get_status(int fd,
						struct kfdsync_sync_file_status *st,
						struct kfdsync_fence_status *fences,
						unsigned int max_fences)
{
	struct sync_fence_info *fi = NULL;
	struct sync_file_info info;
	unsigned int n;
	int ret;

	if (max_fences && !fences)
		return -EINVAL;
	memset(&info, 0, sizeof(info));
	ret = kfdsync_ioctl(fd, SYNC_IOC_FILE_INFO, &info);
	if (ret < 0)
		return ret == -ENOTTY ? -EINVAL : ret;
	/*
	 * The kernel refuses a buffer smaller than the sync_file's fence count
	 * (which never changes): fetch them all, copy out what was asked.
	 */
	n = info.num_fences < max_fences ? info.num_fences : max_fences;
	if (n) {
		unsigned int all = info.num_fences;

		fi = calloc(all, sizeof(*fi));
		if (!fi)
			return -ENOMEM;
		memset(&info, 0, sizeof(info));
		info.num_fences = all;
		info.sync_fence_info = (uint64_t)(uintptr_t)fi;
		ret = kfdsync_ioctl(fd, SYNC_IOC_FILE_INFO, &info);
		if (ret < 0) {
			free(fi);
			return ret;
		}
		for (unsigned int i = 0; i < n; i++) {
			struct kfdsync_fence_status *f = &fences[i];

			memset(f, 0, sizeof(*f));
			memcpy(f->driver, fi[i].driver_name, sizeof(f->driver) - 1);
			memcpy(f->timeline, fi[i].obj_name, sizeof(f->timeline) - 1);
			f->status = fi[i].status;
			f->timestamp_ns = fi[i].timestamp_ns;
		}
		free(fi);
	}
	if (st) {
		memset(st, 0, sizeof(*st));
		memcpy(st->name, info.name, sizeof(st->name) - 1);
		st->status = info.status;
		st->num_fences = info.num_fences;
	}
	return (int)info.num_fences;
}
