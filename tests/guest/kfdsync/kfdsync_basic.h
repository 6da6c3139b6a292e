/* SPDX-License-Identifier: MIT */
/*
 * Helpers of kfdsync_basic and kfdsync_reload: KFDSYNC_IOCTL_INFO, the
 * module's parameters, and its amdkfd hooks as INFO and debugfs show them.
 * Naming as in the house style: __helper() returns -errno.
 */
#ifndef KFDSYNC_TESTS_KFDSYNC_BASIC_H
#define KFDSYNC_TESTS_KFDSYNC_BASIC_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kfdsync.h>

#include "kfd_raw.h"
#include "kmod.h"
#include "tap.h"

#define KFDSYNC_DEV		"/dev/kfdsync"
#define KFD_DEV			"/dev/kfd"
#define DEBUGFS			"/sys/kernel/debug"
#define KFDSYNC_DEBUGFS		DEBUGFS "/kfdsync/"

#define HOOKS_ALL		(KFDSYNC_HOOK_GPU_INTERRUPT | KFDSYNC_HOOK_CPU_SET | \
				 KFDSYNC_HOOK_HW_EXCEPTION | KFDSYNC_HOOK_VM_FAULT | \
				 KFDSYNC_HOOK_RESET | KFDSYNC_HOOK_POISON | \
				 KFDSYNC_HOOK_DESTROY | KFDSYNC_HOOK_FREE)
/* The hooks only ABI 7.1 has. */
#define HOOKS_7_1		(KFDSYNC_HOOK_UNWRITTEN | KFDSYNC_HOOK_TERMINATE)
/* Hooks are all or nothing. */
#define HOOKS_EXPECTED		HOOKS_ALL

/* Hook names in debugfs, in KFDSYNC_HOOK_* bit order. */
static const char *const hook_names[] = {
	"gpu_interrupt", "cpu_set", "hw_exception", "vm_fault", "reset",
	"poison", "destroy", "free",
};
#define NR_HOOKS		(sizeof(hook_names) / sizeof(hook_names[0]))

/* Module parameters: INFO reports them; reloads give them back. */
static const char *const param_names[] = {
	"hooks", "max_user_contexts", "max_events", "max_fences", "watchdog_ms",
	"watchdog_max_ms",
};
#define NR_PARAMS		(sizeof(param_names) / sizeof(param_names[0]))

static inline bool relay_forced(void)
{
	char buf[8];

	return !read_text(KFDSYNC_PARAMS "hooks", buf, sizeof(buf)) &&
	       buf[0] == 'N';
}

static inline int __info(int fd, struct kfdsync_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, KFDSYNC_IOCTL_INFO, info) ? -errno : 0;
}

/*
 * Why no hooks are to be expected with amdgpu loaded, or NULL: hooks=N, or
 * an amdgpu whose amdkfd ABI (BTF) kfdsync does not implement (the gate).
 */
static inline const char *no_hooks_reason(void)
{
	static char why[160];
	struct kfdsync_info info;
	int fd;

	if (relay_forced())
		return "relay mode forced (hooks=N)";
	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!__info(fd, &info) && (info.info_flags & KFDSYNC_INFO_AMDKFD_UNVERIFIED))
		snprintf(why, sizeof(why),
			 "amdkfd of %s has no ABI this kfdsync implements: relay mode",
			 info.release);
	else
		why[0] = '\0';
	close(fd);
	return why[0] ? why : NULL;
}

static inline bool debugfs_ready(void)
{
	if (!access(KFDSYNC_DEBUGFS "hooks", R_OK))
		return true;
	if (mount("debugfs", DEBUGFS, "debugfs", 0, NULL) && errno != EBUSY)
		return false;
	return !access(KFDSYNC_DEBUGFS "hooks", R_OK);
}

/*
 * Read <debugfs>/kfdsync/hooks into @attached (bit per hook) and @hits
 * (per hook, in hook_names order). Returns 0 or -errno.
 */
