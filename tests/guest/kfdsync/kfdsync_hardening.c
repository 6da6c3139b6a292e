// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening: the holes of issue 12, each tried the way an attacker
 * (or an unlucky scheduler) would, against kfdsync.ko in hooks mode:
 *
 * - registration refuses any slot but exactly the event's own in the
 *   caller's whole /dev/kfd events mapping;
 * - a watchdog that ends a fence ends every fence of its event at or below
 *   its seqno, and later fences there are born ended (CPU timelines too);
 * - fences nobody holds leave the queues and count against nothing;
 * - GPU signals are counted once per write amdkfd acknowledges, with two
 *   simulated queues interrupting at once and on amdkfd's scan path; CPU
 *   sets from many threads are all counted;
 * - an event amdkfd destroys ends its fences, and its id reused by a new
 *   event never signals the old event's fences;
 * - watched values and import targets are the pages the process uses (a
 *   fresh anonymous page, a private file mapping), and file-backed shared
 *   memory is refused;
 * - pins are charged to RLIMIT_MEMLOCK, contexts and timelines are limited
 *   per user (an unprivileged child against root);
 * - reloaded with assume_unverified=Y or fail_hook=cpu_set, kfdsync
 *   attaches nothing and says why, and a relayed signal counts once.
 *
 * How this program works: it opens /dev/kfd (libhsakmt), the GPU simulator
 * and /dev/kfdsync as root in the guest; simulated RELEASE_MEM packets go
 * through amdkfd's real interrupt path. Tests register themselves
 * (tests/common/harness.h); the last ones reload kfdsync with test
 * parameters and put it back as it was.
 */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "kfd_raw.h"
#include "kfdsync_raw.h"
#include "kmod.h"
#include "sim_test.h"
#include "kfdsync_test.h"

#define KFD_MMAP_EVENTS		(2ULL << 62)
#define EVENTS_AREA		(4096 * 8)
#define MS			1000000LL
#define NOBODY			65534

static int kfdsync = -1;
static int sim = -1;
static uint32_t queue, queue2;

/* ---- helpers ---- */

static HsaEvent *registered_event(void)
{
	HsaEvent *ev = new_event();
	int ret = raw_register(kfdsync, ev->EventId, slot_addr(ev));

	if (ret)
		tap_bail("register %u: %s", ev->EventId, strerror(-ret));
	return ev;
}

