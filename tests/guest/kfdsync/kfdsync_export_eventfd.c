// SPDX-License-Identifier: MIT
/*
 * kfdsync_export_eventfd: KFD signal events exported as eventfds.
 *
 * How this program works: with its own event registered (kfdsync_export.h),
 * it exports "the next signal after age A" into an eventfd and checks that
 * the eventfd stays quiet before the signal and counts once after a
 * simulated RELEASE_MEM and after hsaKmtSetEvent(). Tests register
 * themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/eventfd.h>

#include "sim_test.h"
#include "kfdsync_export.h"

TEST(eventfd)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), irqs, end, val = 0;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), ret;
	bool ok;

	if (efd < 0)
		tap_bail("eventfd: %s", strerror(errno));
	ret = __export_eventfd(kfdsync, ev1->EventId, age, efd);
	tap_ok(!ret && !readable(efd, 0), "eventfd_pending_before_submit (%d)", ret);

	irqs = queue_status(sim, queue).interrupts;
	end = submit_signal(queue, ev1, 50000);
	ok = readable(efd, WAIT_MS) && completed_before_wake(queue, end, irqs) &&
	     read(efd, &val, sizeof(val)) == sizeof(val);
	tap_ok(ok && val == 1, "eventfd_signalled_after_release_mem (count %" PRIu64 ")", val);
	wait_age(kfdsync, ev1->EventId, age + 1);

	age = ev_age(kfdsync, ev1->EventId);
	ret = __export_eventfd(kfdsync, ev1->EventId, age, efd);
	tap_ok(!ret && !readable(efd, 0) && hsaKmtSetEvent(ev1) == HSAKMT_STATUS_SUCCESS &&
	       readable(efd, WAIT_MS), "eventfd_signalled_by_set_event");
	wait_age(kfdsync, ev1->EventId, age + 1);
	close(efd);
}

int main(int argc, char **argv)
{
	return export_main(argc, argv, NULL, NULL);
}
