/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by kfdsync's guest tests that drive the GPU simulator.
 * Include after sim_test.h. Naming as in the house style: helper() bails out
 * of the test on failure.
 */
#ifndef KFDSYNC_TESTS_KFDSYNC_TEST_H
#define KFDSYNC_TESTS_KFDSYNC_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include <linux/kfdsync.h>

#include "kmod.h"

#define KFDSYNC_DEV		"/dev/kfdsync"

/* kfdsync's integer parameter @name, or -1 if it cannot be read. */
static inline int param_read(const char *name)
{
	char buf[32];

	return kfdsync_param_read(name, buf, sizeof(buf)) ? -1 : atoi(buf);
}

static inline bool param_write(const char *name, int val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d\n", val);
	return !kfdsync_param_write(name, buf);
}

static inline int open_kfdsync(void)
{
	int fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		tap_bail("open %s: %s", KFDSYNC_DEV, strerror(errno));
	return fd;
}

/* For harness_require: outside the guest, or without kfdsync, skip. */
static inline void require_kfdsync_guest(void)
{
	scrub_hsa_env();
	require_sim_guest();
	if (access(KFDSYNC_DEV, F_OK)) {
		printf("TAP version 13\n1..0 # SKIP no %s (kfdsync not loaded)\n", KFDSYNC_DEV);
		exit(0);
	}
}

/* A context, and in *@relay whether kfdsync is in forced relay mode. */
static inline int open_kfdsync_mode(bool *relay)
{
	struct kfdsync_info info = { 0 };
	int fd = open_kfdsync();

	if (ioctl(fd, KFDSYNC_IOCTL_INFO, &info))
		tap_bail("INFO: %s", strerror(errno));
	/* Forced (hooks=0), or the gate's (an amdkfd ABI not implemented). */
	*relay = info.hooks != info.hooks_supported;
	tap_diag("mode %s, hooks %#x", !*relay ? "hooks" :
		 info.info_flags & KFDSYNC_INFO_RELAY_FORCED ? "relay (hooks=0)" : "relay",
		 info.hooks);
	return fd;
}

/* A new auto-reset signal event of this process. */
static inline HsaEvent *new_event(void)
{
	HsaEvent *ev = create_event(HSA_EVENTTYPE_SIGNAL, false);

	if (!ev)
		tap_bail("hsaKmtCreateEvent failed");
	return ev;
}

#endif /* KFDSYNC_TESTS_KFDSYNC_TEST_H */