/* Wait until the event's age is @age; false after @ms. */
static bool age_reaches(uint32_t id, uint64_t age, int ms)
{
	int64_t end = raw_now_ns() + ms * MS;

	while (raw_age(kfdsync, id) < age) {
		if (raw_now_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static void queue_done(uint32_t q, uint64_t end)
{
	int ret = kfdsim_queue_wait(sim, q, end, WAIT_MS * 3);

	if (ret)
		tap_bail("queue %u did not complete: %s", q, strerror(-ret));
}

/* The GPU writes @ev's slot, with an interrupt naming @int_id (0: none). */
static uint64_t gpu_write(uint32_t q, HsaEvent *ev, uint32_t int_id)
{
	uint32_t dw[16];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	pm4_release_mem(&b, slot_addr(ev), ev->EventId, PM4_RELEASE_MEM_DATA_64,
			int_id ? PM4_RELEASE_MEM_INT_AFTER_WRITE : PM4_RELEASE_MEM_INT_NONE,
			int_id);
	return submit(sim, q, &b);
}

/* An interrupt naming @id, no write. */
static uint64_t submit_int_only(uint32_t q, uint32_t id)
{
	uint32_t dw[16];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE, PM4_RELEASE_MEM_INT_ONLY, id);
	return submit(sim, q, &b);
}

/* Run @fn(@arg) in a child that drops to uid/gid @uid; its exit status. */
static int as_user(uid_t uid, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(99);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int param_set(const char *name, unsigned int val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%u", val);
	return kfdsync_param_write(name, buf);
}

/* ---- registration ---- */

/*
 * A slot must be exactly the event's own: event E with the slot of event
 * E + 512, at the same offset of another page of the area, is refused (it
 * used to be accepted, and E then fired on E + 512's signals); so is the
 * slot of E + 1 and an address in no events mapping.
 */
TEST(register_slot_of_other_id)
{
	HsaEvent *evs[520], *lo = NULL, *hi = NULL, *next = NULL;
	unsigned int n = 0, i;
	uint64_t local;

	while (n < 520 && !hi) {
		evs[n] = new_event();
		if (!lo)
			lo = evs[n];
		else if (evs[n]->EventId == lo->EventId + 1)
			next = evs[n];
		else if (evs[n]->EventId == lo->EventId + 512)
			hi = evs[n];
		n++;
	}
	if (!lo || !hi || !next)
		tap_bail("no events E, E + 1 and E + 512");
	/* Unregistered after each, in case it is (wrongly) accepted. */
	tap_ret(raw_register(kfdsync, lo->EventId, slot_addr(hi)), -EINVAL,
		"register_slot_of_id_plus_512_einval");
	raw_unregister(kfdsync, lo->EventId);
	tap_ret(raw_register(kfdsync, lo->EventId, slot_addr(next)), -EINVAL,
		"register_slot_of_next_id_einval");
	raw_unregister(kfdsync, lo->EventId);
	tap_ret(raw_register(kfdsync, lo->EventId, (uintptr_t)&local), -EINVAL,
		"register_slot_in_anonymous_memory_einval");
	raw_unregister(kfdsync, lo->EventId);
	tap_ret(raw_register(kfdsync, hi->EventId, slot_addr(hi)), 0,
		"register_own_slot_beyond_first_page");
	raw_unregister(kfdsync, hi->EventId);
	for (i = 0; i < n; i++)
		hsaKmtDestroyEvent(evs[i]);
}

/*
 * The caller's own second mapping of /dev/kfd's events area is accepted
 * (same page); a mapping at an offset into the area, or one whose start
 * was unmapped, is not (its start is not slot 0).
 */
TEST(register_mapping_shapes)
{
	HsaEvent *ev = new_event();
	uint32_t id = ev->EventId;
	int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	char *whole, *offset, *split;

	if (kfd < 0)
		tap_bail("open /dev/kfd: %s", strerror(errno));
	whole = mmap(NULL, EVENTS_AREA, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
		     KFD_MMAP_EVENTS);
	offset = mmap(NULL, EVENTS_AREA - 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		      kfd, KFD_MMAP_EVENTS + 4096);
	split = mmap(NULL, EVENTS_AREA, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
		     KFD_MMAP_EVENTS);
	if (whole == MAP_FAILED || offset == MAP_FAILED || split == MAP_FAILED)
		tap_bail("mmap /dev/kfd events: %s", strerror(errno));
	munmap(split, 4096);

	tap_ret(raw_register(kfdsync, id, (uintptr_t)whole + id * 8), 0,
		"register_second_whole_mapping");
	raw_unregister(kfdsync, id);
	tap_ret(raw_register(kfdsync, id, (uintptr_t)offset + id * 8), -EINVAL,
		"register_offset_mapping_einval");
	raw_unregister(kfdsync, id);
	tap_ret(raw_register(kfdsync, 600, (uintptr_t)split + 600 * 8), -EINVAL,
		"register_split_mapping_einval");
	raw_unregister(kfdsync, 600);
	munmap(whole, EVENTS_AREA);
	munmap(offset, EVENTS_AREA - 4096);
	munmap(split + 4096, EVENTS_AREA - 4096);
	close(kfd);
	hsaKmtDestroyEvent(ev);
}

/* ---- order within a fence context (I4) ---- */

/*
 * Two pending fences of one event share a seqno (the next signal); when
 * the watchdog ends the one with the earlier deadline, the other ends with
 * it, and a fence exported for that seqno afterwards is born ended.
 */
TEST(watchdog_ends_lower_seqnos)
{
	HsaEvent *ev = registered_event();
	uint32_t id = ev->EventId;
	uint64_t age = raw_age(kfdsync, id);
	int late = raw_export(kfdsync, id, age, 0);
	int early = raw_export(kfdsync, id, age, raw_now_ns() + 100 * MS);
	int after, next;

	if (late < 0 || early < 0)
		tap_bail("export: %d %d", late, early);
	raw_wait(early, WAIT_MS);
	tap_ret(raw_fence_status(early), -ETIMEDOUT, "watchdog_fence_etimedout");
	tap_ret(raw_fence_status(late), -ETIMEDOUT,
		"watchdog_ends_same_seqno_fence_with_it");
	after = raw_export(kfdsync, id, age, 0);
	tap_ret(after >= 0 ? raw_fence_status(after) : after, -ETIMEDOUT,
		"export_at_expired_seqno_born_etimedout");

	/* Past the expired seqno, fences pend again and signal. */
	hsaKmtSetEvent(ev);
	if (!age_reaches(id, age + 1, WAIT_MS))
		tap_bail("set not counted");
	next = raw_export(kfdsync, id, age + 1, 0);
	tap_ret(next >= 0 ? raw_fence_status(next) : next, 0, "export_past_expired_pending");
	hsaKmtSetEvent(ev);
	tap_ok(raw_wait(next, WAIT_MS) && raw_fence_status(next) == 1,
	       "export_past_expired_signals");
	close(late);
	close(early);
	close(after);
	close(next);
	raw_unregister(kfdsync, id);
	hsaKmtDestroyEvent(ev);
}

/*
 * On a CPU timeline, a fence created for a value at or below one the
 * watchdog ended is born with -ETIMEDOUT instead of pending behind it.
 */
TEST(timeline_watchdog_order)
{
	char saved[32] = "10000";
	int tl, f5, f3, f6;

	kfdsync_param_read("watchdog_ms", saved, sizeof(saved));
	param_set("watchdog_ms", 200);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	kfdsync_param_write("watchdog_ms", saved);
	if (tl < 0)
		tap_bail("open timeline: %s", strerror(-tl));
	f5 = raw_tl_fence(tl, 5);
	raw_wait(f5, WAIT_MS);
	tap_ret(raw_fence_status(f5), -ETIMEDOUT, "timeline_watchdog_etimedout");
	f3 = raw_tl_fence(tl, 3);
	tap_ret(raw_fence_status(f3), -ETIMEDOUT, "timeline_fence_below_expired_born_etimedout");
	f6 = raw_tl_fence(tl, 6);
	tap_ret(raw_fence_status(f6), 0, "timeline_fence_above_expired_pending");
	raw_tl_inc(tl, 6);
	tap_ret(raw_fence_status(f6), 1, "timeline_fence_above_expired_signals");
	close(f3);
	close(f5);
	close(f6);
	close(tl);
}

/* ---- lifetime follows references (I5) ---- */

/*
 * A producer creates and drops 40000 fences at random values on 32
 * timelines, merging each into one accumulator (which keeps only the
 * latest of each timeline), as a sw_sync user may: no -ENOSPC, and the
 * accumulator signals when every timeline is advanced.
 */
TEST(timeline_dropped_fences_leave)
{
	enum { TIMELINES = 32, FENCES = 40000 };
	int tl[TIMELINES], acc = -1, i, err = 0, f, m;
	uint32_t top[TIMELINES] = { 0 };
	unsigned int seed = 12;

	for (i = 0; i < TIMELINES; i++) {
		tl[i] = raw_open(KFDSYNC_TL_DEVICE);
		if (tl[i] < 0)
			tap_bail("open timeline %d: %s", i, strerror(-tl[i]));
	}
	for (i = 0; i < FENCES && !err; i++) {
		int t = rand_r(&seed) % TIMELINES;
		uint32_t v = 1 + rand_r(&seed) % 100000;

		f = raw_tl_fence(tl[t], v);
		if (f < 0) {
			err = f;
			break;
		}
		if (v > top[t])
			top[t] = v;
		if (acc < 0) {
			acc = f;
			continue;
		}
		m = raw_merge(acc, f);
		close(f);
		close(acc);
		acc = m;
		if (m < 0)
			err = m;
	}
	if (err)
		tap_diag("after %d fences: %s", i, strerror(-err));
	tap_ok(!err, "timeline_dropped_fences_no_enospc (%d fences)", i);
	for (i = 0; i < TIMELINES; i++)
		raw_tl_inc(tl[i], top[i]);
	tap_ok(acc >= 0 && raw_fence_status(acc) == 1, "timeline_accumulator_signals");
	close(acc);
	for (i = 0; i < TIMELINES; i++)
		close(tl[i]);
}

/* 3000 exported sync_files closed unsignalled do not use up max_fences. */
TEST(event_dropped_fences_leave)
{
	HsaEvent *ev = registered_event();
	uint32_t id = ev->EventId;
	struct kfdsync_event_query q;
	int i, f = 0;

	for (i = 0; i < 3000; i++) {
		f = raw_export(kfdsync, id, raw_age(kfdsync, id), 0);
		if (f < 0)
			break;
		close(f);
	}
	tap_ok(f >= 0, "event_dropped_fences_no_enospc (%d, %s)", i,
	       f < 0 ? strerror(-f) : "ok");
	i = raw_query(kfdsync, id, &q);
	tap_ok(!i && q.pending == 0, "event_dropped_fences_not_pending (%u)", q.pending);
	raw_unregister(kfdsync, id);
	hsaKmtDestroyEvent(ev);
}

/* ---- GPU and CPU signals, counted exactly (I3) ---- */

struct signaller {
	uint32_t q;
	HsaEvent *ev;
	unsigned int n;
	uint32_t int_id;	/* 0: interrupt for the event itself */
	bool slot;		/* write the slot */
	bool quiet;		/* ... without an interrupt */
	uint32_t delay_us;	/* between packets */
	uint64_t end;
};

static void *signaller_run(void *arg)
{
	struct signaller *s = arg;
	uint32_t dw[256];
	unsigned int i, k;

	for (i = 0; i < s->n; i += k) {
		struct pm4_buf b = PM4_BUF_INIT(dw);

		for (k = 0; k < 16 && i + k < s->n; k++) {
			if (s->delay_us)
				pm4_sim_delay(&b, s->delay_us);
			if (s->slot)
				pm4_release_mem(&b, slot_addr(s->ev), s->ev->EventId,
						PM4_RELEASE_MEM_DATA_64,
						s->quiet ? PM4_RELEASE_MEM_INT_NONE :
						PM4_RELEASE_MEM_INT_AFTER_WRITE,
						s->int_id ? s->int_id : s->ev->EventId);
			else
				pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE,
						PM4_RELEASE_MEM_INT_ONLY, s->int_id);
		}
		s->end = submit(sim, s->q, &b);
	}
	return NULL;
}

static void run_signallers(struct signaller *s, unsigned int n)
{
	pthread_t t[4];
	unsigned int i;

	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, signaller_run, &s[i]);
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		queue_done(s[i].q, s[i].end);
	}
}

