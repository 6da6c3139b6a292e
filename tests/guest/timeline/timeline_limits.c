// SPDX-License-Identifier: MIT
/*
 * timeline_limits: what /dev/kfdsync_timeline adds to sw_sync.
 *
 * How this program works: it checks every documented errno of the timeline
 * ioctls (a table), the limits (max_timeline_fences: -ENOSPC, max_timelines:
 * -ENFILE, parameter bounds), the watchdog (a fence pending watchdog_ms ends
 * with -ETIMEDOUT, and so do the lower values pending with it), the debugfs
 * file, that nothing leaks (live fences in debugfs return to zero after
 * many create/close cycles and after a process killed mid-flight), and that
 * kfdsync cannot unload while a fence lives. Parameters it changes through
 * sysfs are given back; the module is left loaded with the parameters it
 * had. Tests register themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 *
 * Environment (set by tests/vm/run in the guest):
 *   KFDSYNC_KMOD_DIR	directory with kmod/kfdsync.ko, for the reload test
 */

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "timeline_util.h"

static char kfdsync_params[1024];

/* --- errnos -------------------------------------------------------------- */

enum arg_kind { ARG_CREATE, ARG_CREATE_UNTERMINATED, ARG_BAD_POINTER,
		ARG_DEADLINE_PAD, ARG_DEADLINE_IN, ARG_DEADLINE_FD_NONE,
		ARG_DEADLINE_FD_TIMELINE, ARG_DEADLINE_FD_MERGED, ARG_INC };

enum target { ON_TIMELINE, ON_CLOSED, ON_SYNC_FILE };

