// SPDX-License-Identifier: MIT
/*
 * kfdsync_basic: the module skeleton, seen from userspace.
 *
 * How this program works: it opens /dev/kfdsync and checks the device node,
 * the context list in debugfs, KFDSYNC_IOCTL_INFO (answers and refusals) and
 * the amdkfd hooks. Then, in the guest only (KFDSYNC_KMOD_DIR set, root),
 * it unloads and reloads amdgpu and checks the hooks detach and attach
 * again, unloads and reloads kfdsync itself, and races the two modules'
 * loading and unloading against each other. It leaves both modules loaded,
 * kfdsync with the parameters it had.
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 *
 * Environment (set by tests/vm/run in the guest):
 *   KFDSYNC_KMOD_DIR	directory with kmod/kfdsync.ko, for the reload tests
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ioctl.h>
#include <linux/kfdsync.h>
#include <linux/types.h>

#include "kmod.h"
#include "tap.h"

/*
 * The three amdkfd ioctls this test uses, from <linux/kfd_ioctl.h> (KFD
 * ioctl ABI, unchanged since 4.x). That header includes <drm/drm.h>, which
 * Debian installs only under /usr/include/libdrm, so it is not used here.
 */
struct test_kfd_create_event_args {
	__u64 event_page_offset;
	__u32 event_trigger_data;
	__u32 event_type;
	__u32 auto_reset;
	__u32 node_id;
	__u32 event_id;
	__u32 event_slot_index;
};

struct test_kfd_event_id_args {
	__u32 event_id;
	__u32 pad;
};

#define TEST_KFD_EVENT_SIGNAL		0
#define TEST_KFD_IOC_CREATE_EVENT \
	_IOWR('K', 0x08, struct test_kfd_create_event_args)
#define TEST_KFD_IOC_DESTROY_EVENT \
	_IOW('K', 0x09, struct test_kfd_event_id_args)
#define TEST_KFD_IOC_SET_EVENT \
	_IOW('K', 0x0A, struct test_kfd_event_id_args)

#define KFDSYNC_DEV		"/dev/kfdsync"
#define KFD_DEV			"/dev/kfd"
#define KFDSYNC_SYSFS_DEV	"/sys/class/misc/kfdsync/dev"
#define DEBUGFS			"/sys/kernel/debug"
#define KFDSYNC_DEBUGFS		DEBUGFS "/kfdsync/"

#define HOOKS_ALL		(KFDSYNC_HOOK_GPU_INTERRUPT | KFDSYNC_HOOK_CPU_SET | \
				 KFDSYNC_HOOK_HW_EXCEPTION | KFDSYNC_HOOK_VM_FAULT | \
				 KFDSYNC_HOOK_RESET | KFDSYNC_HOOK_POISON | \
				 KFDSYNC_HOOK_DESTROY | KFDSYNC_HOOK_FREE)
/* Hooks are all or nothing. */
#define HOOKS_EXPECTED		HOOKS_ALL

/* Number of subtests in the plan; main() checks every one was reported. */
#define PLAN			39

/* Hook names in debugfs, in KFDSYNC_HOOK_* bit order. */
static const char *const hook_names[] = {
	"gpu_interrupt", "cpu_set", "hw_exception", "vm_fault", "reset",
	"poison", "destroy", "free",
};
#define NR_HOOKS		(sizeof(hook_names) / sizeof(hook_names[0]))

/* Module parameters, saved at start and given back on every reload. */
static const char *const param_names[] = {
	"hooks", "max_user_contexts", "max_events", "max_fences", "watchdog_ms",
	"watchdog_max_ms",
};
#define NR_PARAMS		(sizeof(param_names) / sizeof(param_names[0]))
static char kfdsync_params[512];

/* Read a small text file into @buf, without a trailing newline; -errno. */
static int __read_param_u32(const char *name, uint32_t *val)
{
	char buf[64];
	int ret;

	ret = kfdsync_param_read(name, buf, sizeof(buf));
	if (ret)
		return ret;
	*val = strtoul(buf, NULL, 0);
	return 0;
}

static bool relay_forced(void)
{
	char buf[8];

	return !read_text(KFDSYNC_PARAMS "hooks", buf, sizeof(buf)) &&
	       buf[0] == 'N';
}