/*
 * Two simulated queues of this process interrupt at once (two GPUs of one
 * process), each signalling its own event 300 times: each event's age is
 * exactly 300, never more at any time.
 */
TEST(gpu_two_queues_counted_exactly)
{
	HsaEvent *a = registered_event(), *b = registered_event();
	uint64_t a0 = raw_age(kfdsync, a->EventId), b0 = raw_age(kfdsync, b->EventId);
	struct signaller s[2] = {
		{ .q = queue, .ev = a, .n = 300, .slot = true },
		{ .q = queue2, .ev = b, .n = 300, .slot = true },
	};
	uint64_t da, db;

	run_signallers(s, 2);
	age_reaches(a->EventId, a0 + 300, 2000);
	age_reaches(b->EventId, b0 + 300, 2000);
	da = raw_age(kfdsync, a->EventId) - a0;
	db = raw_age(kfdsync, b->EventId) - b0;
	tap_ok(da == 300 && db == 300, "gpu_two_queues_each_counted_exactly (%" PRIu64
	       ", %" PRIu64 " of 300)", da, db);
	raw_unregister(kfdsync, a->EventId);
	raw_unregister(kfdsync, b->EventId);
	hsaKmtDestroyEvent(a);
	hsaKmtDestroyEvent(b);
}