TEST(errnos)
{
	static const struct {
		const char *name;
		unsigned long request;
		enum target target;
		enum arg_kind arg;
		int err;		/* expected errno */
		bool deadline;		/* ENOTTY before 6.4 */
	} cases[] = {
		{ "timeline_ioctl_unknown", _IO('W', 9), ON_TIMELINE,
		  ARG_INC, ENOTTY, false },
		{ "timeline_ioctl_wrong_size", _IOW('W', 1, __u64), ON_TIMELINE,
		  ARG_INC, ENOTTY, false },
		{ "fence_create_name_unterminated", KFDSYNC_TL_IOC_CREATE_FENCE,
		  ON_TIMELINE, ARG_CREATE_UNTERMINATED, EINVAL, false },
		{ "fence_create_bad_pointer", KFDSYNC_TL_IOC_CREATE_FENCE,
		  ON_TIMELINE, ARG_BAD_POINTER, EFAULT, false },
		{ "fence_create_on_sync_file", KFDSYNC_TL_IOC_CREATE_FENCE,
		  ON_SYNC_FILE, ARG_CREATE, ENOTTY, false },
		{ "timeline_inc_bad_pointer", KFDSYNC_TL_IOC_INC, ON_TIMELINE,
		  ARG_BAD_POINTER, EFAULT, false },
		{ "timeline_inc_closed", KFDSYNC_TL_IOC_INC, ON_CLOSED,
		  ARG_INC, EBADF, false },
		{ "timeline_get_deadline_pad", KFDSYNC_TL_IOC_GET_DEADLINE,
		  ON_TIMELINE, ARG_DEADLINE_PAD, EINVAL, true },
		{ "timeline_get_deadline_in_nonzero",
		  KFDSYNC_TL_IOC_GET_DEADLINE, ON_TIMELINE, ARG_DEADLINE_IN,
		  EINVAL, true },
		{ "timeline_get_deadline_no_fd", KFDSYNC_TL_IOC_GET_DEADLINE,
		  ON_TIMELINE, ARG_DEADLINE_FD_NONE, EINVAL, true },
		{ "timeline_get_deadline_not_sync_file",
		  KFDSYNC_TL_IOC_GET_DEADLINE, ON_TIMELINE,
		  ARG_DEADLINE_FD_TIMELINE, EINVAL, true },
		{ "timeline_get_deadline_merged", KFDSYNC_TL_IOC_GET_DEADLINE,
		  ON_TIMELINE, ARG_DEADLINE_FD_MERGED, EINVAL, true },
	};
	bool has_deadline = kernel_has_deadline();
	struct kfdsync_tl_create_fence create;
	struct kfdsync_tl_get_deadline gd;
	int tl, tl2, fence, fence2, merged, target, err;
	unsigned int i;
	__u32 inc = 1;
	void *arg;

	tl = __timeline_create();
	tl2 = __timeline_create();
	fence = __fence_create(tl, "e", 5);
	fence2 = __fence_create(tl2, "e", 5);
	merged = __sync_merge("e", fence, fence2);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int closed = -1;

		memset(&create, 0, sizeof(create));
		memset(&gd, 0, sizeof(gd));
		gd.fence_fd = fence;
		arg = &gd;
		switch (cases[i].arg) {
		case ARG_CREATE:
			arg = &create;
			break;
		case ARG_CREATE_UNTERMINATED:
			memset(create.name, 'x', sizeof(create.name));
			arg = &create;
			break;
		case ARG_BAD_POINTER:
			arg = (void *)16;
			break;
		case ARG_DEADLINE_PAD:
			gd.pad = 1;
			break;
		case ARG_DEADLINE_IN:
			gd.deadline_ns = 1;
			break;
		case ARG_DEADLINE_FD_NONE:
			gd.fence_fd = -1;
			break;
		case ARG_DEADLINE_FD_TIMELINE:
			gd.fence_fd = tl;
			break;
		case ARG_DEADLINE_FD_MERGED:
			gd.fence_fd = merged;
			break;
		case ARG_INC:
			arg = &inc;
			break;
		}
		switch (cases[i].target) {
		case ON_CLOSED:
			closed = __timeline_create();
			close(closed);
			target = closed;
			break;
		case ON_SYNC_FILE:
			target = fence;
			break;
		default:
			target = tl;
			break;
		}
		err = cases[i].deadline && !has_deadline ? ENOTTY :
		      cases[i].err;
		tap_errno(ioctl(target, cases[i].request, arg), err, "%s",
			  cases[i].name);
	}
	/* Nothing above changed the timeline. */
	if (fence_status(fence) != 0)
		tap_diag("fence changed by a refused ioctl");
	close(merged);
	close(fence);
	close(fence2);
	close(tl);
	close(tl2);
}

/* --- limits -------------------------------------------------------------- */

TEST(fence_limit)
{
	char saved[32] = "1024";
	int tl, f[9], extra = -1, same = -1, born = -1, i, err;
	bool ok = true;

	kfdsync_param_read("max_timeline_fences", saved, sizeof(saved));
	if (kfdsync_param_write("max_timeline_fences", "8")) {
		tap_skip("cannot write max_timeline_fences", "timeline_fences_limit");
		tap_skip("cannot write max_timeline_fences", "timeline_fences_limit_same_value");
		tap_skip("cannot write max_timeline_fences", "timeline_fences_limit_freed");
		return;
	}
	/* The limit is taken at open. */
	tl = __timeline_create();
	kfdsync_param_write("max_timeline_fences", saved);

	for (i = 0; i < 8; i++) {
		f[i] = __fence_create(tl, "lim", 10 + i);
		ok &= f[i] >= 0;
	}
	f[8] = __fence_create(tl, "lim", 100);
	err = f[8];
	tap_ok(ok && err == -ENOSPC, "timeline_fences_limit");
	if (err >= 0)
		close(f[8]);

	/* Not new pending fences: the same value, a value reached. */
	same = __fence_create(tl, "lim", 12);
	born = __fence_create(tl, "lim", 0);
	tap_ok(same >= 0 && born >= 0 && fence_status(born) == 1,
	       "timeline_fences_limit_same_value");

	/* A signalled fence frees its slot, even while its fd is open. */
	__timeline_inc(tl, 10);
	extra = __fence_create(tl, "lim", 200);
	err = __fence_create(tl, "lim", 201);
	tap_ok(extra >= 0 && err == -ENOSPC, "timeline_fences_limit_freed");
	if (err >= 0)
		close(err);

	for (i = 0; i < 8; i++)
		if (f[i] >= 0)
			close(f[i]);
	if (same >= 0)
		close(same);
	if (born >= 0)
		close(born);
	if (extra >= 0)
		close(extra);
	close(tl);
}

