// SPDX-License-Identifier: MIT
/*
 * libkfdsync host unit tests of the consumer helpers (lib/consumers.c):
 * kfdsync_sync_file_accumulate(), kfdsync_sync_file_set_deadline() and
 * kfdsync_syncobj_eventfd() check their arguments before any kernel object
 * is needed. Their behaviour on real fences and syncobjs is tested in the
 * guest (guest/bridge_consumers.c).
 */
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kfdsync.h"
#include "tap.h"

struct errcase {
	const char *name;
	int got;
	int want;
};

int main(void)
{
	int p[2], closed, ev, acc_null = -1, acc_bad = -2, acc_pipe, acc_closed;
	int acc_keep, acc_long = -1;

	if (pipe2(p, O_CLOEXEC))
		tap_bail("pipe2");
	ev = eventfd(0, EFD_CLOEXEC);
	if (ev < 0)
		tap_bail("eventfd");
	closed = dup(p[0]);
	close(closed);
	acc_pipe = -1;
	acc_closed = -1;
	acc_keep = p[1];

	const struct errcase cases[] = {
		{ "accumulate_null_acc", kfdsync_sync_file_accumulate(NULL, NULL, p[0]), -EINVAL },
		{ "accumulate_acc_below_minus_one",
		  kfdsync_sync_file_accumulate(NULL, &acc_bad, p[0]), -EINVAL },
		{ "accumulate_fd_not_sync_file",
		  kfdsync_sync_file_accumulate(NULL, &acc_pipe, p[0]), -EINVAL },
		{ "accumulate_fd_closed",
		  kfdsync_sync_file_accumulate("x", &acc_closed, closed), -EBADF },
		{ "accumulate_name_too_long_checked_first",
		  kfdsync_sync_file_accumulate("0123456789abcdef0123456789abcdef",
					       &acc_long, closed), -EINVAL },
		{ "accumulate_into_non_sync_file",
		  kfdsync_sync_file_accumulate(NULL, &acc_keep, p[0]), -EINVAL },
		{ "set_deadline_not_sync_file", kfdsync_sync_file_set_deadline(p[0], 1), -EINVAL },
		{ "set_deadline_closed", kfdsync_sync_file_set_deadline(closed, 1), -EBADF },
		{ "syncobj_eventfd_bad_flags", kfdsync_syncobj_eventfd(p[0], 1, 1, 2, ev), -EINVAL },
		{ "syncobj_eventfd_flags_high_bit",
		  kfdsync_syncobj_eventfd(p[0], 1, 0, 1u << 31, ev), -EINVAL },
		{ "syncobj_eventfd_not_drm", kfdsync_syncobj_eventfd(p[0], 1, 1, 0, ev), -EOPNOTSUPP },
		{ "syncobj_eventfd_not_drm_available",
		  kfdsync_syncobj_eventfd(p[0], 1, 1, KFDSYNC_SYNCOBJ_WAIT_AVAILABLE, ev),
		  -EOPNOTSUPP },
		{ "syncobj_eventfd_closed_drm_fd", kfdsync_syncobj_eventfd(closed, 1, 0, 0, ev),
		  -EOPNOTSUPP },
	};
	const unsigned int n = sizeof(cases) / sizeof(cases[0]);

	tap_plan(n + 3);
	for (unsigned int i = 0; i < n; i++) {
		if (!tap_ok(cases[i].got == cases[i].want, "%s", cases[i].name))
			tap_diag("got %d, want %d", cases[i].got, cases[i].want);
	}
	/* A failed call leaves the accumulator as it was. */
	tap_ok(acc_bad == -2 && acc_pipe == -1 && acc_closed == -1 && acc_long == -1, "accumulate_failure_keeps_minus_one");
	tap_ok(acc_keep == p[1] && fcntl(p[1], F_GETFD) >= 0, "accumulate_failure_keeps_fd_open");
	tap_ok(acc_null == -1, "accumulate_untouched_acc");
	close(ev);
	close(p[0]);
	close(p[1]);
	return tap_exit();
}