/*
 * One queue keeps interrupting for an event whose slot is never written
 * (amdkfd then scans every slot of the process) while another signals an
 * event 300 times: every signal is counted, the scan's acknowledgments
 * too.
 */
TEST(gpu_scan_path_counted_exactly)
{
	HsaEvent *x = registered_event(), *y = registered_event();
	uint64_t y0 = raw_age(kfdsync, y->EventId), dy;
	struct signaller s[2] = {
		{ .q = queue, .ev = x, .n = 1500, .int_id = x->EventId },
		{ .q = queue2, .ev = y, .n = 300, .slot = true },
	};

	run_signallers(s, 2);
	age_reaches(y->EventId, y0 + 300, 2000);
	dy = raw_age(kfdsync, y->EventId) - y0;
	tap_ok(dy == 300, "gpu_scan_path_counted_exactly (%" PRIu64 " of 300)", dy);
	tap_ok(raw_age(kfdsync, x->EventId) == 0, "gpu_unwritten_slot_never_counted");
	raw_unregister(kfdsync, x->EventId);
	raw_unregister(kfdsync, y->EventId);
	hsaKmtDestroyEvent(x);
	hsaKmtDestroyEvent(y);
}

/*
 * The GPU writes an event's slot 500 times without interrupts while another
 * queue keeps interrupting for an unwritten slot, so that only amdkfd's
 * scans acknowledge the writes, racing with them: kfdsync counts exactly
 * the signals amdkfd delivered (its own event age, 6.5+), no fewer.
 */
