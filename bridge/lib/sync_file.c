// SPDX-License-Identifier: MIT
/* sync_file utilities: libdrm's libsync.h where it fits, plus inspection. */
#include <errno.h>
#include <fcntl.h>
/* Before libsync.h, which otherwise duplicates its structs. */
#include <linux/sync_file.h>
#include <libsync.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
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

/* How a sync_file stands: 1 signalled, 0 pending, < 0 its error; or -EINVAL, -EBADF. */
static int state_of(int fd, int32_t *state)
{
	struct sync_file_info info;
	int ret;

	memset(&info, 0, sizeof(info));
	ret = kfdsync_ioctl(fd, SYNC_IOC_FILE_INFO, &info);
	if (ret < 0)
		return ret == -ENOTTY || ret == -EFAULT ? -EINVAL : ret;
	*state = info.status;
	return 0;
}

/* poll(2)'s timeout for @deadline (-1: none), rounded up: never early. */
static int poll_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - kfdsync_now_ns();
	left = left < 0 ? 0 : (left + 999999) / 1000000;
	return left > INT32_MAX ? INT32_MAX : (int)left;
}

KFDSYNC_EXPORT int kfdsync_sync_file_wait_many(const int *fds, unsigned int count,
					       uint32_t flags, int64_t timeout_ns,
					       int32_t *status)
{
	/*
	 * One deadline for the whole wait, taken before anything else: every
	 * fence gets what is left of it, never the timeout again.
	 */
	int64_t deadline = timeout_ns < 0 ? -1 : kfdsync_now_ns() + timeout_ns;
	bool all = flags & KFDSYNC_WAIT_ALL;
	struct pollfd *pfd;
	int32_t *st = status;
	unsigned int ended = 0, i, n;
	int ret = 0;

	if (!fds || !count || (flags & ~KFDSYNC_WAIT_ALL) || count > INT32_MAX)
		return -EINVAL;
	pfd = calloc(count, sizeof(*pfd));
	if (!st)
		st = calloc(count, sizeof(*st));
	if (!pfd || !st) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < count && !ret; i++) {
		if (fcntl(fds[i], F_GETFD) < 0)
			ret = -EBADF;
		else
			ret = state_of(fds[i], &st[i]);
	}
	if (ret)
		goto out;
	for (;;) {
		for (i = 0, n = 0, ended = 0; i < count; i++) {
			if (st[i]) {
				ended++;
				continue;
			}
			pfd[n++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		}
		if (ended == count || (!all && ended)) {
			ret = (int)ended;
			break;
		}
		if (deadline >= 0 && kfdsync_now_ns() >= deadline) {
			ret = -ETIME;
			break;
		}
		ret = poll(pfd, n, poll_ms(deadline));
		if (ret < 0 && errno != EINTR && errno != EAGAIN) {
			ret = -errno;
			break;
		}
		ret = 0;
		/* Who ended, in the callers' order; a poll error is the fd's own. */
		for (i = 0; i < count && !ret; i++)
			if (!st[i])
				ret = state_of(fds[i], &st[i]);
		if (ret)
			break;
	}
out:
	free(pfd);
	if (st != status)
		free(st);
	return ret;
}

KFDSYNC_EXPORT int kfdsync_sync_file_wait_status(int fd, int64_t timeout_ns, int32_t *status)
{
	int ret = kfdsync_sync_file_wait_many(&fd, 1, 0, timeout_ns, status);

	return ret < 0 ? ret : 0;
}

KFDSYNC_EXPORT int kfdsync_sync_file_wait(int fd, int64_t timeout_ns)
{
	return kfdsync_sync_file_wait_status(fd, timeout_ns, NULL);
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
