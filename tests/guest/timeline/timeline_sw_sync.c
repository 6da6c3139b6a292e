// SPDX-License-Identifier: MIT
/*
 * timeline_sw_sync: /dev/kfdsync_timeline against sw_sync's semantics.
 *
 * How this program works: it exercises the CPU timeline device only through
 * sw_sync's interface (SW_SYNC_IOC_CREATE_FENCE, SW_SYNC_IOC_INC) and the
 * sync_file one (SYNC_IOC_MERGE, SYNC_IOC_FILE_INFO, poll), the way the
 * kernel's tools/testing/selftests/sync does against <debugfs>/sync/sw_sync:
 * allocation, waits on one and several timelines, merges, many timelines,
 * and the three stress tests (parallelism, consumer, merge). Then what
 * sw_sync defines beyond those tests: same value gives the same fence,
 * values already reached give signalled fences (with 32-bit wrap-around),
 * INC by more than INT_MAX, closing with pending fences (-ENOENT), the
 * names reported by FILE_INFO, and the deadline hint (6.4+).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <pthread.h>
#include <sys/utsname.h>

#include "timeline_util.h"

#define PLAN		21

/* --- allocation ---------------------------------------------------------- */

static void test_alloc(void)
{
	int tl, fence, bad;

	tl = __timeline_create();
	tap_ok(tl >= 0, "timeline_open");
	fence = tl >= 0 ? __fence_create(tl, "alloc", 1) : -EBADF;
	tap_ok(fence >= 0 && fence_status(fence) == 0, "fence_create");
	/* As the selftest: no fence from an invalid timeline fd. */
	bad = __fence_create(-1, "alloc", 1);
	tap_ok(bad == -EBADF, "fence_create_bad_timeline");
	/* ... and no merge with an invalid fence. */
	bad = fence >= 0 ? __sync_merge("merge", fence, -1) : 0;
	tap_ok(bad < 0, "fence_merge_bad_fd");
	if (fence >= 0)
		close(fence);
	if (tl >= 0)
		close(tl);
}

/* --- one timeline: wait ------------------------------------------------- */

static void test_one_timeline_wait(void)
{
	bool ok = true;
	int tl, fence;

	tl = __timeline_create();
	fence = __fence_create(tl, "wait", 5);
	ok &= fence >= 0 && __sync_wait(fence, 0) == 0;
	ok &= !__timeline_inc(tl, 1) && __sync_wait(fence, 0) == 0;
	ok &= !__timeline_inc(tl, 3) && __sync_wait(fence, 0) == 0;
	ok &= !__timeline_inc(tl, 1) && __sync_wait(fence, 0) == 1;
	ok &= fence_status(fence) == 1;
	/* Going further changes nothing. */
	ok &= !__timeline_inc(tl, 10) && __sync_wait(fence, 0) == 1;
	tap_ok(ok, "fence_wait_one_timeline");
	close(fence);
	close(tl);
}

/* --- one timeline: merge ------------------------------------------------- */

static void test_one_timeline_merge(void)
{
	int tl, a, b, c, d, e;
	bool ok = true;

	tl = __timeline_create();
	a = __fence_create(tl, "a", 1);
	b = __fence_create(tl, "b", 2);
	c = __fence_create(tl, "c", 3);
	d = __sync_merge("ab", a, b);
	e = __sync_merge("abc", d, c);
	/* One context: the merge keeps only the latest fence. */
	ok &= fence_size(d) == 1 && fence_size(e) == 1;
	ok &= fence_count_status(e, 0) == 1;
	ok &= !__timeline_inc(tl, 1) && __sync_wait(a, 0) == 1 &&
	      __sync_wait(e, 0) == 0;
	ok &= !__timeline_inc(tl, 1) && __sync_wait(d, 0) == 1 &&
	      __sync_wait(e, 0) == 0;
	ok &= !__timeline_inc(tl, 1) && __sync_wait(e, 0) == 1 &&
	      fence_count_status(e, 1) == 1;
	tap_ok(ok, "fence_merge_one_timeline");
	close(a);
	close(b);
	close(c);
	close(d);
	close(e);
	close(tl);
}

static void test_merge_same_fence(void)
{
	int tl, a, m;
	bool ok;

	tl = __timeline_create();
	a = __fence_create(tl, "a", 5);
	m = __sync_merge("aa", a, a);
	ok = m >= 0 && fence_size(m) == 1 && __sync_wait(m, 0) == 0;
	ok &= !__timeline_inc(tl, 5) && __sync_wait(m, 0) == 1;
	tap_ok(ok, "fence_merge_same");
	close(m);
	close(a);
	close(tl);
}

/* --- several timelines -------------------------------------------------- */