TEST(gpu_scan_acks_match_amdkfd)
{
	HsaEvent *x = registered_event(), *y = registered_event();
	struct signaller s[2] = {
		{ .q = queue, .ev = x, .n = 3000, .int_id = x->EventId },
		{ .q = queue2, .ev = y, .n = 500, .slot = true, .quiet = true,
		  .delay_us = 50 },
	};
	uint64_t k0, a0, dk, da;
	int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);

	if (kfd < 0 || !kfd_raw_has_event_age(kfd)) {
		tap_skip("amdkfd has no event ages before 6.5", "gpu_scan_acks_match_amdkfd");
		goto out;
	}
	k0 = raw_age(kfdsync, y->EventId);
	a0 = kfd_raw_event_age(kfd, y->EventId);
	run_signallers(s, 2);
	/* A last interrupt for y acknowledges a write still in its slot. */
	queue_done(queue, submit_int_only(queue, y->EventId));
	usleep(20000);
	dk = raw_age(kfdsync, y->EventId) - k0;
	da = kfd_raw_event_age(kfd, y->EventId) - a0;
	tap_ok(dk == da && dk > 0, "gpu_scan_acks_match_amdkfd (kfdsync %" PRIu64
	       ", amdkfd %" PRIu64 " of 500 writes)", dk, da);
out:
	if (kfd >= 0)
		close(kfd);
	raw_unregister(kfdsync, x->EventId);
	raw_unregister(kfdsync, y->EventId);
	hsaKmtDestroyEvent(x);
	hsaKmtDestroyEvent(y);
}

/*
 * An interrupt names an event amdkfd destroyed, whose slot the GPU wrote:
 * amdkfd falls back to scanning and acknowledges another event's written
 * slot; that signal is counted.
 */
TEST(gpu_destroyed_id_scan_counts_others)
{
	HsaEvent *x = registered_event(), *z = registered_event();
	uint64_t x0 = raw_age(kfdsync, x->EventId);
	uint32_t zid = z->EventId;
	uint64_t zslot = slot_addr(z);
	uint32_t dw[16];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	hsaKmtDestroyEvent(z);
	queue_done(queue, gpu_write(queue, x, 0));
	pm4_release_mem(&b, zslot, zid, PM4_RELEASE_MEM_DATA_64,
			PM4_RELEASE_MEM_INT_AFTER_WRITE, zid);
	queue_done(queue, submit(sim, queue, &b));
	age_reaches(x->EventId, x0 + 1, WAIT_MS);
	usleep(20000);
	x0 = raw_age(kfdsync, x->EventId) - x0;
	tap_ok(x0 == 1, "gpu_scan_after_destroyed_id_counts_other_event (+%" PRIu64 ")", x0);
	raw_unregister(kfdsync, x->EventId);
	raw_unregister(kfdsync, zid);
	hsaKmtDestroyEvent(x);
}

struct setter {
	HsaEvent *ev;
	unsigned int n;
};

static void *setter_run(void *arg)
{
	struct setter *s = arg;
	unsigned int i;

	for (i = 0; i < s->n; i++)
		hsaKmtSetEvent(s->ev);
	return NULL;
}

/* 32 threads set their own events 200 times each: every set is counted. */
TEST(cpu_sets_many_threads_counted)
{
	enum { THREADS = 32, SETS = 200 };
	struct setter s[THREADS];
	pthread_t t[THREADS];
	struct kfdsync_status st;
	bool ok = true;
	int i;

	for (i = 0; i < THREADS; i++) {
		s[i].ev = registered_event();
		s[i].n = SETS;
	}
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, setter_run, &s[i]);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < THREADS; i++) {
		uint64_t age = raw_age(kfdsync, s[i].ev->EventId);

		if (age != SETS) {
			tap_diag("event %u: age %" PRIu64, s[i].ev->EventId, age);
			ok = false;
		}
		raw_unregister(kfdsync, s[i].ev->EventId);
		hsaKmtDestroyEvent(s[i].ev);
	}
	tap_ok(ok, "cpu_sets_many_threads_each_counted");
	i = raw_status(kfdsync, &st);
	tap_ok(!i && st.hooks_missed == 0, "hooks_missed_zero (%llu)",
	       (unsigned long long)st.hooks_missed);
}

