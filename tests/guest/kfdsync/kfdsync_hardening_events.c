// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_events: registration, fence order and fence lifetime.
 *
 * How this program works (see kfdsync_hardening.h): it checks that
 * registration watches the event's own slot whatever address the caller
 * gives, and that a slot the hooks cannot watch goes to the relay; that a
 * watchdog that ends a fence
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

/* Register @id with REPORT: its source (KFDSYNC_REGISTER_*), or -errno. */
static int register_source(uint32_t id, uint64_t slot)
{
	struct kfdsync_event_register a = { .event_id = id, .slot_addr = slot,
					    .flags = KFDSYNC_REGISTER_REPORT };
	int ret = raw_ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_REGISTER, &a);

	return ret ? ret : (int)(a.flags & (KFDSYNC_REGISTER_HOOKS | KFDSYNC_REGISTER_RELAY));
}

/*
 * The slot is found by the event's id in amdkfd's own state, whatever
 * address the caller gives: 0 and an address outside any /dev/kfd events
 * mapping (what a discrete GPU's caller has: libhsakmt's events page is a
 * GPU buffer there), another event's slot (E + 1, E + 512: it used to make
 * E fire on the other's signals), anonymous memory, an offset or split
 * mapping of /dev/kfd's area. Each registration is watched by the hooks,
 * counts E's own GPU signals and CPU sets and nothing of its neighbours'.
 */
TEST(register_any_address_watches_own_slot)
{
	HsaEvent *evs[520], *lo = NULL, *hi = NULL, *next = NULL;
	int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	unsigned int n = 0, i;
	char *offset, *split;
	uint64_t local = 0;

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
	if (!lo || !hi || !next || kfd < 0)
		tap_bail("no events E, E + 1 and E + 512, or no /dev/kfd");
	offset = mmap(NULL, EVENTS_AREA - 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		      kfd, KFD_MMAP_EVENTS + 4096);
	split = mmap(NULL, EVENTS_AREA, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
		     KFD_MMAP_EVENTS);
	if (offset == MAP_FAILED || split == MAP_FAILED)
		tap_bail("mmap /dev/kfd events: %s", strerror(errno));
	munmap(split, 4096);

	const struct {
		const char *name;
		uint64_t addr;
	} shapes[] = {
		{ "zero", 0 },
		{ "slot_of_next_id", slot_addr(next) },
		{ "slot_of_id_plus_512", slot_addr(hi) },
		{ "anonymous_memory", (uintptr_t)&local },
		{ "offset_mapping", (uintptr_t)offset + lo->EventId * 8 },
		{ "split_mapping", (uintptr_t)split + lo->EventId * 8 },
		{ "own_slot", slot_addr(lo) },
	};

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		uint32_t id = lo->EventId;
		uint64_t end;

		tap_ret(register_source(id, shapes[i].addr), KFDSYNC_REGISTER_HOOKS,
			"register_%s_watched_by_hooks", shapes[i].name);
		/* The neighbours' writes and sets are theirs. */
		gpu_write(queue, next, next->EventId);
		end = gpu_write(queue, hi, hi->EventId);
		queue_done(queue, end);
		hsaKmtSetEvent(next);
		usleep(20000);
		tap_ok(raw_age(kfdsync, id) == 0, "register_%s_others_not_counted (age %llu)",
		       shapes[i].name, (unsigned long long)raw_age(kfdsync, id));
		/* Its own write, then a CPU set: one each. */
		queue_done(queue, gpu_write(queue, lo, id));
		tap_ok(age_reaches(id, 1, WAIT_MS), "register_%s_own_gpu_signal_counted",
		       shapes[i].name);
		hsaKmtSetEvent(lo);
		tap_ok(age_reaches(id, 2, WAIT_MS) && raw_age(kfdsync, id) == 2,
		       "register_%s_own_cpu_set_counted (age %llu)", shapes[i].name,
		       (unsigned long long)raw_age(kfdsync, id));
		raw_unregister(kfdsync, id);
		/* Drain what the waiters of libhsakmt would have seen. */
		hsaKmtWaitOnEvent(lo, 0);
		hsaKmtWaitOnEvent(next, 0);
		hsaKmtWaitOnEvent(hi, 0);
	}
	munmap(offset, EVENTS_AREA - 4096);
	munmap(split + 4096, EVENTS_AREA - 4096);
	close(kfd);
	for (i = 0; i < n; i++)
		hsaKmtDestroyEvent(evs[i]);
}

/*
 * A slot the hooks cannot watch (the forced path: inject "unwatchable")
 * is registered with the relay, and the reply says so; relayed signals
 * count, and its fences end as any relay event's: on the signal, by the
 * watchdog, unregistered. STATUS says it beforehand.
 */
