// SPDX-License-Identifier: MIT
/*
 * kfdsync_export_sync_file: KFD signal events exported as sync_files.
 *
 * How this program works: with its own event registered (kfdsync_export.h),
 * it checks a registration's age and source, sync_files that signal after
 * a simulated RELEASE_MEM and after hsaKmtSetEvent(), fences born
 * signalled, an event beyond the first page of amdkfd's events area, that
 * a slot write counts once (and only for the event an interrupt names),
 * the debugfs events file, and the watchdog. Tests register themselves
 * (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/mount.h>

#include "sim_test.h"
#include "kfdsync_export.h"

/* A fresh registration: age 0, nothing pending, the mode's source. */
TEST(event_register)
{
	HsaEvent *ev = new_event();
	struct kfdsync_event_query q;
	uint64_t age = 99;
	int ret;

	ret = __ev_register(kfdsync, ev->EventId, slot_addr(ev), &age);
	tap_ok(!ret && age == 0, "event_register_age_zero (%d, age %" PRIu64 ")", ret, age);
	if (!ret)
		ret = __ev_query(kfdsync, ev->EventId, &q);
	tap_ok(!ret && q.age == 0 && !q.error && !q.pending &&
	       q.source == (relay_mode ? KFDSYNC_SOURCE_RELAY : KFDSYNC_SOURCE_HOOKS),
	       "event_query_source_%s (source %u)", relay_mode ? "relay" : "hooks", q.source);
	if (!ret) {
		struct kfdsync_event_unregister u = { .event_id = ev->EventId };

		ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u);
	}
	hsaKmtDestroyEvent(ev);
}

TEST(release_mem)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId);
	uint64_t irqs = queue_status(sim, queue).interrupts, end;
	struct sync_fence_info fi;
	char name[64];
	int fence, status;

	fence = export(kfdsync, ev1->EventId, age);
	tap_ok(!readable(fence, 0) && fence_status(fence) == 0,
	       "sync_file_pending_before_submit");

	end = submit_signal(queue, ev1, 50000);
	tap_ok(readable(fence, WAIT_MS) && completed_before_wake(queue, end, irqs),
	       "sync_file_signalled_after_release_mem");

	status = fence_info(fence, &fi);
	snprintf(name, sizeof(name), "kfdsync:%d:ev%u", (int)getpid(), ev1->EventId);
	tap_ok(status == 1 && !strcmp(fi.driver_name, "kfdsync") && !strcmp(fi.obj_name, name),
	       "sync_file_info_names (status %d, driver '%s', timeline '%s')", status,
	       fi.driver_name, fi.obj_name);
	close(fence);

	tap_ok(wait_age(kfdsync, ev1->EventId, age + 1) &&
	       ev_age(kfdsync, ev1->EventId) == age + 1, "event_age_counts_one_signal");

	/* A fence exported now waits for the next signal: the CPU's. */
	age = ev_age(kfdsync, ev1->EventId);
	fence = export(kfdsync, ev1->EventId, age);
	tap_ok(!readable(fence, 0) && hsaKmtSetEvent(ev1) == HSAKMT_STATUS_SUCCESS &&
	       readable(fence, WAIT_MS) && fence_status(fence) == 1,
	       "sync_file_signalled_by_set_event");
	close(fence);
	wait_age(kfdsync, ev1->EventId, age + 1);
}

TEST(born_signalled)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), end;
	int fence;

	/* Submit-time age, signal, then export: born signalled. */
	end = submit_signal(queue, ev1, 0);
	if (kfdsim_queue_wait(sim, queue, end, WAIT_MS))
		tap_bail("queue did not complete");
	wait_age(kfdsync, ev1->EventId, age + 1);
	fence = export(kfdsync, ev1->EventId, age);
	tap_ok(readable(fence, 0) && fence_status(fence) == 1, "export_born_signalled");
	close(fence);

	/* Export at the current age: nothing signals, it stays pending. */
	fence = export(kfdsync, ev1->EventId, age + 1);
	tap_ok(!readable(fence, 300) && fence_status(fence) == 0,
	       "export_after_age_stays_pending");
	close(fence);
}

/*
 * An event beyond the first page of amdkfd's 32 KiB events area (ids 512
 * and up; amdkfd allocates the area as one block of 8 pages).
 */