/* ---- events amdkfd destroys ---- */

/*
 * amdkfd destroys an event: its pending fence ends with -ECANCELED at once,
 * and a new event that gets the same id never signals it.
 */
TEST(destroyed_event_ends_fences)
{
	HsaEvent *ev = registered_event(), *fresh;
	uint32_t id = ev->EventId;
	struct kfdsync_event_query q;
	int fence = raw_export(kfdsync, id, raw_age(kfdsync, id), 0);

	hsaKmtDestroyEvent(ev);
	raw_wait(fence, 2000);
	tap_ret(raw_fence_status(fence), -ECANCELED, "destroyed_event_fence_ecanceled");
	tap_ret(raw_query(kfdsync, id, &q) ? -1 : q.error, -ECANCELED,
		"destroyed_event_sticky_ecanceled");
	close(fence);

	/* The id comes back for a new event; the old registration stays dead. */
	fresh = new_event();
	if (fresh->EventId != id) {
		tap_skip("amdkfd gave another id", "reused_id_never_signals_old_registration");
	} else {
		fence = raw_export(kfdsync, id, raw_age(kfdsync, id), 0);
		queue_done(queue, gpu_write(queue, fresh, fresh->EventId));
		hsaKmtSetEvent(fresh);
		tap_ret(fence >= 0 ? raw_fence_status(fence) : fence, -ECANCELED,
			"reused_id_never_signals_old_registration");
		close(fence);
	}
	raw_unregister(kfdsync, id);
	hsaKmtDestroyEvent(fresh);
}

/* ---- watched and written memory is the process's own page ---- */

/* Export "value == 1" at @value, then write 1 and set the event. */
static int condition_after_write(volatile int64_t *value)
{
	HsaEvent *ev = registered_event();
	int fence, status;

	fence = raw_condition(kfdsync, ev->EventId, (const void *)value,
			      KFDSYNC_CONDITION_EQ, 1, raw_now_ns() + 3000 * MS);
	if (fence < 0) {
		status = fence;
	} else {
		*value = 1;
		hsaKmtSetEvent(ev);
		raw_wait(fence, 5000);
		status = raw_fence_status(fence);
		close(fence);
	}
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
	return status;
}

/* A fresh anonymous page (never written: the shared zero page). */
TEST(condition_on_fresh_anonymous_page)
{
	int64_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	tap_ret(condition_after_write(p), 1, "condition_fresh_anonymous_page_signals");
	munmap(p, 4096);
}

