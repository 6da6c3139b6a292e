// SPDX-License-Identifier: MIT
/*
 * timeline_sw_sync: /dev/kfdsync_timeline against sw_sync's selftests.
 *
 * How this program works: it exercises the CPU timeline device only through
 * sw_sync's interface (SW_SYNC_IOC_CREATE_FENCE, SW_SYNC_IOC_INC) and the
 * sync_file one (SYNC_IOC_MERGE, SYNC_IOC_FILE_INFO, poll), the way the
 * kernel's tools/testing/selftests/sync does against <debugfs>/sync/sw_sync:
 * allocation, waits on one and several timelines, merges, many timelines,
 * and the three stress tests (parallelism, consumer, merge). What sw_sync
 * defines beyond those tests is in timeline_semantics.c. Tests register
 * themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <pthread.h>

#include "harness.h"
#include "timeline_util.h"

/* --- allocation ---------------------------------------------------------- */

TEST(alloc)
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

TEST(one_timeline_wait)
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

TEST(one_timeline_merge)
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

TEST(merge_same_fence)
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

TEST(multi_timeline_wait)
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
TEST(many_timelines)
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

TEST(stress_parallelism)
{
	tap_ok(stress_run(2, 1000, false), "stress_parallelism");
}

TEST(stress_consumer)
{
	tap_ok(stress_run(4, 500, true), "stress_consumer");
}

TEST(stress_threads)
{
	tap_ok(stress_run(8, 200, false), "stress_threads");
}

/*
 * The selftest's stress_merge: many fences on a few timelines merged in
 * random order into one; it signals when, and only when, every timeline
 * reached the largest value merged from it.
 */
TEST(stress_merge)
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

int main(int argc, char **argv)
{
	harness_require = timeline_require_device;
	return harness_main(argc, argv);
}
