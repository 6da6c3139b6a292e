// SPDX-License-Identifier: MIT
/*
 * kfdsync_reload: kfdsync and amdgpu loaded, unloaded and raced.
 *
 * How this program works: in the guest only (KFDSYNC_KMOD_DIR set, root),
 * with a context of its own open, it checks the module parameters' bounds
 * and max_contexts, unloads and reloads amdgpu and checks the hooks detach
 * and attach again, unloads and reloads kfdsync itself (refused while a
 * file is open), and races the two modules' loading and unloading against
 * each other. It leaves both modules loaded, kfdsync with the parameters it
 * had. Tests register themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 *
 * Environment (set by tests/vm/run in the guest):
 *   KFDSYNC_KMOD_DIR	directory with kmod/kfdsync.ko, for the reload tests
 */

#include <time.h>

#include "harness.h"
#include "kfdsync_basic.h"

static int fd = -1;	/* this process's context, until kmod_cycle */

/* Module parameters, saved at start and given back on every reload. */
static char kfdsync_params[512];

/* Why the tests that unload modules cannot run here, or NULL. */
static const char *skip_destructive, *skip_amdgpu;

/*
 * Parameter bounds are enforced, and max_contexts limits open(): with our
 * context open and max_contexts=1, the next open fails. 3 subtests.
 */
TEST(params)
{
	const char *skip = skip_destructive;
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
		tap_skip(skip, "ctx_open_limit_spares_cap_sys_admin");
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
		tap_ok(false, "ctx_open_limit_spares_cap_sys_admin");
		return;
	}
	/* The system-wide limit spares CAP_SYS_ADMIN: open without it. */
	ret = open_without_cap_sys_admin(KFDSYNC_DEV);
	tap_ok(ret == -ENFILE, "ctx_open_limit (%s)", strerror(-ret));
	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	tap_ok(fd >= 0, "ctx_open_limit_spares_cap_sys_admin");
	if (fd >= 0)
		close(fd);
	if (kfdsync_param_write("max_contexts", saved))
		tap_bail("cannot restore max_contexts=%s", saved);
}

/* rmmod amdgpu: hooks go; modprobe amdgpu: they come back. 6 subtests. */
TEST(amdgpu_cycle)
{
	const char *skip = skip_amdgpu;
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
	hook_cpu_set_hits(names[5]);
}

/* rmmod kfdsync: refused while a file is open; then unload, reload. */
TEST(kmod_cycle)
{
	const char *skip = skip_destructive;
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

	close(fd);
	fd = -1;
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

	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	ret = fd < 0 ? -errno : __info(fd, &info);
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
TEST(hooks_race)
{
	const char *skip = skip_amdgpu;
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

	if (fd >= 0)
		close(fd);
	fd = -1;
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

static void setup(void)
{
	const char *dir = getenv("KFDSYNC_KMOD_DIR");
	char ko[4096];

	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tap_bail("open %s: %s", KFDSYNC_DEV, strerror(errno));
	save_params();
	snprintf(ko, sizeof(ko), "%s/kmod/kfdsync.ko", dir ? dir : "");
	if (!dir)
		skip_destructive = "KFDSYNC_KMOD_DIR not set (not in the guest)";
	else if (geteuid())
		skip_destructive = "not root";
	else if (access(ko, R_OK))
		skip_destructive = "kfdsync.ko not found in KFDSYNC_KMOD_DIR";

	skip_amdgpu = skip_destructive;
	if (!skip_amdgpu && access(KFD_DEV, F_OK))
		skip_amdgpu = "no /dev/kfd (amdgpu not loaded)";
	else if (!skip_amdgpu)
		skip_amdgpu = no_hooks_reason();
}

int main(int argc, char **argv)
{
	harness_require = require_kfdsync_dev;
	harness_setup = setup;
	return harness_main(argc, argv);
}
