// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_counting: GPU and CPU signals, counted exactly.
 *
 * How this program works (see kfdsync_hardening.h): GPU signals are counted
 * once per write amdkfd acknowledges, with two simulated queues of this
 * process interrupting at once and on amdkfd's scan path (an interrupt for
 * an unwritten slot, or for a destroyed event's id); CPU sets from many
 * threads are all counted, and no hook is missed. Tests register
 * themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <pthread.h>

#include "kfd_raw.h"
#include "sim_test.h"
#include "kfdsync_hardening.h"

/* A second queue: two interrupt handlers of this process at once. */
static uint32_t queue2;

/* An interrupt naming @id, no write. */
static uint64_t submit_int_only(uint32_t q, uint32_t id)
{
	uint32_t dw[16];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE, PM4_RELEASE_MEM_INT_ONLY, id);
	return submit(sim, q, &b);
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

/* @y's signals counted since @y0, once @want arrived or after 2 s. */
static uint64_t counted_since(HsaEvent *y, uint64_t y0, uint64_t want)
{
	age_reaches(y->EventId, y0 + want, 2000);
	usleep(20000);
	return raw_age(kfdsync, y->EventId) - y0;
}

static void drop_pair(HsaEvent *x, HsaEvent *y)
{
	raw_unregister(kfdsync, x->EventId);
	raw_unregister(kfdsync, y->EventId);
	hsaKmtDestroyEvent(x);
	hsaKmtDestroyEvent(y);
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
	drop_pair(a, b);
}

/*
 * amdkfd's scan path acknowledges a write: the GPU writes an event's slot
 * without an interrupt, then interrupts for another event whose slot is
 * never written (amdkfd then scans every slot of the process), 300 times
 * in order on one queue. Every write is counted, none twice, the unwritten
 * slot never.
 */
TEST(gpu_scan_path_counts_each_write)
{
	HsaEvent *x = registered_event(), *y = registered_event();
	uint64_t y0 = raw_age(kfdsync, y->EventId), dy, end = 0;
	uint32_t dw[256];
	unsigned int i, k;

	for (i = 0; i < 300; i += k) {
		struct pm4_buf b = PM4_BUF_INIT(dw);

		for (k = 0; k < 8 && i + k < 300; k++) {
			pm4_release_mem(&b, slot_addr(y), y->EventId, PM4_RELEASE_MEM_DATA_64,
					PM4_RELEASE_MEM_INT_NONE, 0);
			pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE,
					PM4_RELEASE_MEM_INT_ONLY, x->EventId);
		}
		end = submit(sim, queue, &b);
	}
	queue_done(queue, end);
	dy = counted_since(y, y0, 300);
	tap_ok(dy == 300, "gpu_scan_path_counts_each_write (%" PRIu64 " of 300)", dy);
	tap_ok(raw_age(kfdsync, x->EventId) == 0, "gpu_unwritten_slot_never_counted");
	drop_pair(x, y);
}

/*
 * The same, racing: one queue keeps interrupting for the unwritten slot
 * while another writes an event's slot 300 times, each with its interrupt,
 * so that amdkfd's scans and the event's own interrupts acknowledge its
 * writes at once. Never more than 300 (never early). Fewer only by a write
 * that lands between one handler's hook and its acknowledging store, which
 * amdkfd overwrites and does not deliver either ("Counting" in
 * kmod/kfdsync_slot.c): a vCPU preempted inside a few instructions, seen
 * once in 300 under a loaded host in a CI check (2026-12-02). More than 3
 * would be kfdsync losing signals, not that window.
 */
TEST(gpu_scan_path_races_never_more)
{
	HsaEvent *x = registered_event(), *y = registered_event();
	uint64_t y0 = raw_age(kfdsync, y->EventId), dy;
	struct signaller s[2] = {
		{ .q = queue, .ev = x, .n = 1500, .int_id = x->EventId },
		{ .q = queue2, .ev = y, .n = 300, .slot = true },
	};

	run_signallers(s, 2);
	dy = counted_since(y, y0, 300);
	if (dy < 300 && dy >= 297)
		tap_diag("%" PRIu64 " write(s) merged with the one before in amdkfd's "
			 "acknowledgment window", 300 - dy);
	tap_ok(dy <= 300 && dy >= 297, "gpu_scan_path_races_never_more (%" PRIu64 " of 300)",
	       dy);
	tap_ok(raw_age(kfdsync, x->EventId) == 0, "gpu_unwritten_slot_never_counted_racing");
	drop_pair(x, y);
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
	drop_pair(x, y);
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

static void setup(void)
{
	hardening_setup();
	hardening_sim();
	queue2 = queue_create(sim);
}

int main(int argc, char **argv)
{
	harness_require = hardening_require;
	harness_setup = setup;
	return harness_main(argc, argv);
}