static int __info(int fd, struct kfdsync_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, KFDSYNC_IOCTL_INFO, info) ? -errno : 0;
}

/*
 * Why no hooks are to be expected with amdgpu loaded, or NULL: hooks=N, or
 * a kernel whose amdkfd this kfdsync has not verified (the gate).
 */
static const char *no_hooks_reason(void)
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
			 "amdkfd of %s is not one this kfdsync verified: relay mode",
			 info.release);
	else
		why[0] = '\0';
	close(fd);
	return why[0] ? why : NULL;
}

static bool debugfs_ready(void)
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
static int __hooks_debugfs(uint32_t *attached, unsigned long long *hits)
{
	char line[256], name[64], symbol[128], state[32];
	unsigned long long n;
	unsigned int i, seen = 0;
	FILE *f;

	f = fopen(KFDSYNC_DEBUGFS "hooks", "re");
	if (!f)
		return -errno;
	*attached = 0;
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

static int __amdgpu_load(void)
{
	int status = system("modprobe amdgpu");

	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	return access(KFD_DEV, F_OK) ? -ENODEV : 0;
}

/* The KFDSYNC_INFO_* flags and hooks, from a fresh open; -errno. */
static int __kfdsync_state(uint32_t *hooks, uint32_t *flags)
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

static bool hooks_attached_ok(const char *what)
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
static int __kfd_set_event_once(void)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct test_kfd_create_event_args create = {
			.event_type = TEST_KFD_EVENT_SIGNAL,
			.auto_reset = 1,
		};
		struct test_kfd_event_id_args set = { 0 };
		struct test_kfd_event_id_args destroy = { 0 };
		int kfd;

		kfd = open(KFD_DEV, O_RDWR | O_CLOEXEC);
		if (kfd < 0)
			_exit(1);
		if (ioctl(kfd, TEST_KFD_IOC_CREATE_EVENT, &create))
			_exit(2);
		set.event_id = create.event_id;
		destroy.event_id = create.event_id;
		if (ioctl(kfd, TEST_KFD_IOC_SET_EVENT, &set))
			_exit(3);
		if (ioctl(kfd, TEST_KFD_IOC_DESTROY_EVENT, &destroy))
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
static void test_hook_cpu_set_hits(const char *name)
{
	unsigned long long before[NR_HOOKS], after[NR_HOOKS];
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

static void test_dev_node(void)
{
	char buf[64], path[256];
	unsigned int maj, min;
	struct stat st;
	bool udev, ok;
	gid_t gid = 0;
	mode_t mode = 0600;
	struct group *gr;
	unsigned int i;
	static const char *const rule_dirs[] = {
		"/etc/udev/rules.d", "/usr/lib/udev/rules.d",
		"/lib/udev/rules.d",
	};

	ok = !stat(KFDSYNC_DEV, &st) && S_ISCHR(st.st_mode) &&
	     !read_text(KFDSYNC_SYSFS_DEV, buf, sizeof(buf)) &&
	     sscanf(buf, "%u:%u", &maj, &min) == 2 &&
	     major(st.st_rdev) == maj && minor(st.st_rdev) == min;
	tap_ok(ok, "dev_node_exists");

	/*
	 * Without udev (the guest) the node keeps the kernel default, like
	 * /dev/kfd; with udev and our rule installed it is a render node.
	 */
	udev = !access("/run/udev/control", F_OK);
	for (i = 0; udev && i < sizeof(rule_dirs) / sizeof(rule_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/60-kfdsync.rules",
			 rule_dirs[i]);
		if (!access(path, F_OK))
			break;
	}
	if (udev && i < sizeof(rule_dirs) / sizeof(rule_dirs[0])) {
		gr = getgrnam("render");
		mode = 0660;
		gid = gr ? gr->gr_gid : (gid_t)-1;
	}
	tap_diag("udev rule %s: expect mode %o gid %d, have %o gid %d",
		 mode == 0660 ? "applied" : "not applied", mode, (int)gid,
		 ok ? st.st_mode & 07777 : 0, ok ? (int)st.st_gid : -1);
	tap_ok(ok && (st.st_mode & 07777) == mode && st.st_gid == gid,
	       "dev_node_mode");
}

static void test_ctx_listed(void)
{
	char line[256];
	unsigned long long id;
	bool found = false;
	FILE *f;
	int tgid;

	if (!debugfs_ready()) {
		tap_skip("debugfs not available", "ctx_listed_debugfs");
		return;
	}
	f = fopen(KFDSYNC_DEBUGFS "contexts", "re");
	while (f && fgets(line, sizeof(line), f))
		if (line[0] != '#' &&
		    sscanf(line, "%llu %d", &id, &tgid) == 2 &&
		    tgid == getpid())
			found = true;
	if (f)
		fclose(f);
	tap_ok(found, "ctx_listed_debugfs");
}

static void test_info(int fd)
{
	struct kfdsync_info info;
	struct utsname uts;
	unsigned int maj = 0, min = 0;
	uint32_t p[NR_PARAMS] = { 0 };
	unsigned int i;
	int ret;

	ret = __info(fd, &info);
	if (ret)
		tap_diag("INFO: %s", strerror(-ret));
	tap_ok(!ret && info.abi_version == KFDSYNC_ABI_VERSION,
	       "info_abi_version");

	uname(&uts);
	tap_diag("release \"%.*s\", uname \"%s\"", KFDSYNC_RELEASE_LEN,
		 info.release, uts.release);
	tap_ok(!ret && memchr(info.release, '\0', sizeof(info.release)) &&
	       !strcmp(info.release, uts.release), "info_release");

	sscanf(uts.release, "%u.%u", &maj, &min);
	tap_ok(!ret && info.kernel_version >> 16 == maj &&
	       ((info.kernel_version >> 8) & 0xff) == min,
	       "info_kernel_version");

	/* Limits are the module parameters (watchdog_ms capped). */
	for (i = 1; i < NR_PARAMS; i++)
		if (__read_param_u32(param_names[i], &p[i]))
			tap_diag("cannot read parameter %s", param_names[i]);
	if (p[4] > p[5])
		p[4] = p[5];
	tap_diag("limits: contexts %u events %u fences %u watchdog %u/%u ms",
		 info.max_contexts, info.max_events, info.max_fences,
		 info.watchdog_ms, info.watchdog_max_ms);
	tap_ok(!ret && info.max_contexts == p[1] && info.max_events == p[2] &&
	       info.max_fences == p[3] && info.watchdog_ms == p[4] &&
	       info.watchdog_max_ms == p[5] && info.max_contexts,
	       "info_limits");

	tap_ok(!ret && info.hooks_supported == HOOKS_ALL &&
	       !(info.hooks & ~info.hooks_supported), "info_hooks_supported");

	tap_ok(!ret && !!(info.info_flags & KFDSYNC_INFO_RELAY_FORCED) ==
	       relay_forced() && (!relay_forced() || !info.hooks),
	       "info_relay_forced");
}

static void test_info_invalid(int fd)
{
	static const struct {
		const char *name;
		uint32_t flags;
		uint32_t pad;
	} cases[] = {
		{ "info_invalid_flags_bit0", 1U, 0 },
		{ "info_invalid_flags_bit31", 1U << 31, 0 },
		{ "info_invalid_pad", 0, 1U },
		{ "info_invalid_pad_all", 0, ~0U },
	};
	struct kfdsync_info info;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&info, 0, sizeof(info));
		info.flags = cases[i].flags;
		info.pad = cases[i].pad;
		tap_errno(ioctl(fd, KFDSYNC_IOCTL_INFO, &info), EINVAL, "%s",
			  cases[i].name);
	}
	tap_errno(ioctl(fd, KFDSYNC_IOCTL_INFO, NULL), EFAULT,
		  "info_bad_pointer");
}

