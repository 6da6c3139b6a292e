// SPDX-License-Identifier: MIT
/*
 * hsa_signal in relay mode (see hsa_signal.c): kfdsync loaded with hooks=0,
 * through hsa_signal_relay.
 *
 * What relay mode changes: libkfdsync's wrappers give ROCr a hint that
 * relays the signal when ROCr sees the condition hold; without the
 * wrappers the application relays (kfdsync_event_relay()); a hint whose
 * fence has ended is inert.
 */

#include "hsa_signal.h"

/*
 * The wrappers in relay mode: a "no" store leaves the fence pending, a
 * "yes" store ends it on the condition (status 1) long before its 30 s
 * watchdog would (-ETIMEDOUT): the hint relayed the signal.
 */
TEST(relay_cpu_store)
{
	RELAY_MODE_ONLY();

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		hsa_signal_t s = armed[n_armed++] = signal_new(cases[i].initial);
		int fd = kfdsync_hsa_export_sync_file(ctx, s, cases[i].cond, cases[i].compare,
						      30000 * MS);
		int after_no, after_yes;

		if (fd < 0) {
			tap_ok(false, "relay_cpu_store_%s: export: %s", cases[i].name,
			       strerror(-fd));
			continue;
		}
		store_from_thread(s, cases[i].no);
		after_no = fence_end(fd, 200);
		store_from_thread(s, cases[i].yes);
		after_yes = fence_end(fd, WAIT_MS);
		tap_ok(after_no == 0 && after_yes == 1,
		       "relay_cpu_store_%s (after %" PRId64 ": %d, after %" PRId64 ": %d)",
		       cases[i].name, cases[i].no, after_no, cases[i].yes, after_yes);
		close(fd);
	}
}

/* A simulated GPU completion, exported through the wrapper: relayed too. */
TEST(relay_gpu_completion)
{
	RELAY_MODE_ONLY();

	hsa_signal_t s = armed[n_armed++] = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_export_sync_file(ctx, s, HSA_SIGNAL_CONDITION_EQ, 0, 30000 * MS);
	int before = fd >= 0 ? fence_status(fd) : -1000, after;

	if (fd >= 0)
		gpu_complete(&sig, 0);
	after = fd >= 0 ? fence_end(fd, WAIT_MS) : fd;
	tap_ok(before == 0 && after == 1, "relay_gpu_completion (before %d, after %d)", before,
	       after);
	if (fd >= 0)
		close(fd);
}

/*
 * Without the wrappers, the application relays: kfdsync_event_relay()
 * after the value changed. Without it, the fence ends by its watchdog.
 */
TEST(relay_raw_export)
{
	RELAY_MODE_ONLY();

	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 0, 30000 * MS);
	int lone = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 5, 200 * MS);
	int before, ret, after, lone_end;

	*sig.value = 0;		/* a CPU store ROCr does not see */
	before = fd >= 0 ? fence_end(fd, 200) : fd;
	ret = kfdsync_event_relay(ctx, sig.event_id);
	after = fd >= 0 ? fence_end(fd, WAIT_MS) : fd;
	/* value 0, not 5: the relayed signal did not satisfy this one. */
	lone_end = lone >= 0 ? fence_end(lone, WAIT_MS) : lone;
	tap_ok(before == 0 && ret == 0 && after == 1,
	       "relay_raw_export_event_relay (before %d, relay %d, after %d)", before, ret,
	       after);
	tap_ok(lone_end == -ETIMEDOUT, "relay_raw_export_unmet_ends_by_watchdog (%d)", lone_end);
	if (fd >= 0)
		close(fd);
	if (lone >= 0)
		close(lone);
	kfdsync_event_remove(ctx, sig.event_id);
	hsa_signal_destroy(s);
}

/*
 * A hint whose fence has ended (watchdog, plus the hint's slack) is inert:
 * when ROCr finally sees the condition hold and calls it, it reports
 * nothing, so the event's age (advanced only by relays here) stays.
 */
TEST(relay_hint_inert_after_fence)
{
	RELAY_MODE_ONLY();

	hsa_signal_t s = armed[n_armed++] = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_export_sync_file(ctx, s, HSA_SIGNAL_CONDITION_EQ, 0, 100 * MS);
	int end = fd >= 0 ? fence_end(fd, WAIT_MS) : fd;
	uint64_t age;

	usleep(1300 * 1000);	/* past the hint's second of slack */
	age = event_age(sig.event_id);
	store_from_thread(s, 0);
	usleep(300 * 1000);
	tap_ok(end == -ETIMEDOUT && age != UINT64_MAX && event_age(sig.event_id) == age,
	       "relay_hint_inert_after_its_fence (end %d, age %" PRIu64 " -> %" PRIu64 ")", end,
	       age, event_age(sig.event_id));
	if (fd >= 0)
		close(fd);
}
