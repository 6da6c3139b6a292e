/* SPDX-License-Identifier: MIT */
/*
 * The set-up of the kfdsync_import programs: sync_files imported into
 * memory values and KFD events (KFDSYNC_IOCTL_IMPORT_SYNC_FILE, libkfdsync's
 * kfdsync_import_*), in hooks mode and, through their _relay launchers,
 * in relay mode (kfdsync loaded with hooks=0).
 *
 * Include after sim_test.h. Naming as in the house style: __x() returns
 * -errno, x() bails out.
 */
#ifndef KFDSYNC_TESTS_KFDSYNC_IMPORT_H
#define KFDSYNC_TESTS_KFDSYNC_IMPORT_H

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>

#include <linux/kfdsync.h>
#include <linux/sync_file.h>

#include <kfdsync.h>

#include "harness.h"
#include "kfdsync_test.h"

static int kfdsync = -1;
static bool relay_mode;

static inline int __import(int fd, struct kfdsync_import *a)
{
	return ioctl(fd, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, a) ? -errno : 0;
}

/* The single fence of a sync_file: status and timestamp. */
static inline struct sync_fence_info fence_info(int fd)
{
	struct sync_fence_info fi;
	struct sync_file_info info = { .num_fences = 1,
				       .sync_fence_info = (uintptr_t)&fi };

	memset(&fi, 0, sizeof(fi));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		tap_bail("SYNC_IOC_FILE_INFO: %s", strerror(errno));
	return fi;
}

static inline bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1;
}

/* Wait until *@word == @want; false after WAIT_MS. */
static inline bool wait_word(volatile uint64_t *word, uint64_t want)
{
	int64_t end = kfdsim_now_ns() + (int64_t)WAIT_MS * 1000000;

	while (*word != want) {
		if (kfdsim_now_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static inline struct kfdsync_timeline *timeline_new(void)
{
	struct kfdsync_timeline *tl;
	int ret = kfdsync_timeline_new(&tl);

	if (ret)
		tap_bail("kfdsync_timeline_new: %s", strerror(-ret));
	return tl;
}

static inline int timeline_fence(struct kfdsync_timeline *tl, uint32_t value)
{
	int fd = kfdsync_timeline_create_fence(tl, value, "import-test");

	if (fd < 0)
		tap_bail("kfdsync_timeline_create_fence: %s", strerror(-fd));
	return fd;
}

static inline void ev_destroy(HsaEvent *ev)
{
	struct kfdsync_event_unregister a = { .event_id = ev->EventId };

	/* Not registered is fine; amdkfd reuses the id afterwards. */
	ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &a);
	hsaKmtDestroyEvent(ev);
}

/* /dev/kfd and a context; relay_mode. */
static inline void import_setup(void)
{
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD failed");
	kfdsync = open_kfdsync_mode(&relay_mode);
}

static inline void import_teardown(void)
{
	close(kfdsync);
	hsaKmtCloseKFD();
}

/* The main() of the import programs. */
static inline int import_main(int argc, char **argv, void (*setup)(void), void (*teardown)(void))
{
	harness_require = require_kfdsync_guest;
	harness_setup = setup;
	harness_teardown = teardown;
	return harness_main(argc, argv);
}

#endif /* KFDSYNC_TESTS_KFDSYNC_IMPORT_H */