static void test_ioctl_unknown(int fd)
{
	static const struct {
		const char *name;
		unsigned long request;
	} cases[] = {
		{ "ioctl_unknown_type",
		  _IOWR('K', 0x00, struct kfdsync_info) },
		{ "ioctl_unknown_nr",
		  _IOWR(KFDSYNC_IOCTL_BASE, 0x3f, struct kfdsync_info) },
		{ "ioctl_unknown_size_small",
		  _IOC(_IOC_READ | _IOC_WRITE, KFDSYNC_IOCTL_BASE, 0x00,
		       sizeof(struct kfdsync_info) - 8) },
		{ "ioctl_unknown_size_large",
		  _IOC(_IOC_READ | _IOC_WRITE, KFDSYNC_IOCTL_BASE, 0x00,
		       sizeof(struct kfdsync_info) + 8) },
		{ "ioctl_unknown_dir_read",
		  _IOR(KFDSYNC_IOCTL_BASE, 0x00, struct kfdsync_info) },
		{ "ioctl_unknown_dir_none", _IO(KFDSYNC_IOCTL_BASE, 0x00) },
	};
	/* Big enough for every request: only ENOTTY may come back. */
	char buf[sizeof(struct kfdsync_info) + 64] = { 0 };
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		tap_errno(ioctl(fd, cases[i].request, buf), ENOTTY, "%s",
			  cases[i].name);
}