TEST(high_id)
{
	static HsaEvent *evs[600];
	unsigned int n = 0, i;
	HsaEvent *high = NULL;
	struct relay relay;
	uint64_t irqs, end;
	int ret, fence;

	while (n < ARRAY_SIZE(evs) && !high) {
		evs[n] = new_event();
		if (evs[n]->EventId >= 512 + 7)
			high = evs[n];
		n++;
	}
	if (!high)
		tap_bail("no event id beyond 519 after %u events", n);
	ret = __ev_register(kfdsync, high->EventId, slot_addr(high), NULL);
	tap_ok(!ret, "event_register_beyond_first_page (id %u: %s)", high->EventId,
	       strerror(-ret));
	if (ret) {
		tap_skip("not registered", "sync_file_signalled_beyond_first_page");
	} else {
		relay_start(&relay, kfdsync, high);
		fence = export(kfdsync, high->EventId, 0);
		irqs = queue_status(sim, queue).interrupts;
		end = submit_signal(queue, high, 20000);
		tap_ok(readable(fence, WAIT_MS) && fence_status(fence) == 1 &&
		       completed_before_wake(queue, end, irqs),
		       "sync_file_signalled_beyond_first_page");
		close(fence);
		relay_stop(&relay);
	}
	for (i = 0; i < n; i++)
		hsaKmtDestroyEvent(evs[i]);
}

/*
 * A slot write is one signal, counted when amdkfd acknowledges it, however
 * many interrupts come. The GPU writes ev1's slot without an
 * interrupt; two interrupts for another event follow (amdkfd's exact-id
 * path sets only that one and leaves ev1's slot set): amdkfd delivered
 * nothing of ev1, and kfdsync counts nothing, in either mode. An interrupt
 * for ev1 then makes amdkfd acknowledge and set it: one signal. The next
 * write is a new signal.
 */
