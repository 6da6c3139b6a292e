// SPDX-License-Identifier: MIT
/*
 * timeline_semantics: what sw_sync defines beyond its selftests, on
 * /dev/kfdsync_timeline.
 *
 * How this program works: through sw_sync's and sync_file's interfaces
 * only, as timeline_sw_sync does, it checks that the same value gives the
 * same fence, that values already reached give signalled fences (with
 * 32-bit wrap-around), INC by more than INT_MAX, closing with pending fences
 * (-ENOENT, also with a waiter blocked in poll()), the names reported by
 * FILE_INFO, and the deadline hint (6.4+). Tests register themselves
 * (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <pthread.h>

#include "harness.h"
#include "timeline_util.h"

/* This process's pending fences on its one timeline, from debugfs. */
static bool pending_count(unsigned int *pending)
{
	char line[512], comm[64];
	unsigned long long id, ctx;
	unsigned int value, pend;
	bool found = false;
	int tgid;
	FILE *f;

	if (!debugfs_ready())
		return false;
	f = fopen(TL_DEBUGFS, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%llu %d %63s %llu %u %u", &id, &tgid, comm,
			   &ctx, &value, &pend) != 6)
			continue;
		if (tgid == getpid()) {
			*pending = pend;
			found = true;
		}
	}
	fclose(f);
	return found;
}

TEST(same_value)
{
	unsigned int pending = 0;
	int tl, a, b;
	bool ok;

	tl = __timeline_create();
	a = __fence_create(tl, "a", 7);
	b = __fence_create(tl, "b", 7);
	/* The second create returns the first fence: still one pending. */
	ok = a >= 0 && b >= 0;
	if (pending_count(&pending))
		ok &= pending == 1;
	else
		tap_diag("no debugfs: pending count not checked");
	ok &= !__timeline_inc(tl, 7) && __sync_wait(a, 0) == 1 &&
	      __sync_wait(b, 0) == 1;
	tap_ok(ok, "fence_create_same_value");
	close(a);
	close(b);
	close(tl);
}

/* Values reached, or more than INT_MAX ahead (32-bit wrap), are signalled. */
TEST(born_signalled)
{
	static const struct {
		uint32_t inc;
		uint32_t value;
		int status;
	} cases[] = {
		{ 0, 0, 1 },
		{ 10, 5, 1 },
		{ 10, 10, 1 },
		{ 10, 11, 0 },
		{ 0, 0x7fffffff, 0 },
		{ 0, 0x80000000, 1 },
		{ 0, 0xffffffff, 1 },
		{ 0xfffffff0, 0xfffffff5, 0 },
		{ 0xfffffff0, 5, 0 },		/* ahead across the wrap */
		{ 0xfffffff0, 0xffffffe0, 1 },
	};
	unsigned int i;
	bool ok = true;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int tl = __timeline_create();
		int f;

		__timeline_inc(tl, cases[i].inc);
		f = __fence_create(tl, "born", cases[i].value);
		if (f < 0 || fence_status(f) != cases[i].status) {
			tap_diag("inc %#x value %#x: status %d, expected %d",
				 cases[i].inc, cases[i].value,
				 f < 0 ? f : fence_status(f), cases[i].status);
			ok = false;
		}
		if (f >= 0)
			close(f);
		close(tl);
	}
	tap_ok(ok, "fence_create_reached");
}

/* INC by more than INT_MAX signals everything on the way, across the wrap. */
TEST(inc_large)
{
	int tl, a, b, c;
	bool ok;

	tl = __timeline_create();
	a = __fence_create(tl, "a", 10);
	b = __fence_create(tl, "b", 0x7fffffff);
	ok = !__timeline_inc(tl, 0xfffffff0);
	ok &= fence_status(a) == 1 && fence_status(b) == 1;
	/* Now at 0xfffffff0: 0x20 is 0x30 ahead. */
	c = __fence_create(tl, "c", 0x20);
	ok &= fence_status(c) == 0;
	ok &= !__timeline_inc(tl, 0x2f) && fence_status(c) == 0;
	ok &= !__timeline_inc(tl, 1) && fence_status(c) == 1;
	tap_ok(ok, "timeline_inc_wrap");
	close(a);
	close(b);
	close(c);
	close(tl);
}