/* A private mapping of a file: the process's write makes its own copy. */
TEST(condition_on_private_file_mapping)
{
	int fd = memfd_create("kfdsync-private", MFD_CLOEXEC);
	int64_t zero = 0, *p;

	if (fd < 0 || pwrite(fd, &zero, sizeof(zero), 0) != sizeof(zero) ||
	    ftruncate(fd, 4096))
		tap_bail("memfd: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	tap_ret(condition_after_write(p), 1, "condition_private_file_mapping_signals");
	munmap(p, 4096);
	close(fd);
}

/*
 * Shared mappings of a real file (ramfs here: not shmem) are refused for
 * imports and conditions; shmem and anonymous memory are accepted.
 */
TEST(file_backed_memory_refused)
{
	const char *dir = "/tmp/kfdsync-ramfs";
	int tl, fence, fd, mfd;
	HsaEvent *ev = registered_event();
	uint64_t *file, *shm, anon = 0;

	mkdir(dir, 0700);
	if (mount("none", dir, "ramfs", 0, NULL))
		tap_bail("mount ramfs: %s", strerror(errno));
	fd = open("/tmp/kfdsync-ramfs/f", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	mfd = memfd_create("kfdsync-shm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 4096) || mfd < 0 || ftruncate(mfd, 4096))
		tap_bail("files: %s", strerror(errno));
	file = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	fence = raw_tl_fence(tl, 1);

	tap_ret(raw_import_memory(kfdsync, fence, file, 1, 2), -EFAULT,
		"import_file_shared_mapping_efault");
	tap_ret(raw_condition(kfdsync, ev->EventId, file, KFDSYNC_CONDITION_EQ, 1, 0),
		-EFAULT, "condition_file_shared_mapping_efault");
	tap_ret(raw_import_memory(kfdsync, fence, shm, 1, 2), 0, "import_shmem_accepted");
	tap_ret(raw_import_memory(kfdsync, fence, &anon, 1, 2), 0, "import_anonymous_accepted");
	raw_tl_inc(tl, 1);
	for (int i = 0; i < 1000 && (*shm != 1 || anon != 1); i++)
		usleep(1000);
	tap_ok(*shm == 1 && anon == 1, "imports_written");

	close(fence);
	close(tl);
	munmap(file, 4096);
	munmap(shm, 4096);
	close(fd);
	close(mfd);
	umount(dir);
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
}

/* ---- per-user limits ---- */

/* As an unprivileged user with RLIMIT_MEMLOCK of 4 pages: 4 pins, then not. */
static int memlock_child(void *arg)
{
	struct rlimit rl = { 4 * 4096, 4 * 4096 };
	static uint64_t words[6][512];
	int ctx, tl, fence, i, ret;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 2;
	ctx = raw_open(RAW_KFDSYNC_DEV);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	if (ctx < 0 || tl < 0)
		return 3;
	fence = raw_tl_fence(tl, 1);
	for (i = 0; i < 4; i++)
		if (raw_import_memory(ctx, fence, &words[i][0], 1, 2))
			return 10 + i;
	ret = raw_import_memory(ctx, fence, &words[4][0], 1, 2);
	if (ret != -ENOMEM)
		return 20;
	/* The imports end: their pins go, and new ones fit again. */
	raw_tl_inc(tl, 1);
	for (i = 0; i < 1000 && words[3][0] != 1; i++)
		usleep(1000);
	usleep(50000);
	fence = raw_tl_fence(tl, 2);
	if (raw_import_memory(ctx, fence, &words[5][0], 1, 2))
		return 30;
	return 0;
}

/* Let an unprivileged child use kfdsync's nodes (the guest is ours). */
static void nodes_for_everyone(void)
{
	chmod(RAW_KFDSYNC_DEV, 0666);
	chmod(KFDSYNC_TL_DEVICE, 0666);
}

TEST(pins_charged_to_memlock)
{
	nodes_for_everyone();
	tap_ret(as_user(NOBODY, memlock_child, NULL), 0,
		"pins_charged_to_rlimit_memlock");
}

/* Opens contexts (or timelines) up to the limit: 0 if the next gets EMFILE. */
static int open_limit_child(void *arg)
{
	const char *dev = arg;
	int fds[8], i, fd;

	for (i = 0; i < 4; i++) {
		fds[i] = raw_open(dev);
		if (fds[i] < 0)
			return 10 + i;
	}
	fd = raw_open(dev);
	return fd == -EMFILE ? 0 : 20;
}

static void per_user_limit(const char *param, const char *dev, const char *name)
{
	char saved[32] = "1024";
	int code, fd;

	kfdsync_param_read(param, saved, sizeof(saved));
	param_set(param, 4);
	code = as_user(NOBODY, open_limit_child, (void *)dev);
	/* Root is another user: unaffected while nobody sits at the limit. */
	fd = raw_open(dev);
	kfdsync_param_write(param, saved);
	tap_ret(code, 0, "%s_user_limit_emfile", name);
	tap_ok(fd >= 0, "%s_other_user_unaffected", name);
	if (fd >= 0)
		close(fd);
}

TEST(per_user_contexts_and_timelines)
{
	nodes_for_everyone();
	per_user_limit("max_user_contexts", RAW_KFDSYNC_DEV, "contexts");
	per_user_limit("max_user_timelines", KFDSYNC_TL_DEVICE, "timelines");
}

/* ---- the gate and all-or-nothing hooks (reload kfdsync) ---- */

static char saved_params[256];

/* Reload kfdsync with @params (plus the saved ones). */
static void reload(const char *params)
{
	char all[512];
	int ret;

	if (kfdsync >= 0)
		close(kfdsync);
	kfdsync = -1;
	ret = kmod_unload("kfdsync", 50);
	if (ret)
		tap_bail("rmmod kfdsync: %s", strerror(-ret));
	snprintf(all, sizeof(all), "%s %s", saved_params, params);
	ret = kmod_load_project("kmod/kfdsync.ko", all);
	if (ret)
		tap_bail("insmod kfdsync %s: %s", all, strerror(-ret));
	kfdsync = raw_open(RAW_KFDSYNC_DEV);
	if (kfdsync < 0)
		tap_bail("open %s: %s", RAW_KFDSYNC_DEV, strerror(-kfdsync));
}

/* The kernel log has a line containing @needle (root reads /dev/kmsg). */
static bool kmsg_has(const char *needle)
{
	char buf[2048];
	bool found = false;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;
		buf[n] = '\0';
		found |= strstr(buf, needle) != NULL;
	}
	close(fd);
	return found;
}

TEST(unverified_release_relay_mode)
{
	struct kfdsync_event_query q;
	struct kfdsync_status st;
	struct kfdsync_info info;
	HsaEvent *ev;

	if (!getenv("KFDSYNC_KMOD_DIR"))
		tap_bail("needs the guest");
	reload("assume_unverified=1");
	raw_info(kfdsync, &info);
	raw_status(kfdsync, &st);
	tap_ok(!info.hooks &&
	       (info.info_flags & KFDSYNC_INFO_AMDKFD_UNVERIFIED),
	       "unverified_info_no_hooks (hooks %#x, flags %#x)", info.hooks,
	       info.info_flags);
	tap_ok(st.source == KFDSYNC_SOURCE_RELAY &&
	       st.relay_reason == KFDSYNC_RELAY_UNVERIFIED &&
	       strstr(st.detail, "not verified"),
	       "unverified_status_says_why (%u, \"%s\", verified \"%s\")",
	       st.relay_reason, st.detail, st.verified);
	tap_ok(kmsg_has("is not verified: relay mode"), "unverified_kernel_log");
	ev = registered_event();
	tap_ok(!raw_query(kfdsync, ev->EventId, &q) && q.source == KFDSYNC_SOURCE_RELAY,
	       "unverified_event_relayed");
	hsaKmtSetEvent(ev);
	usleep(100000);
	tap_ok(raw_age(kfdsync, ev->EventId) == 0 && !raw_relay(kfdsync, ev->EventId) &&
	       raw_age(kfdsync, ev->EventId) == 1, "unverified_only_relay_counts");
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
}

/*
 * One hook fails to attach (fail_hook=cpu_set): none is attached, and a
 * GPU signal relayed by userspace counts once (with the GPU hook attached
 * alone it used to count twice).
 */
TEST(one_hook_missing_attaches_none)
{
	struct kfdsync_status st;
	struct kfdsync_info info;
	HsaEvent *ev;
	uint64_t age;

	reload("fail_hook=cpu_set");
	raw_info(kfdsync, &info);
	raw_status(kfdsync, &st);
	tap_ok(!info.hooks, "partial_hooks_none_attached (%#x)", info.hooks);
	tap_ok(st.relay_reason == KFDSYNC_RELAY_MISSING &&
	       strstr(st.detail, "cpu_set"), "partial_hooks_status_says_why (\"%s\")",
	       st.detail);
	ev = registered_event();
	age = raw_age(kfdsync, ev->EventId);
	queue_done(queue, gpu_write(queue, ev, ev->EventId));
	if (hsaKmtWaitOnEvent(ev, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
		tap_bail("event not signalled");
	/* The relay reports the one signal amdkfd delivered. */
	raw_relay(kfdsync, ev->EventId);
	age = raw_age(kfdsync, ev->EventId) - age;
	tap_ok(age == 1, "partial_hooks_signal_counted_once (+%" PRIu64 ")", age);
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(ev);
	reload("");
	raw_info(kfdsync, &info);
	tap_ok(info.hooks && info.hooks == info.hooks_supported,
	       "hooks_back_after_reload (%#x)", info.hooks);
}

/* ---- set-up ---- */

static void setup(void)
{
	struct kfdsync_info info;
	char buf[32];
	static const char *const params[] = {
		"watchdog_ms", "watchdog_max_ms", "max_fences", "max_events",
	};
	unsigned int i;
	size_t len = 0;

	scrub_hsa_env();
	require_sim_guest();
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD failed");
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);
	queue2 = queue_create(sim);
	kfdsync = open_kfdsync();
	if (raw_info(kfdsync, &info) || info.hooks != info.hooks_supported) {
		printf("1..0 # SKIP needs kfdsync with its hooks (hooks %#x)\n", info.hooks);
		exit(0);
	}
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		if (!kfdsync_param_read(params[i], buf, sizeof(buf)))
			len += snprintf(saved_params + len, sizeof(saved_params) - len,
					"%s%s=%s", len ? " " : "", params[i], buf);
}

int main(int argc, char **argv)
{
	harness_setup = setup;
	return harness_main(argc, argv);
}