TEST(param_bounds)
{
	static const struct {
		const char *name;
		const char *value;
		int err;
	} cases[] = {
		{ "max_timeline_fences", "0", -ERANGE },
		{ "max_timeline_fences", "65537", -ERANGE },
		{ "max_timeline_fences", "x", -EINVAL },
		{ "max_timelines", "0", -ERANGE },
		{ "max_timelines", "65537", -ERANGE },
		{ "max_timelines", "-1", -EINVAL },
	};
	unsigned int i;
	bool ok = true;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ret = kfdsync_param_write(cases[i].name, cases[i].value);
		if (ret != cases[i].err) {
			tap_diag("%s=%s: %d", cases[i].name, cases[i].value,
				 ret);
			ok = false;
		}
	}
	tap_ok(ok, "param_timeline_limits_range");
}

TEST(timeline_limit)
{
	unsigned int count = 0;
	int fences, tl[3], i, err;
	char saved[32] = "1024", val[32];

	if (!debugfs_ready()) {
		tap_skip("no debugfs", "timeline_open_limit");
		tap_skip("no debugfs", "timeline_open_limit_spares_cap_sys_admin");
		return;
	}
	if (__tl_debugfs_counts(&count, &fences)) {
		tap_ok(false, "timeline_open_limit (debugfs timelines unreadable)");
		return;
	}
	kfdsync_param_read("max_timelines", saved, sizeof(saved));
	snprintf(val, sizeof(val), "%u", count + 2);
	if (kfdsync_param_write("max_timelines", val)) {
		tap_skip("cannot write max_timelines", "timeline_open_limit");
		tap_skip("cannot write max_timelines", "timeline_open_limit_spares_cap_sys_admin");
		return;
	}
	tl[0] = __timeline_create();
	tl[1] = __timeline_create();
	/* The system-wide limit spares CAP_SYS_ADMIN: the third without it. */
	err = open_without_cap_sys_admin(KFDSYNC_TL_DEVICE);
	tl[2] = __timeline_create();
	kfdsync_param_write("max_timelines", saved);
	tap_ok(tl[0] >= 0 && tl[1] >= 0 && err == -ENFILE,
	       "timeline_open_limit (%s)", strerror(-err));
	tap_ok(tl[2] >= 0, "timeline_open_limit_spares_cap_sys_admin");
	for (i = 0; i < 3; i++)
		if (tl[i] >= 0)
			close(tl[i]);
}

/* --- watchdog ------------------------------------------------------------ */

TEST(watchdog)
{
	static const char *const names[] = {
		"fence_watchdog_timeout", "fence_watchdog_lower_values",
		"fence_watchdog_later_fence", "fence_watchdog_signalled_kept",
	};
	char saved[32] = "10000";
	int tl, a, b, c, d, wa, i;
	uint64_t t0, elapsed;
	bool ok;

	kfdsync_param_read("watchdog_ms", saved, sizeof(saved));
	if (kfdsync_param_write("watchdog_ms", "400")) {
		for (i = 0; i < 4; i++)
			tap_skip("cannot write watchdog_ms", "%s", names[i]);
		return;
	}
	/* The watchdog is taken at open. */
	tl = __timeline_create();
	kfdsync_param_write("watchdog_ms", saved);

	t0 = now_ns();
	d = __fence_create(tl, "d", 1);
	a = __fence_create(tl, "a", 10);
	msleep(200);
	b = __fence_create(tl, "b", 3);
	c = __fence_create(tl, "c", 20);
	__timeline_inc(tl, 1);		/* d signals normally */

	wa = __sync_wait(a, 5000);
	elapsed = (now_ns() - t0) / 1000000;
	/* c expires 200 ms after a: still pending right now. */
	ok = fence_status(c) == 0;
	tap_diag("watchdog 400 ms fired after %llu ms",
		 (unsigned long long)elapsed);
	tap_ok(wa == 1 && fence_status(a) == -ETIMEDOUT && elapsed >= 395,
	       "%s", names[0]);
	tap_ok(fence_status(b) == -ETIMEDOUT, "%s", names[1]);
	ok &= __sync_wait(c, 5000) == 1 && fence_status(c) == -ETIMEDOUT;
	tap_ok(ok, "%s", names[2]);
	tap_ok(fence_status(d) == 1, "%s", names[3]);
	close(a);
	close(b);
	close(c);
	close(d);
	close(tl);
}

