// SPDX-License-Identifier: MIT
/*
 * kfdsync_basic: the module skeleton, seen from userspace.
 *
 * How this program works: it opens /dev/kfdsync and checks the device node,
 * the context list in debugfs, KFDSYNC_IOCTL_INFO (answers and refusals),
 * unknown ioctls and the amdkfd hooks. It changes nothing: unloading and
 * reloading amdgpu and kfdsync is kfdsync_reload's. Tests register
 * themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <grp.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include "harness.h"
#include "kfdsync_basic.h"

#define KFDSYNC_SYSFS_DEV	"/sys/class/misc/kfdsync/dev"

static int fd = -1;	/* this process's context */

/* kfdsync's parameter @name as a number; 0 or -errno. */
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

TEST(dev_node)
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

/* Opening /dev/kfdsync gives a context (setup holds one for the tests). */
TEST(ctx_open)
{
	int ctx = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);

	if (!tap_ok(ctx >= 0, "ctx_open"))
		tap_diag("open %s: %s", KFDSYNC_DEV, strerror(errno));
	if (ctx >= 0)
		close(ctx);
}

TEST(ctx_listed)
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

TEST(info)
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

	/* Every ABI's hooks, and ABI 7.1's two more there (or with no verdict). */
	tap_ok(!ret && (info.hooks_supported & ~HOOKS_ALL & ~HOOKS_7_1) == 0 &&
	       (info.hooks_supported & HOOKS_ALL) == HOOKS_ALL &&
	       !(info.hooks & ~info.hooks_supported), "info_hooks_supported (%#x)",
	       info.hooks_supported);

	tap_ok(!ret && !!(info.info_flags & KFDSYNC_INFO_RELAY_FORCED) ==
	       relay_forced() && (!relay_forced() || !info.hooks),
	       "info_relay_forced");
}

TEST(info_invalid)
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

TEST(ioctl_unknown)
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

TEST(hooks_attached)
{
	static const char *const names[] = {
		"hooks_attached_info", "hooks_attached_debugfs",
		"hook_cpu_set_hits",
	};
	uint32_t attached;
	unsigned int i;
	const char *skip = NULL;

	if (access(KFD_DEV, F_OK))
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
	hook_cpu_set_hits(names[2]);
}

static void setup(void)
{
	fd = open(KFDSYNC_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tap_bail("open %s: %s", KFDSYNC_DEV, strerror(errno));
}

int main(int argc, char **argv)
{
	harness_require = require_kfdsync_dev;
	harness_setup = setup;
	return harness_main(argc, argv);
}