static inline int __hooks_debugfs(uint32_t *attached, unsigned long long *hits)
{
	char line[256], name[64], symbol[128], state[32];
	unsigned long long n;
	unsigned int i, seen = 0;
	FILE *f;

	*attached = 0;
	f = fopen(KFDSYNC_DEBUGFS "hooks", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%63s %127s %31s %llu", name, symbol, state,
			   &n) != 4)
			continue;
		for (i = 0; i < NR_HOOKS; i++) {
			if (strcmp(name, hook_names[i]))
				continue;
			seen |= 1U << i;
			if (!strcmp(state, "attached"))
				*attached |= 1U << i;
			if (hits)
				hits[i] = n;
		}
	}
	fclose(f);
	return seen == HOOKS_ALL ? 0 : -ENOENT;
}

static inline int __amdgpu_load(void)
{
	int status = system("modprobe amdgpu");

	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	return access(KFD_DEV, F_OK) ? -ENODEV : 0;
}

/* The KFDSYNC_INFO_* flags and hooks, from a fresh open; -errno. */
static inline int __kfdsync_state(uint32_t *hooks, uint32_t *flags)
{
	struct kfdsync_info info;
	int fd, ret;

	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = __info(fd, &info);
	close(fd);
	if (ret)
		return ret;
	*hooks = info.hooks;
	*flags = info.info_flags;
	return 0;
}

static inline bool hooks_attached_ok(const char *what)
{
	uint32_t hooks = 0, flags = 0;
	int ret;

	ret = __kfdsync_state(&hooks, &flags);
	if (ret) {
		tap_diag("%s: INFO failed: %s", what, strerror(-ret));
		return false;
	}
	if ((hooks & HOOKS_EXPECTED) != HOOKS_EXPECTED ||
	    !(flags & KFDSYNC_INFO_AMDKFD_PRESENT)) {
		tap_diag("%s: hooks %#x flags %#x", what, hooks, flags);
		return false;
	}
	return true;
}

/*
 * Make amdkfd run kfd_set_event() once: in a child (so that this process's
 * mm never becomes a KFD process), create a signal event, set it, destroy
 * it. Returns 0 or -errno.
 */
static inline int __kfd_set_event_once(void)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct kfd_raw_create_event_args create = {
			.event_type = KFD_RAW_EVENT_SIGNAL,
			.auto_reset = 1,
		};
		struct kfd_raw_event_id_args set = { 0 };
		struct kfd_raw_event_id_args destroy = { 0 };
		int kfd;

		kfd = open(KFD_DEV, O_RDWR | O_CLOEXEC);
		if (kfd < 0)
			_exit(1);
		if (ioctl(kfd, KFD_RAW_IOC_CREATE_EVENT, &create))
			_exit(2);
		set.event_id = create.event_id;
		destroy.event_id = create.event_id;
		if (ioctl(kfd, KFD_RAW_IOC_SET_EVENT, &set))
			_exit(3);
		if (ioctl(kfd, KFD_RAW_IOC_DESTROY_EVENT, &destroy))
			_exit(4);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tap_diag("kfd child failed at step %d",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -EIO;
	}
	return 0;
}

/* cpu_set hook hits go up when amdkfd sets an event. */
static inline void hook_cpu_set_hits(const char *name)
{
	unsigned long long before[NR_HOOKS] = { 0 }, after[NR_HOOKS] = { 0 };
	uint32_t attached;
	int ret;

	if (!debugfs_ready()) {
		tap_skip("debugfs not available", "%s", name);
		return;
	}
	ret = __hooks_debugfs(&attached, before);
	if (!ret)
		ret = __kfd_set_event_once();
	if (!ret)
		ret = __hooks_debugfs(&attached, after);
	if (ret)
		tap_diag("%s: %s", name, strerror(-ret));
	else
		tap_diag("cpu_set hits %llu -> %llu", before[1], after[1]);
	tap_ok(!ret && after[1] > before[1], "%s", name);
}

/* For harness_require: without /dev/kfdsync, the program bails out. */
static inline void require_kfdsync_dev(void)
{
	if (access(KFDSYNC_DEV, F_OK)) {
		printf("TAP version 13\n1..1\n");
		tap_bail("%s missing: is kfdsync.ko loaded?", KFDSYNC_DEV);
	}
}

#endif /* KFDSYNC_TESTS_KFDSYNC_BASIC_H */
