// SPDX-License-Identifier: MIT
/*
 * bridge_hsa - the lifetime of what HSA signal exports register
 * (kfdsync_hsa_signal_release(), <kfdsync_hsa.h>'s kfdsync_hsa_release()),
 * with Debian's ROCr on the guest's CPU-only /dev/kfd; as bridge_hsa_relay
 * with kfdsync in forced relay mode (the wrappers' hints relay).
 *
 * - Releasing ends the signal's pending fences with -ECANCELED and gives
 *   the registration back (the user's event count falls back); twice is
 *   -ENOENT. Exports after it register again.
 * - Release before hsa_signal_destroy(): ROCr 5.2 hands a destroyed
 *   signal's memory and KFD event to the next signal it creates. A fence of
 *   the old signal that was released stays ended; one that was not ends by
 *   the new signal's value, which is why the header makes release a rule.
 * - Many signals exported and released in turn hold one registration at a
 *   time, not one each.
 */
#include <hsa/hsa.h>
#include <kfdsync_hsa.h>

#include "sim_test.h"
#include "tap.h"

#define MS 1000000LL

static struct kfdsync_ctx *ctx;

static uint32_t user_events(void)
{
	struct kfdsync_module_status st;

	return kfdsync_ctx_get_module_status(ctx, &st) ? UINT32_MAX : st.user_events;
}

/* 1 signalled, 0 pending, -errno ended with an error, 98: not a sync_file. */
static int32_t status_of(int fd, int64_t wait_ns)
{
	int32_t st = 99;
	int ret = kfdsync_sync_file_wait_status(fd, wait_ns, &st);

	return ret == -ETIME ? 0 : ret ? 98 : st;
}

static hsa_signal_t signal_new(int64_t value)
{
	hsa_signal_t s;

	if (hsa_signal_create(value, 0, NULL, &s) != HSA_STATUS_SUCCESS)
		tap_bail("hsa_signal_create");
	return s;
}

int main(void)
{
	struct kfdsync_hsa_signal d1, d2;
	hsa_signal_t s1, s2;
	uint32_t base, held, after;
	int fd, fd2, fd_kept, ret, again, n;
	int32_t kept;

	scrub_hsa_env();
	require_sim_guest();
	tap_plan(5);
	if (hsa_init() != HSA_STATUS_SUCCESS)
		tap_bail("hsa_init failed on /dev/kfd");
	if (kfdsync_ctx_new(&ctx))
		tap_bail("kfdsync_ctx_new");
	base = user_events();

	/* Release: pending fences end, the registration goes, once. */
	s1 = signal_new(1);
	fd = kfdsync_hsa_export_sync_file(ctx, s1, HSA_SIGNAL_CONDITION_LT, 1, 60000 * MS);
	held = user_events();
	ret = kfdsync_hsa_release(ctx, s1);
	after = user_events();
	again = kfdsync_hsa_release(ctx, s1);
	tap_ok(fd >= 0 && held == base + 1 && !ret && after == base && again == -ENOENT &&
	       status_of(fd, 0) == -ECANCELED,
	       "hsa_release_ends_fences_and_registration (events %u -> %u -> %u, again %d, "
	       "fence %d)", base, held, after, again, fd >= 0 ? status_of(fd, 0) : fd);
	if (fd >= 0)
		close(fd);
	/* Exported again after the release: registered again, and it works. */
	fd = kfdsync_hsa_export_sync_file(ctx, s1, HSA_SIGNAL_CONDITION_LT, 1, 60000 * MS);
	hsa_signal_store_screlease(s1, 0);
	tap_ok(fd >= 0 && status_of(fd, 10000 * MS) == 1 && !kfdsync_hsa_release(ctx, s1),
	       "hsa_export_after_release_registers_again");
	if (fd >= 0)
		close(fd);

	/*
	 * Released, then destroyed: the next signal gets its memory and event
	 * (ROCr's pool), and the old fence stays ended.
	 */
	hsa_signal_store_screlease(s1, 1);
	fd = kfdsync_hsa_export_sync_file(ctx, s1, HSA_SIGNAL_CONDITION_EQ, 5, 60000 * MS);
	kfdsync_hsa_signal_describe(s1, &d1);
	kfdsync_hsa_release(ctx, s1);
	hsa_signal_destroy(s1);
	s2 = signal_new(1);
	kfdsync_hsa_signal_describe(s2, &d2);
	fd2 = kfdsync_hsa_export_sync_file(ctx, s2, HSA_SIGNAL_CONDITION_EQ, 5, 60000 * MS);
	hsa_signal_store_screlease(s2, 5);
	ret = fd2 >= 0 ? status_of(fd2, 10000 * MS) : fd2;
	again = fd >= 0 ? status_of(fd, 0) : fd;
	tap_ok(ret == 1 && again == -ECANCELED,
	       "hsa_release_before_destroy_keeps_the_next_signal_apart (reused %s, new %d, "
	       "old %d)", d1.value == d2.value && d1.event_id == d2.event_id ? "yes" : "no",
	       ret, again);
	close(fd);
	close(fd2);
	kfdsync_hsa_release(ctx, s2);
	hsa_signal_store_screlease(s2, 1);

	/*
	 * Against the rule: destroyed with a fence still exported. When ROCr
	 * reuses the signal, that fence ends by the next signal's value.
	 */
	fd_kept = kfdsync_hsa_export_sync_file(ctx, s2, HSA_SIGNAL_CONDITION_EQ, 7, 60000 * MS);
	kfdsync_hsa_signal_describe(s2, &d1);
	hsa_signal_destroy(s2);
	s1 = signal_new(1);
	kfdsync_hsa_signal_describe(s1, &d2);
	if (d1.value == d2.value && d1.event_id == d2.event_id) {
		fd = kfdsync_hsa_export_sync_file(ctx, s1, HSA_SIGNAL_CONDITION_EQ, 7, 60000 * MS);
		hsa_signal_store_screlease(s1, 7);
		status_of(fd, 10000 * MS);
		kept = status_of(fd_kept, 1000 * MS);
		tap_ok(kept == 1, "hsa_destroy_without_release_mixes_signals (the old fence: %d)",
		       kept);
		if (fd >= 0)
			close(fd);
	} else {
		tap_skip("this ROCr did not reuse the destroyed signal",
			 "hsa_destroy_without_release_mixes_signals");
	}
	close(fd_kept);
	kfdsync_hsa_release(ctx, s1);
	hsa_signal_destroy(s1);
	/*
	 * What the rule-breaking above left registered (the destroyed signal's
	 * event, when ROCr did not hand it on): gone, or a later signal that
	 * gets that event from ROCr's pool would find it.
	 */
	kfdsync_event_remove(ctx, d1.event_id);

	/* Many signals in turn: one registration at a time. */
	base = user_events();
	held = 0;
	for (n = 0; n < 64; n++) {
		hsa_signal_t s = signal_new(1);

		fd = kfdsync_hsa_export_sync_file(ctx, s, HSA_SIGNAL_CONDITION_LT, 1, 60000 * MS);
		if (user_events() > held)
			held = user_events();
		if (fd < 0 || kfdsync_hsa_release(ctx, s) || status_of(fd, 0) != -ECANCELED)
			break;
		close(fd);
		hsa_signal_destroy(s);
	}
	tap_ok(n == 64 && held == base + 1 && user_events() == base,
	       "hsa_signals_in_turn_hold_one_registration (%d rounds, at most %u)", n, held);

	kfdsync_ctx_free(ctx);
	hsa_shut_down();
	return tap_exit();
}