static void test_multi_timeline_wait(void)
{
	int tl[3], f[3], m, m2, i;
	bool ok = true;

	for (i = 0; i < 3; i++) {
		tl[i] = __timeline_create();
		f[i] = __fence_create(tl[i], "multi", 5);
	}
	m = __sync_merge("m01", f[0], f[1]);
	m2 = __sync_merge("m012", m, f[2]);
	ok &= fence_size(m2) == 3 && fence_count_status(m2, 0) == 3;
	for (i = 0; i < 3; i++) {
		ok &= __sync_wait(m2, 0) == 0;
		ok &= !__timeline_inc(tl[i], 5);
		ok &= fence_count_status(m2, 1) == i + 1 &&
		      fence_count_status(m2, 0) == 2 - i;
	}
	ok &= __sync_wait(m2, 0) == 1;
	tap_ok(ok, "fence_wait_multi_timeline");
	for (i = 0; i < 3; i++) {
		close(f[i]);
		close(tl[i]);
	}
	close(m);
	close(m2);
}

/* Many timelines, one fence each, merged into one sync_file. */
static void test_many_timelines(void)
{
	enum { N = 256 };
	int tl[N], merged = -1, i, tmp, opened = 0;
	bool ok = true;

	for (i = 0; i < N; i++) {
		int f;

		tl[i] = __timeline_create();
		if (tl[i] < 0) {
			ok = false;
			break;
		}
		opened++;
		f = __fence_create(tl[i], "many", (uint32_t)i + 1);
		if (f < 0) {
			ok = false;
			break;
		}
		if (merged < 0) {
			merged = f;
			continue;
		}
		tmp = __sync_merge("many", merged, f);
		close(f);
		close(merged);
		merged = tmp;
		if (merged < 0) {
			ok = false;
			break;
		}
	}
	/* FILE_INFO of more than MAX_INFO_FENCES: ask for the count only. */
	if (ok) {
		struct sync_file_info info;

		memset(&info, 0, sizeof(info));
		ok &= !ioctl(merged, SYNC_IOC_FILE_INFO, &info) &&
		      info.num_fences == N && info.status == 0;
	}
	for (i = 0; ok && i < N; i++) {
		ok &= __sync_wait(merged, 0) == 0;
		ok &= !__timeline_inc(tl[i], (uint32_t)i + 1);
	}
	if (ok) {
		struct sync_file_info info;

		memset(&info, 0, sizeof(info));
		ok &= __sync_wait(merged, 0) == 1 &&
		      !ioctl(merged, SYNC_IOC_FILE_INFO, &info) &&
		      info.status == 1;
	}
	tap_ok(ok, "timeline_open_many");
	if (merged >= 0)
		close(merged);
	for (i = 0; i < opened; i++)
		close(tl[i]);
}

/* --- stress ------------------------------------------------------------- */

struct stress {
	int tl;
	unsigned int threads;
	unsigned int iterations;
	pthread_mutex_t lock;
	unsigned int counter;
	bool failed;
};

struct stress_thread {
	struct stress *s;
	unsigned int id;
	pthread_t thread;
};

/*
 * Each of N threads, in turn: wait for the fence of its turn, check that
 * exactly the turns before it ran, count, then advance the timeline by one
 * to release the next thread. The selftest's stress_parallelism (N = 2)
 * and the producers of its stress_consumer.
 */
static void *stress_turns(void *arg)
{
	struct stress_thread *t = arg;
	struct stress *s = t->s;
	unsigned int i, turn;
	int fence;

	for (i = 0; i < s->iterations; i++) {
		turn = i * s->threads + t->id;
		fence = __fence_create(s->tl, "turn", turn);
		if (fence < 0 || __sync_wait(fence, 10000) != 1) {
			s->failed = true;
			if (fence >= 0)
				close(fence);
			return NULL;
		}
		close(fence);
		pthread_mutex_lock(&s->lock);
		if (s->counter != turn)
			s->failed = true;
		s->counter++;
		pthread_mutex_unlock(&s->lock);
		if (__timeline_inc(s->tl, 1))
			s->failed = true;
	}
	return NULL;
}

/*
 * The consumer of stress_consumer: waits for every round of the producers
 * through a merge of a fence it creates and the previous round's fence, and
 * checks that the whole round has run.
 */
static void *stress_consume(void *arg)
{
	struct stress *s = arg;
	unsigned int i, end;
	int fence, prev = -1, merged;

	for (i = 0; i < s->iterations; i++) {
		end = (i + 1) * s->threads;
		fence = __fence_create(s->tl, "round", end);
		merged = prev >= 0 ? __sync_merge("rounds", fence, prev) :
			 dup(fence);
		if (fence < 0 || merged < 0 || __sync_wait(merged, 10000) != 1) {
			s->failed = true;
			break;
		}
		pthread_mutex_lock(&s->lock);
		if (s->counter < end)
			s->failed = true;
		pthread_mutex_unlock(&s->lock);
		if (prev >= 0)
			close(prev);
		prev = fence;
		close(merged);
	}
	if (prev >= 0)
		close(prev);
	return NULL;
}