/* --- debugfs ------------------------------------------------------------- */

TEST(debugfs)
{
	char line[512], comm[64], name[128], self[64];
	unsigned long long id, ctx;
	unsigned int value, pending, max, wd;
	bool found = false;
	int tl, f1, f2, tgid;
	FILE *f;

	if (!debugfs_ready()) {
		tap_skip("no debugfs", "debugfs_timelines");
		return;
	}
	tl = __timeline_create();
	f1 = __fence_create(tl, "x", 5);
	f2 = __fence_create(tl, "y", 9);
	__timeline_inc(tl, 2);
	snprintf(self, sizeof(self), "kfdsync-timeline:%d:", getpid());

	f = fopen(TL_DEBUGFS, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%llu %d %63s %llu %u %u %u %u %127s", &id,
			   &tgid, comm, &ctx, &value, &pending, &max, &wd,
			   name) != 9)
			continue;
		if (tgid == getpid() && value == 2 && pending == 2 &&
		    !strncmp(name, self, strlen(self)) &&
		    !strcmp(comm, "timeline_limits"))
			found = true;
	}
	if (f)
		fclose(f);
	tap_ok(found, "debugfs_timelines");
	close(f1);
	close(f2);
	close(tl);
}

/* --- leaks --------------------------------------------------------------- */

/* Wait up to 2 s for the debugfs counts to come back to @timelines/@fences. */
static bool counts_back_to(unsigned int timelines, int fences)
{
	unsigned int t = 0;
	int f = -1, i;

	for (i = 0; i < 200; i++) {
		if (!__tl_debugfs_counts(&t, &f) && t == timelines &&
		    f == fences)
			return true;
		msleep(10);
	}
	tap_diag("timelines %u (expected %u), live fences %d (expected %d)",
		 t, timelines, f, fences);
	return false;
}

static void test_cycles(unsigned int base_tl, int base_fences)
{
	int tl, a, b, c, m, i;
	bool ok = true;

	for (i = 0; i < 2000; i++) {
		tl = __timeline_create();
		a = __fence_create(tl, "a", 0);
		b = __fence_create(tl, "b", 1);
		c = __fence_create(tl, "c", 2);
		m = __sync_merge("m", b, c);
		ok &= tl >= 0 && a >= 0 && b >= 0 && c >= 0 && m >= 0;
		__timeline_inc(tl, 1);
		/* Close the timeline first on odd rounds, last on even. */
		if (i & 1)
			close(tl);
		close(a);
		close(b);
		close(c);
		if (!(i & 1))
			close(tl);
		ok &= fence_status(m) == -ENOENT;
		close(m);
		if (!ok)
			break;
	}
	tap_ok(ok && counts_back_to(base_tl, base_fences),
	       "timeline_cycle_no_leak");
}

static void *inc_loop(void *arg)
{
	int tl = *(int *)arg;

	for (;;)
		__timeline_inc(tl, 1);
	return NULL;
}