static void test_hooks_attached(bool have_kfd)
{
	static const char *const names[] = {
		"hooks_attached_info", "hooks_attached_debugfs",
		"hook_cpu_set_hits",
	};
	uint32_t attached;
	unsigned int i;
	const char *skip = NULL;

	if (!have_kfd)
		skip = "no /dev/kfd (amdgpu not loaded)";
	else
		skip = no_hooks_reason();
	if (skip) {
		for (i = 0; i < 3; i++)
			tap_skip(skip, "%s", names[i]);
		return;
	}

	tap_ok(hooks_attached_ok(names[0]), "%s", names[0]);
	if (debugfs_ready())
		tap_ok(!__hooks_debugfs(&attached, NULL) &&
		       (attached & HOOKS_EXPECTED) == HOOKS_EXPECTED, "%s",
		       names[1]);
	else
		tap_skip("debugfs not available", "%s", names[1]);
	test_hook_cpu_set_hits(names[2]);
}

/*
 * Parameter bounds are enforced, and max_contexts limits open(): with our
 * context open and max_contexts=1, the next open fails. 3 subtests.
 */
static void test_params(const char *skip)
{
	static const struct {
		const char *name;
		const char *param;
		const char *val;
	} out_of_range[] = {
		{ "param_range_low", "max_contexts", "0" },
		{ "param_range_high", "watchdog_ms", "3600001" },
	};
	char saved[64];
	unsigned int i;
	int ret, fd;

	if (skip) {
		for (i = 0; i < 2; i++)
			tap_skip(skip, "%s", out_of_range[i].name);
		tap_skip(skip, "ctx_open_limit");
		return;
	}

	for (i = 0; i < 2; i++) {
		ret = kfdsync_param_write(out_of_range[i].param, out_of_range[i].val);
		if (ret != -ERANGE)
			tap_diag("%s=%s: %s", out_of_range[i].param,
				 out_of_range[i].val, strerror(-ret));
		tap_ok(ret == -ERANGE, "%s", out_of_range[i].name);
	}

	ret = read_text(KFDSYNC_PARAMS "max_contexts", saved, sizeof(saved));
	if (!ret)
		ret = kfdsync_param_write("max_contexts", "1");
	if (ret) {
		tap_diag("max_contexts: %s", strerror(-ret));
		tap_ok(false, "ctx_open_limit");
		return;
	}
	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	tap_ok(fd < 0 && errno == ENFILE, "ctx_open_limit");
	if (fd >= 0)
		close(fd);
	if (kfdsync_param_write("max_contexts", saved))
		tap_bail("cannot restore max_contexts=%s", saved);
}

/* rmmod amdgpu: hooks go; modprobe amdgpu: they come back. 6 subtests. */
static void test_amdgpu_cycle(const char *skip)
{
	static const char *const names[] = {
		"amdgpu_unload", "hooks_detached_info",
		"hooks_detached_debugfs", "amdgpu_reload",
		"hooks_reattached_info", "hook_cpu_set_hits_reattached",
	};
	uint32_t hooks = ~0U, flags = ~0U, attached = ~0U;
	unsigned int i;
	int ret;

	if (skip) {
		for (i = 0; i < 6; i++)
			tap_skip(skip, "%s", names[i]);
		return;
	}

	ret = kmod_unload("amdgpu", 100);
	if (!tap_ok(!ret, "%s", names[0])) {
		tap_diag("rmmod amdgpu: %s", strerror(-ret));
		for (i = 1; i < 6; i++)
			tap_skip("amdgpu still loaded", "%s", names[i]);
		return;
	}

	ret = __kfdsync_state(&hooks, &flags);
	tap_diag("after rmmod amdgpu: hooks %#x flags %#x", hooks, flags);
	tap_ok(!ret && !hooks && !(flags & KFDSYNC_INFO_AMDKFD_PRESENT),
	       "%s", names[1]);
	if (debugfs_ready())
		tap_ok(!__hooks_debugfs(&attached, NULL) && !attached, "%s",
		       names[2]);
	else
		tap_skip("debugfs not available", "%s", names[2]);

	ret = __amdgpu_load();
	if (!tap_ok(!ret, "%s", names[3])) {
		tap_diag("modprobe amdgpu: %s", strerror(-ret));
		tap_skip("amdgpu not loaded", "%s", names[4]);
		tap_skip("amdgpu not loaded", "%s", names[5]);
		return;
	}
	tap_ok(hooks_attached_ok(names[4]), "%s", names[4]);
	test_hook_cpu_set_hits(names[5]);
}