TEST(slot_counted_once)
{
	HsaEvent *ev3 = new_event();
	uint64_t age = ev_age(kfdsync, ev1->EventId), a1, a2, a3, end;
	uint32_t dw[64];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	int i;

	/* Earlier sets nobody waited for left ev1 set in amdkfd (hooks mode). */
	if (!relay_mode)
		hsaKmtResetEvent(ev1);
	pm4_release_mem(&b, slot_addr(ev1), ev1->EventId, PM4_RELEASE_MEM_DATA_64,
			PM4_RELEASE_MEM_INT_NONE, 0);
	end = submit(sim, queue, &b);
	if (kfdsim_queue_wait(sim, queue, end, WAIT_MS))
		tap_bail("queue did not complete");
	for (i = 0; i < 2; i++) {
		submit_signal(queue, ev3, 0);
		/* amdkfd sets ev3 after kfdsync's entry hook looked. */
		if (hsaKmtWaitOnEvent(ev3, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
			tap_bail("ev3 not signalled");
	}
	a1 = ev_age(kfdsync, ev1->EventId) - age;
	tap_ok(a1 == 0, "gpu_written_slot_not_counted_before_acknowledged (+%" PRIu64 ")",
	       a1);

	pm4_reset(&b);
	pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE, PM4_RELEASE_MEM_INT_ONLY,
			ev1->EventId);
	submit(sim, queue, &b);
	if (relay_mode) {
		wait_age(kfdsync, ev1->EventId, age + 1);
	} else {
		if (hsaKmtWaitOnEvent(ev1, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
			tap_bail("ev1 not signalled");
	}
	a2 = ev_age(kfdsync, ev1->EventId) - age;
	tap_ok(a2 == 1 && slot_of(ev1) == UNSIGNALED_SLOT,
	       "gpu_acknowledged_slot_counted_once (+%" PRIu64 ")", a2);

	submit_signal(queue, ev1, 0);
	wait_age(kfdsync, ev1->EventId, age + 2);
	a3 = ev_age(kfdsync, ev1->EventId) - age;
	tap_ok(a3 == 2, "gpu_next_write_counted (+%" PRIu64 ")", a3);
	hsaKmtDestroyEvent(ev3);
}

/*
 * An interrupt that names a registered event whose slot is set is handled
 * by amdkfd for that event alone (its exact-id path), and kfdsync looks at
 * that event alone too: ev1's slot, written without an interrupt,
 * is not counted by ev4's interrupt (amdkfd does not set ev1 either), and
 * is counted once by its own.
 */
TEST(exact_id_interrupt)
{
	HsaEvent *ev4 = new_event();
	struct kfdsync_event_unregister u = { .event_id = ev4->EventId };
	uint64_t age1, age4, d1, d4, end;
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	if (relay_mode) {
		tap_skip("relay mode: no interrupt hook", "exact_id_interrupt_counts_named_event_only");
		tap_skip("relay mode: no interrupt hook", "exact_id_interrupt_then_own_interrupt");
		hsaKmtDestroyEvent(ev4);
		return;
	}
	if (__ev_register(kfdsync, ev4->EventId, slot_addr(ev4), NULL))
		tap_bail("register ev4: %s", strerror(errno));
	hsaKmtResetEvent(ev1);
	age1 = ev_age(kfdsync, ev1->EventId);
	age4 = ev_age(kfdsync, ev4->EventId);
	pm4_release_mem(&b, slot_addr(ev1), ev1->EventId, PM4_RELEASE_MEM_DATA_64,
			PM4_RELEASE_MEM_INT_NONE, 0);
	end = submit(sim, queue, &b);
	if (kfdsim_queue_wait(sim, queue, end, WAIT_MS))
		tap_bail("queue did not complete");
	submit_signal(queue, ev4, 0);
	if (hsaKmtWaitOnEvent(ev4, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
		tap_bail("ev4 not signalled");
	wait_age(kfdsync, ev4->EventId, age4 + 1);
	d1 = ev_age(kfdsync, ev1->EventId) - age1;
	d4 = ev_age(kfdsync, ev4->EventId) - age4;
	tap_ok(d4 == 1 && d1 == 0 && slot_of(ev1) != UNSIGNALED_SLOT,
	       "exact_id_interrupt_counts_named_event_only (ev1 +%" PRIu64 ", ev4 +%" PRIu64 ")",
	       d1, d4);

	pm4_reset(&b);
	pm4_release_mem(&b, 0, 0, PM4_RELEASE_MEM_DATA_NONE, PM4_RELEASE_MEM_INT_ONLY,
			ev1->EventId);
	submit(sim, queue, &b);
	if (hsaKmtWaitOnEvent(ev1, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
		tap_bail("ev1 not signalled");
	wait_age(kfdsync, ev1->EventId, age1 + 1);
	usleep(20000);	/* let a wrong second count show */
	d1 = ev_age(kfdsync, ev1->EventId) - age1;
	tap_ok(d1 == 1, "exact_id_interrupt_then_own_interrupt (ev1 +%" PRIu64 ")", d1);

	if (ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u))
		tap_bail("unregister ev4: %s", strerror(errno));
	hsaKmtDestroyEvent(ev4);
}

#define DEBUGFS_EVENTS	"/sys/kernel/debug/kfdsync/events"

/*
 * <debugfs>/kfdsync/events lists our event with its age, source
 * and pending fences. Lines: ctx tgid source id age slot pending error.
 */
TEST(debugfs)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), l_age;
	const char *want = relay_mode ? "relay" : "hooks";
	struct kfdsync_event_query q;
	unsigned int l_id, l_pending;
	char line[256], source[16];
	int fence, l_tgid, found = 0;
	FILE *f;

	if (access(DEBUGFS_EVENTS, R_OK) &&
	    (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) ||
	     access(DEBUGFS_EVENTS, R_OK))) {
		tap_skip("debugfs not available", "debugfs_events_lists_event");
		return;
	}
	fence = export(kfdsync, ev1->EventId, age);
	if (__ev_query(kfdsync, ev1->EventId, &q) || !q.pending)
		tap_bail("EVENT_QUERY: no pending fence");
	f = fopen(DEBUGFS_EVENTS, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*u %d %15s %u %" SCNu64 " %*s %u", &l_tgid, source, &l_id,
			   &l_age, &l_pending) != 5)
			continue;
		if (l_tgid == getpid() && l_id == ev1->EventId)
			found = l_age == age && l_pending == q.pending && !strcmp(source, want) ?
				1 : -1;
	}
	if (f)
		fclose(f);
	tap_ok(found == 1, "debugfs_events_lists_event (%d: age %" PRIu64 " pending %u)", found,
	       age, q.pending);
	close(fence);
	/* The fence ends by its watchdog, or when the context closes. */
}

/* A fence's deadline ends it with -ETIMEDOUT; one past watchdog_max_ms is capped. */
TEST(watchdog)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId);
	int64_t t0 = kfdsim_now_ns(), dt;
	int fence, status;

	fence = __export(kfdsync, ev1->EventId, age, (uint64_t)t0 + 100000000);
	if (fence < 0)
		tap_bail("export with deadline: %s", strerror(-fence));
	readable(fence, WAIT_MS);
	dt = kfdsim_now_ns() - t0;
	status = fence_status(fence);
	tap_ok(status == -ETIMEDOUT && dt >= 100000000 && dt < (int64_t)WAIT_MS * 1000000,
	       "watchdog_ends_fence_etimedout (status %d after %" PRId64 " ms)", status,
	       dt / 1000000);
	close(fence);

	/*
	 * A later fence at or below the expired seqno is born with -ETIMEDOUT
	 * (fences of a context end in order): move past it first.
	 */
	hsaKmtSetEvent(ev1);
	if (!wait_age(kfdsync, ev1->EventId, age + 1))
		tap_bail("ev1's set not counted");
	age = ev_age(kfdsync, ev1->EventId);
	/* A deadline past watchdog_max_ms is capped, not refused. */
	fence = __export(kfdsync, ev1->EventId, age, (uint64_t)t0 + 36000000000000ULL);
	tap_ok(fence >= 0 && fence_status(fence) == 0, "watchdog_deadline_capped (%d)", fence);
	if (fence >= 0)
		close(fence);
}

int main(int argc, char **argv)
{
	return export_main(argc, argv, NULL, NULL);
}