/* A child builds fences on many timelines, in threads, and is killed. */
static void child_midflight(void)
{
	enum { N = 16 };
	int tl[N], merged = -1, f, tmp, i;
	pthread_t thread;
	uint32_t v;

	for (i = 0; i < N; i++)
		tl[i] = __timeline_create();
	for (i = 0; i < N / 2; i++)
		pthread_create(&thread, NULL, inc_loop, &tl[i]);
	for (v = 1;; v++) {
		i = v % N;
		f = __fence_create(tl[i], "k", v * 3);
		if (f < 0)
			continue;
		tmp = merged >= 0 ? __sync_merge("k", merged, f) : dup(f);
		close(f);
		if (tmp < 0)
			continue;
		if (merged >= 0)
			close(merged);
		merged = tmp;
	}
}

static void test_midflight(unsigned int base_tl, int base_fences)
{
	int status = 0;
	pid_t pid;

	pid = fork();
	if (!pid) {
		child_midflight();
		_exit(0);
	}
	msleep(500);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	tap_ok(WIFSIGNALED(status) && counts_back_to(base_tl, base_fences),
	       "timeline_kill_midflight_no_leak");
}

/* Nothing leaks: debugfs's live counts come back to where they were. */
TEST(leaks)
{
	unsigned int base_tl = 0;
	int base_fences = 0;

	if (!debugfs_ready()) {
		tap_skip("no debugfs", "timeline_cycle_no_leak");
		tap_skip("no debugfs", "timeline_kill_midflight_no_leak");
		return;
	}
	if (__tl_debugfs_counts(&base_tl, &base_fences)) {
		tap_ok(false, "timeline_cycle_no_leak (debugfs timelines unreadable)");
		tap_ok(false, "timeline_kill_midflight_no_leak (debugfs timelines unreadable)");
		return;
	}
	tap_diag("before: %u timelines, %d live fences", base_tl, base_fences);
	test_cycles(base_tl, base_fences);
	test_midflight(base_tl, base_fences);
}

/* --- module lifetime ------------------------------------------------------- */

static void save_params(void)
{
	char buf[64];
	struct dirent *de;
	size_t len = 0;
	DIR *dir;

	dir = opendir(KFDSYNC_PARAMS);
	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.' ||
		    kfdsync_param_read(de->d_name, buf, sizeof(buf)))
			continue;
		len += snprintf(kfdsync_params + len,
				sizeof(kfdsync_params) - len, "%s%s=%s",
				len ? " " : "", de->d_name, buf);
	}
	if (dir)
		closedir(dir);
}

TEST(kmod)
{
	static const char *const names[] = {
		"kmod_unload_busy_fence", "kmod_unload", "kmod_reload",
	};
	int tl, fence, ret, i;

	if (!getenv("KFDSYNC_KMOD_DIR") || geteuid()) {
		for (i = 0; i < 3; i++)
			tap_skip("not in the guest as root", "%s", names[i]);
		return;
	}
	save_params();
	tl = __timeline_create();
	fence = __fence_create(tl, "pin", 1);
	/* Only the fence is left: it alone must pin the module. */
	close(tl);
	ret = kmod_unload("kfdsync", 1);
	tap_ok(fence >= 0 && ret == -EWOULDBLOCK && fence_status(fence) == -ENOENT,
	       "%s", names[0]);
	close(fence);
	ret = kmod_unload("kfdsync", 50);
	if (ret)
		tap_diag("rmmod kfdsync: %s", strerror(-ret));
	tap_ok(!ret && access(TL_DEV, F_OK) && errno == ENOENT, "%s",
	       names[1]);
	ret = kmod_load_project("kmod/kfdsync.ko", kfdsync_params);
	if (ret)
		tap_diag("insmod kfdsync.ko %s: %s", kfdsync_params,
			 strerror(-ret));
	tl = __timeline_create();
	tap_ok(!ret && tl >= 0, "%s", names[2]);
	if (tl >= 0)
		close(tl);
}

int main(int argc, char **argv)
{
	harness_require = timeline_require_device;
	return harness_main(argc, argv);
}