TEST(register_unwatchable_relayed)
{
	HsaEvent *ev = new_event();
	uint32_t id = ev->EventId;
	struct kfdsync_status st;
	int f1, f2;

	raw_status(kfdsync, &st);
	tap_ok(st.watch & KFDSYNC_STATUS_WATCH_SLOTS, "status_watch_slots_with_a_page (%#x)",
	       st.watch);
	if (kfdsync_inject("unwatchable"))
		tap_bail("inject unwatchable");
	raw_status(kfdsync, &st);
	tap_ok(!(st.watch & KFDSYNC_STATUS_WATCH_SLOTS), "status_watch_slots_clear_unwatchable");
	tap_ret(register_source(id, 0), KFDSYNC_REGISTER_RELAY, "register_unwatchable_relay");
	kfdsync_inject("watchable");
	/* The GPU's write is not counted: the relay counts. */
	queue_done(queue, gpu_write(queue, ev, id));
	usleep(20000);
	tap_ok(raw_age(kfdsync, id) == 0, "unwatchable_gpu_write_not_counted_by_hooks");
	f1 = raw_export(kfdsync, id, 0, 0);
	tap_ret(raw_fence_status(f1), 0, "unwatchable_fence_pending");
	tap_ret(raw_relay(kfdsync, id), 0, "unwatchable_relay_signal");
	tap_ok(raw_wait(f1, WAIT_MS) && raw_fence_status(f1) == 1,
	       "unwatchable_fence_signals_on_relay");
	f2 = raw_export(kfdsync, id, 1, raw_now_ns() + 100 * MS);
	raw_wait(f2, WAIT_MS);
	tap_ret(raw_fence_status(f2), -ETIMEDOUT, "unwatchable_fence_watchdog");
	close(f1);
	close(f2);
	/* Past the expired seqno (I4), then unregistered. */
	raw_relay(kfdsync, id);
	f1 = raw_export(kfdsync, id, 2, 0);
	tap_ret(raw_fence_status(f1), 0, "unwatchable_fence_past_expired_pending");
	raw_unregister(kfdsync, id);
	tap_ret(raw_fence_status(f1), -ECANCELED, "unwatchable_unregister_ecanceled");
	close(f1);
	hsaKmtWaitOnEvent(ev, 0);
	hsaKmtDestroyEvent(ev);
}

/* This process's fdinfo line of event @id of context @fd, into @buf. */
static bool fdinfo_event(int fd, uint32_t id, char *buf, size_t size)
{
	char path[64], key[48];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "kfdsync-event-%u:", id);
	f = fopen(path, "r");
	while (f && !found && fgets(buf, size, f))
		found = !strncmp(buf, key, strlen(key));
	if (f)
		fclose(f);
	return found;
}

/*
 * Root disarms every kprobe after the hooks attached (issue 35, item 6):
 * the hooks stop, the free hook too, so kfdsync reads no slot on its own
 * any more: fdinfo shows none, a registration goes to the relay, STATUS
 * says the hooks watch nothing. Armed again, all is as before.
 */
TEST(kprobes_disarmed_no_slot_read)
{
	HsaEvent *ev = registered_event(), *other = new_event();
	struct kfdsync_status st;
	char line[256] = "";
	bool shown, hidden;

	shown = fdinfo_event(kfdsync, ev->EventId, line, sizeof(line)) &&
		!strstr(line, "slot=-");
	if (write_text("/sys/kernel/debug/kprobes/enabled", "0")) {
		tap_skip("no kprobes/enabled in debugfs", "kprobes_disarmed_no_slot_read");
		raw_unregister(kfdsync, ev->EventId);
		return;
	}
	hidden = fdinfo_event(kfdsync, ev->EventId, line, sizeof(line)) &&
		 strstr(line, "slot=-");
	raw_status(kfdsync, &st);
	tap_ok(shown && hidden && !(st.watch & KFDSYNC_STATUS_WATCH_SLOTS),
	       "kprobes_disarmed_fdinfo_reads_no_slot (%s)", line);
	tap_ret(register_source(other->EventId, 0), KFDSYNC_REGISTER_RELAY,
		"kprobes_disarmed_register_relayed");
	raw_unregister(kfdsync, other->EventId);
	write_text("/sys/kernel/debug/kprobes/enabled", "1");
	tap_ret(register_source(other->EventId, 0), KFDSYNC_REGISTER_HOOKS,
		"kprobes_armed_again_register_watched");
	raw_unregister(kfdsync, other->EventId);
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(other);
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
