// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_events: registration, fence order and fence lifetime.
 *
 * How this program works (see kfdsync_hardening.h): it checks that
 * registration refuses any slot but exactly the event's own in the
 * caller's whole /dev/kfd events mapping; that a watchdog that ends a fence
 * ends every fence of its event at or below its seqno, and that later
 * fences there are born ended (CPU timelines too); that fences nobody
 * holds leave the queues and count against nothing; and that an event
 * amdkfd destroys ends its fences, its id reused by a new event never
 * signalling the old event's fences. Tests register themselves
 * (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/mman.h>

#include "sim_test.h"
#include "kfdsync_hardening.h"

#define KFD_MMAP_EVENTS		(2ULL << 62)
#define EVENTS_AREA		(4096 * 8)

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

static void setup(void)
{
	hardening_setup();
	hardening_sim();
}

int main(int argc, char **argv)
{
	harness_require = hardening_require;
	harness_setup = setup;
	return harness_main(argc, argv);
}