/* rmmod kfdsync: refused while a file is open; then unload, reload. */
static void test_kmod_cycle(int *fd, const char *skip)
{
	static const char *const names[] = {
		"kmod_unload_busy", "kmod_unload", "kmod_reload",
		"kmod_reload_info",
	};
	struct kfdsync_info info;
	unsigned int i;
	int ret;

	if (skip) {
		for (i = 0; i < 4; i++)
			tap_skip(skip, "%s", names[i]);
		return;
	}

	/* The open file pins the module through its fops owner. */
	ret = kmod_unload("kfdsync", 1);
	if (ret)
		tap_diag("rmmod with a file open: %s", strerror(-ret));
	tap_ok(ret == -EWOULDBLOCK, "%s", names[0]);

	close(*fd);
	*fd = -1;
	ret = kmod_unload("kfdsync", 100);
	if (ret)
		tap_diag("rmmod kfdsync: %s", strerror(-ret));
	tap_ok(!ret && access(KFDSYNC_DEV, F_OK) && errno == ENOENT, "%s",
	       names[1]);

	ret = kmod_load_project("kmod/kfdsync.ko", kfdsync_params);
	if (ret && ret != -EEXIST)
		tap_diag("insmod kfdsync.ko %s: %s", kfdsync_params,
			 strerror(-ret));
	tap_ok(!ret && !access(KFDSYNC_DEV, F_OK), "%s", names[2]);

	*fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	ret = *fd < 0 ? -errno : __info(*fd, &info);
	tap_ok(!ret && info.abi_version == KFDSYNC_ABI_VERSION &&
	       (access(KFD_DEV, F_OK) || no_hooks_reason() ||
		(info.hooks & HOOKS_EXPECTED) == HOOKS_EXPECTED), "%s",
	       names[3]);
}

/* Wait up to @ms for amdgpu to be loading: its sysfs directory exists. */
static void wait_amdgpu_sysfs(unsigned int ms)
{
	for (; ms && access("/sys/module/amdgpu", F_OK); ms -= 10)
		msleep(10);
}

/*
 * Load kfdsync while amdgpu is loading, at several offsets, and unload it
 * while amdgpu unloads and loads again: the hooks must end up attached, and
 * the kernel log clean (the runner checks it). Needs no open kfdsync file.
 */
