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

#define KFDSYNC_DEV		"/dev/kfdsync"
#define KFDSYNC_PARAMS		"/sys/module/kfdsync/parameters/"

static inline int param_read(const char *name)
{
	char path[256];
	int val = -1;
	FILE *f;

	snprintf(path, sizeof(path), KFDSYNC_PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

static inline bool param_write(const char *name, int val)
{
	char path[256];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), KFDSYNC_PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return false;
	ok = fprintf(f, "%d\n", val) > 0;
	return !fclose(f) && ok;
}

static inline int open_kfdsync(void)
{
	int fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		tap_bail("open %s: %s", KFDSYNC_DEV, strerror(errno));
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