/* Closing the timeline ends its pending fences with -ENOENT. */
TEST(close_pending)
{
	int tl, a, b, c, m;
	bool ok;

	tl = __timeline_create();
	a = __fence_create(tl, "a", 1);
	b = __fence_create(tl, "b", 2);
	c = __fence_create(tl, "c", 3);
	__timeline_inc(tl, 1);
	m = __sync_merge("bc", b, c);
	close(tl);
	ok = __sync_wait(a, 0) == 1 && fence_status(a) == 1;
	ok &= __sync_wait(b, 1000) == 1 && fence_status(b) == -ENOENT;
	ok &= fence_status(c) == -ENOENT;
	ok &= __sync_wait(m, 0) == 1 && fence_status(m) == -ENOENT &&
	      fence_count_status(m, -ENOENT) == 1;
	tap_ok(ok, "timeline_close_pending");
	close(a);
	close(b);
	close(c);
	close(m);
}

/* Close with a waiter blocked in poll() in another thread. */
static void *close_waiter(void *arg)
{
	int *fd = arg;

	*fd = __sync_wait(*fd, 10000);
	return NULL;
}

TEST(close_waiter)
{
	pthread_t thread;
	int tl, f, result;
	bool ok;

	tl = __timeline_create();
	f = __fence_create(tl, "w", 1);
	result = f;
	pthread_create(&thread, NULL, close_waiter, &result);
	msleep(50);
	close(tl);
	pthread_join(thread, NULL);
	ok = result == 1 && fence_status(f) == -ENOENT;
	tap_ok(ok, "timeline_close_wakes_waiter");
	close(f);
}

TEST(names)
{
	char prefix[64];
	struct file_info fi;
	int tl, f, g, ret;
	bool ok;

	tl = __timeline_create();
	f = __fence_create(tl, "frame-42", 3);
	g = __fence_create(tl, "", 4);
	ret = __file_info(f, &fi);
	snprintf(prefix, sizeof(prefix), "kfdsync-timeline:%d:", getpid());
	ok = !ret && !strcmp(fi.info.name, "frame-42") &&
	     fi.info.num_fences == 1 &&
	     !strcmp(fi.fences[0].driver_name, "kfdsync") &&
	     !strncmp(fi.fences[0].obj_name, prefix, strlen(prefix));
	if (!ok && !ret)
		tap_diag("name '%s' driver '%s' obj '%s'", fi.info.name,
			 fi.fences[0].driver_name, fi.fences[0].obj_name);
	/* No name given: the kernel's default, driver-timeline-... */
	ret = __file_info(g, &fi);
	ok &= !ret && !strncmp(fi.info.name, "kfdsync-", 8);
	tap_ok(ok, "fence_info_names");
	close(f);
	close(g);
	close(tl);
}

TEST(deadline)
{
	struct sw_sync_get_deadline gd;
	struct sync_set_deadline sd;
	int tl, f, ret;
	uint64_t t;
	bool ok;

	tl = __timeline_create();
	f = __fence_create(tl, "dl", 1);
	memset(&gd, 0, sizeof(gd));
	gd.fence_fd = f;
	ret = ioctl(tl, SW_SYNC_GET_DEADLINE, &gd) ? -errno : 0;
	if (!kernel_has_deadline()) {
		tap_ok(ret == -ENOTTY, "timeline_get_deadline_unsupported");
		tap_skip("needs 6.4+", "fence_set_deadline");
		goto out;
	}
	tap_ok(ret == -ENOENT, "timeline_get_deadline_unset");

	t = now_ns() + 1000000000ULL;
	memset(&sd, 0, sizeof(sd));
	sd.deadline_ns = t;
	ok = !ioctl(f, SYNC_IOC_SET_DEADLINE, &sd);
	/* A later deadline does not replace an earlier one. */
	sd.deadline_ns = t + 5000000000ULL;
	ok &= !ioctl(f, SYNC_IOC_SET_DEADLINE, &sd);
	memset(&gd, 0, sizeof(gd));
	gd.fence_fd = f;
	ok &= !ioctl(tl, SW_SYNC_GET_DEADLINE, &gd) && gd.deadline_ns == t;
	sd.deadline_ns = t - 1000;
	ok &= !ioctl(f, SYNC_IOC_SET_DEADLINE, &sd);
	memset(&gd, 0, sizeof(gd));
	gd.fence_fd = f;
	ok &= !ioctl(tl, SW_SYNC_GET_DEADLINE, &gd) &&
	      gd.deadline_ns == t - 1000;
	tap_ok(ok, "fence_set_deadline");
out:
	close(f);
	close(tl);
}

int main(int argc, char **argv)
{
	harness_require = timeline_require_device;
	return harness_main(argc, argv);
}
