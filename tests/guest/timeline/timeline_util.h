/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the CPU timeline tests, written against sw_sync's interface.
 *
 * sw_sync has no uAPI header: tools copy its definitions (the kernel's
 * tools/testing/selftests/sync/sw_sync.h, IGT's lib/sw_sync.c). The block
 * below is such a copy, under sw_sync's own names, and the static asserts
 * prove that kfdsync_timeline.h defines the same ABI: a program written for
 * sw_sync only has to open /dev/kfdsync_timeline instead.
 *
 * Helper pairs follow the house style: __helper() returns -errno.
 */
#ifndef KFDSYNC_TESTS_TIMELINE_UTIL_H
#define KFDSYNC_TESTS_TIMELINE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/ioctl.h>
#include <linux/kfdsync_timeline.h>
#include <linux/sync_file.h>
#include <linux/types.h>

#include "kmod.h"
#include "tap.h"

/* --- sw_sync's definitions, as tools carry them ------------------------ */
struct sw_sync_create_fence_data {
	__u32 value;
	char name[32];
	__s32 fence;
};

struct sw_sync_get_deadline {
	__u64 deadline_ns;
	__u32 pad;
	__s32 fence_fd;
};

#define SW_SYNC_IOC_MAGIC		'W'
#define SW_SYNC_IOC_CREATE_FENCE \
	_IOWR(SW_SYNC_IOC_MAGIC, 0, struct sw_sync_create_fence_data)
#define SW_SYNC_IOC_INC			_IOW(SW_SYNC_IOC_MAGIC, 1, __u32)
#define SW_SYNC_GET_DEADLINE \
	_IOWR(SW_SYNC_IOC_MAGIC, 2, struct sw_sync_get_deadline)
/* ----------------------------------------------------------------------- */

_Static_assert(SW_SYNC_IOC_CREATE_FENCE == KFDSYNC_TL_IOC_CREATE_FENCE,
	       "CREATE_FENCE differs from sw_sync");
_Static_assert(SW_SYNC_IOC_INC == KFDSYNC_TL_IOC_INC, "INC differs");
_Static_assert(SW_SYNC_GET_DEADLINE == KFDSYNC_TL_IOC_GET_DEADLINE,
	       "GET_DEADLINE differs");
_Static_assert(sizeof(struct kfdsync_tl_create_fence) == 40, "size");
_Static_assert(sizeof(struct kfdsync_tl_get_deadline) == 16, "size");

/* 6.4+ uAPI; the build host's headers may be older. */
#ifndef SYNC_IOC_SET_DEADLINE
struct sync_set_deadline {
	__u64 deadline_ns;
	__u64 pad;
};
#define SYNC_IOC_SET_DEADLINE	_IOW(SYNC_IOC_MAGIC, 5, struct sync_set_deadline)
#endif

#define TL_DEV			KFDSYNC_TL_DEVICE
#define DEBUGFS			"/sys/kernel/debug"
#define TL_DEBUGFS		DEBUGFS "/kfdsync/timelines"

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Open a timeline; fd or -errno. */
static inline int __timeline_create(void)
{
	int fd = open(TL_DEV, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* A fence for @value on @tl; sync_file fd or -errno. */
static inline int __fence_create(int tl, const char *name, uint32_t value)
{
	struct sw_sync_create_fence_data data;

	memset(&data, 0, sizeof(data));
	data.value = value;
	snprintf(data.name, sizeof(data.name), "%s", name);
	if (ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &data))
		return -errno;
	return data.fence;
}

static inline int __timeline_inc(int tl, uint32_t inc)
{
	return ioctl(tl, SW_SYNC_IOC_INC, &inc) ? -errno : 0;
}

/* Merge two sync_files; new fd or -errno. */
static inline int __sync_merge(const char *name, int fd1, int fd2)
{
	struct sync_merge_data data;

	memset(&data, 0, sizeof(data));
	snprintf(data.name, sizeof(data.name), "%s", name);
	data.fd2 = fd2;
	if (ioctl(fd1, SYNC_IOC_MERGE, &data))
		return -errno;
	return data.fence;
}

/* 1 signalled, 0 timeout, -errno on error (poll, as libsync's sync_wait). */
static inline int __sync_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		return -errno;
	if (ret && (pfd.revents & (POLLERR | POLLNVAL)))
		return -EINVAL;
	return ret > 0;
}

#define MAX_INFO_FENCES	64

/* SYNC_IOC_FILE_INFO with up to MAX_INFO_FENCES fence infos. */
struct file_info {
	struct sync_file_info info;
	struct sync_fence_info fences[MAX_INFO_FENCES];
};

static inline int __file_info(int fd, struct file_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &fi->info))
		return -errno;
	if (fi->info.num_fences > MAX_INFO_FENCES)
		return -E2BIG;
	fi->info.sync_fence_info = (uintptr_t)fi->fences;
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &fi->info))
		return -errno;
	return 0;
}

/* Fence status: 1 signalled, 0 active, <0 error; -1000 if info fails. */
static inline int fence_status(int fd)
{
	struct file_info fi;

	if (__file_info(fd, &fi))
		return -1000;
	return fi.info.status;
}

/* Number of fences in a sync_file, or -errno. */
static inline int fence_size(int fd)
{
	struct file_info fi;
	int ret = __file_info(fd, &fi);

	return ret ? ret : (int)fi.info.num_fences;
}

/* How many fences of a sync_file have @status (1, 0 or -errno). */
static inline int fence_count_status(int fd, int status)
{
	struct file_info fi;
	unsigned int i;
	int n = 0;

	if (__file_info(fd, &fi))
		return -1;
	for (i = 0; i < fi.info.num_fences; i++)
		n += fi.fences[i].status == status;
	return n;
}

/* For harness_require: without the device, the whole program skips. */
static inline void timeline_require_device(void)
{
	if (access(TL_DEV, F_OK)) {
		printf("TAP version 13\n1..0 # SKIP no %s: %s\n", TL_DEV, strerror(errno));
		exit(0);
	}
}

/* SYNC_IOC_SET_DEADLINE and GET_DEADLINE exist from 6.4 on. */
static inline bool kernel_has_deadline(void)
{
	unsigned int major = 0, minor = 0;
	struct utsname u;

	uname(&u);
	sscanf(u.release, "%u.%u", &major, &minor);
	return major > 6 || (major == 6 && minor >= 4);
}

static inline bool debugfs_ready(void)
{
	if (!access(TL_DEBUGFS, R_OK))
		return true;
	if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL) && errno != EBUSY)
		return false;
	return !access(TL_DEBUGFS, R_OK);
}

/* Header of <debugfs>/kfdsync/timelines: open timelines and live fences. */
static inline int __tl_debugfs_counts(unsigned int *timelines, int *fences)
{
	unsigned int max;
	FILE *f;
	int n;

	f = fopen(TL_DEBUGFS, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "# %u of %u timelines, %d live fences", timelines, &max,
		   fences);
	fclose(f);
	return n == 3 ? 0 : -EPROTO;
}

#endif /* KFDSYNC_TESTS_TIMELINE_UTIL_H */