static bool stress_run(unsigned int threads, unsigned int iterations,
		       bool consumer)
{
	struct stress_thread t[8];
	pthread_t consumer_thread;
	struct stress s = {
		.threads = threads, .iterations = iterations,
		.lock = PTHREAD_MUTEX_INITIALIZER,
	};
	unsigned int i;

	s.tl = __timeline_create();
	if (s.tl < 0)
		return false;
	/* Turn 0 is value 0: born signalled. */
	for (i = 0; i < threads; i++) {
		t[i].s = &s;
		t[i].id = i;
		pthread_create(&t[i].thread, NULL, stress_turns, &t[i]);
	}
	if (consumer)
		pthread_create(&consumer_thread, NULL, stress_consume, &s);
	for (i = 0; i < threads; i++)
		pthread_join(t[i].thread, NULL);
	if (consumer)
		pthread_join(consumer_thread, NULL);
	close(s.tl);
	if (s.counter != threads * iterations)
		tap_diag("counter %u, expected %u", s.counter,
			 threads * iterations);
	return !s.failed && s.counter == threads * iterations;
}

/*
 * The selftest's stress_merge: many fences on a few timelines merged in
 * random order into one; it signals when, and only when, every timeline
 * reached the largest value merged from it.
 */
static void test_stress_merge(void)
{
	enum { TIMELINES = 8, MERGES = 1000 };
	uint32_t max[TIMELINES] = { 0 };
	int tl[TIMELINES], merged, f, tmp, i, used = 0;
	bool ok = true;

	srand(42);
	for (i = 0; i < TIMELINES; i++)
		tl[i] = __timeline_create();
	max[0] = 1;
	merged = __fence_create(tl[0], "m", 1);
	used = 1;
	for (i = 0; ok && i < MERGES; i++) {
		int t = rand() % TIMELINES;
		uint32_t v = 1 + rand() % 100;

		f = __fence_create(tl[t], "m", v);
		tmp = f >= 0 ? __sync_merge("m", merged, f) : f;
		ok &= f >= 0 && tmp >= 0;
		if (f >= 0)
			close(f);
		if (tmp >= 0) {
			close(merged);
			merged = tmp;
		}
		if (!max[t])
			used++;
		if (v > max[t])
			max[t] = v;
	}
	ok &= fence_size(merged) == used;
	for (i = 0; ok && i < TIMELINES; i++) {
		if (!max[i])
			continue;
		ok &= __sync_wait(merged, 0) == 0;
		ok &= !__timeline_inc(tl[i], max[i] - 1);
		ok &= __sync_wait(merged, 0) == 0;
		ok &= !__timeline_inc(tl[i], 1);
	}
	ok &= __sync_wait(merged, 0) == 1 && fence_status(merged) == 1;
	tap_ok(ok, "stress_merge");
	close(merged);
	for (i = 0; i < TIMELINES; i++)
		close(tl[i]);
}

/* --- sw_sync's semantics beyond the selftests ------------------------------ */

static bool pending_count(unsigned int *pending);

static void test_same_value(void)
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
static void test_born_signalled(void)
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
static void test_inc_large(void)
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
static void test_close_pending(void)
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

static void test_close_waiter(void)
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

static void test_names(void)
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

static bool kernel_has_deadline(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	uname(&u);
	sscanf(u.release, "%u.%u", &major, &minor);
	return major > 6 || (major == 6 && minor >= 4);
}

static void test_deadline(void)
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

int main(void)
{
	tap_plan(PLAN);
	if (access(TL_DEV, F_OK)) {
		tap_diag("%s: %s", TL_DEV, strerror(errno));
		tap_skip_rest(PLAN, "no " TL_DEV);
		return tap_exit();
	}

	test_alloc();				/* 4 */
	test_one_timeline_wait();		/* 1 */
	test_one_timeline_merge();		/* 1 */
	test_merge_same_fence();		/* 1 */
	test_multi_timeline_wait();		/* 1 */
	test_many_timelines();			/* 1 */
	tap_ok(stress_run(2, 1000, false), "stress_parallelism");
	tap_ok(stress_run(4, 500, true), "stress_consumer");
	tap_ok(stress_run(8, 200, false), "stress_threads");
	test_stress_merge();			/* 1 */
	test_same_value();			/* 1 */
	test_born_signalled();			/* 1 */
	test_inc_large();			/* 1 */
	test_close_pending();			/* 1 */
	test_close_waiter();			/* 1 */
	test_names();				/* 1 */
	test_deadline();			/* 2 */

	if (tap_count != PLAN)
		tap_bail("planned %u subtests, ran %u", PLAN, tap_count);
	return tap_exit();
}