static void test_hooks_race(const char *skip)
{
	static const struct {
		unsigned int amdgpu_delay_ms;
		unsigned int kfdsync_delay_ms;
		bool during_amdgpu_init;
	} offsets[] = {
		/* kfdsync first, amdgpu's LIVE notification attaches */
		{ 0, 0, false },
		/* kfdsync while amdgpu's init runs: both paths attach */
		{ 0, 0, true },
		{ 0, 2000, false },
		{ 500, 0, false },
	};
	unsigned int i, nr = sizeof(offsets) / sizeof(offsets[0]);
	int ret, status = 0;
	pid_t pid;
	bool ok;

	if (skip) {
		tap_skip(skip, "hooks_race_init");
		tap_skip(skip, "hooks_race_exit");
		return;
	}

	ok = true;
	for (i = 0; ok && i < nr; i++) {
		ret = kmod_unload("kfdsync", 100);
		if (!ret)
			ret = kmod_unload("amdgpu", 100);
		if (ret) {
			tap_diag("race_init %u: unload: %s", i, strerror(-ret));
			ok = false;
			break;
		}
		pid = fork();
		if (pid == 0) {
			msleep(offsets[i].amdgpu_delay_ms);
			_exit(__amdgpu_load() ? 1 : 0);
		}
		msleep(offsets[i].kfdsync_delay_ms);
		if (offsets[i].during_amdgpu_init)
			wait_amdgpu_sysfs(30000);
		ret = kmod_load_project("kmod/kfdsync.ko", kfdsync_params);
		if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status) || ret) {
			tap_diag("race_init %u: load failed (kfdsync %s)", i,
				 strerror(-ret));
			ok = false;
			break;
		}
		ok = hooks_attached_ok("race_init");
	}
	tap_ok(ok, "hooks_race_init");

	for (i = 0; ok && i < nr; i++) {
		pid = fork();
		if (pid == 0) {
			msleep(offsets[i].amdgpu_delay_ms);
			if (kmod_unload("amdgpu", 100))
				_exit(1);
			_exit(__amdgpu_load() ? 2 : 0);
		}
		msleep(offsets[i].kfdsync_delay_ms);
		ret = kmod_unload("kfdsync", 100);
		if (!ret)
			ret = kmod_load_project("kmod/kfdsync.ko", kfdsync_params);
		if (pid < 0 || waitpid(pid, &status, 0) < 0 ||
		    !WIFEXITED(status) || WEXITSTATUS(status) || ret) {
			tap_diag("race_exit %u: failed (kfdsync %s, amdgpu %d)",
				 i, strerror(-ret),
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			ok = false;
			break;
		}
		ok = hooks_attached_ok("race_exit");
	}
	tap_ok(ok, "hooks_race_exit");
}

/* Remember the parameters kfdsync was loaded with, for the reloads. */
static void save_params(void)
{
	char buf[64], path[256];
	size_t len = 0;
	unsigned int i;

	for (i = 0; i < NR_PARAMS; i++) {
		snprintf(path, sizeof(path), KFDSYNC_PARAMS "%s",
			 param_names[i]);
		if (read_text(path, buf, sizeof(buf)))
			continue;
		len += snprintf(kfdsync_params + len,
				sizeof(kfdsync_params) - len, "%s%s=%s",
				len ? " " : "", param_names[i], buf);
	}
	tap_diag("kfdsync parameters: %s", kfdsync_params);
}

int main(void)
{
	const char *skip_destructive = NULL, *skip_amdgpu = NULL;
	const char *dir = getenv("KFDSYNC_KMOD_DIR");
	char ko[4096];
	bool have_kfd;
	int fd;

	tap_plan(PLAN);

	if (access(KFDSYNC_DEV, F_OK))
		tap_bail("%s missing: is kfdsync.ko loaded?", KFDSYNC_DEV);

	test_dev_node();

	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	if (!tap_ok(fd >= 0, "ctx_open"))
		tap_bail("open %s: %s", KFDSYNC_DEV, strerror(errno));

	test_ctx_listed();
	test_info(fd);
	test_info_invalid(fd);
	test_ioctl_unknown(fd);

	have_kfd = !access(KFD_DEV, F_OK);
	test_hooks_attached(have_kfd);

	save_params();
	snprintf(ko, sizeof(ko), "%s/kmod/kfdsync.ko", dir ? dir : "");
	if (!dir)
		skip_destructive = "KFDSYNC_KMOD_DIR not set (not in the guest)";
	else if (geteuid())
		skip_destructive = "not root";
	else if (access(ko, R_OK))
		skip_destructive = "kfdsync.ko not found in KFDSYNC_KMOD_DIR";

	skip_amdgpu = skip_destructive;
	if (!skip_amdgpu && !have_kfd)
		skip_amdgpu = "no /dev/kfd (amdgpu not loaded)";
	else if (!skip_amdgpu)
		skip_amdgpu = no_hooks_reason();

	test_params(skip_destructive);
	test_amdgpu_cycle(skip_amdgpu);
	test_kmod_cycle(&fd, skip_destructive);
	if (fd >= 0)
		close(fd);
	test_hooks_race(skip_amdgpu);

	if (tap_count != PLAN)
		tap_bail("reported %u subtests, planned %u", tap_count, PLAN);
	return tap_exit();
}
