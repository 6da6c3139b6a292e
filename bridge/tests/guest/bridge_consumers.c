// SPDX-License-Identifier: MIT
/*
 * bridge_consumers - the library's helpers for today's fence consumers, on
 * real fences and syncobjs in the guest:
 *
 *   kfdsync_sync_file_accumulate()   merging into "no fence yet" (-1)
 *   kfdsync_sync_file_set_deadline() SYNC_IOC_SET_DEADLINE (Linux 6.4+)
 *   kfdsync_syncobj_eventfd()        DRM_IOCTL_SYNCOBJ_EVENTFD (Linux 6.6+),
 *                                    on 6.12's virtio-gpu
 *
 * Fences come from kfdsync CPU timelines, so the test decides when each one
 * signals (or ends with an error: freeing a timeline ends its fences with
 * -ENOENT). Where the kernel lacks a feature, the test checks the library
 * says so (-EOPNOTSUPP) and skips the rest with the reason.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kfdsync.h"
#include "tap.h"
#include "vgem.h"

#define MS 1000000LL
#define PLAN 21

static int32_t status_of(int fd)
{
	struct kfdsync_sync_file_status st = { .status = 99 };

	if (kfdsync_sync_file_get_status(fd, &st, NULL, 0) < 0)
		return 99;
	return st.status;
}

/* Has @efd been signalled, within @ms? Reads (resets) it if so. */
static bool eventfd_fired(int efd, int ms)
{
	struct pollfd pfd = { .fd = efd, .events = POLLIN };
	uint64_t v;

	if (poll(&pfd, 1, ms) != 1)
		return false;
	return read(efd, &v, sizeof(v)) == sizeof(v) && v > 0;
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;

	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &a, &b) == 2 &&
	       (a > major || (a == major && b >= minor));
}

static void accumulate_tests(void)
{
	struct kfdsync_fence_status f1s, accs;
	struct kfdsync_timeline *tl, *tl2, *tl3;
	int f1, f2, e, acc = -1, first, ret, p[2];

	/* Two producers: fences of one timeline would merge into one. */
	if (kfdsync_timeline_new(&tl) || kfdsync_timeline_new(&tl2) || kfdsync_timeline_new(&tl3))
		tap_bail("no kfdsync timeline (is kfdsync.ko loaded?)");
	f1 = kfdsync_timeline_create_fence(tl, 1, "acc-1");
	f2 = kfdsync_timeline_create_fence(tl3, 1, "acc-2");
	e = kfdsync_timeline_create_fence(tl2, 1, "acc-err");
	if (f1 < 0 || f2 < 0 || e < 0)
		tap_bail("cannot create timeline fences");

	ret = kfdsync_sync_file_accumulate(NULL, &acc, f1);
	tap_ok(ret == 0 && acc >= 0 && acc != f1 && (fcntl(acc, F_GETFD) & FD_CLOEXEC) &&
	       kfdsync_sync_file_get_status(acc, NULL, &accs, 1) == 1 &&
	       kfdsync_sync_file_get_status(f1, NULL, &f1s, 1) == 1 &&
	       !strcmp(accs.timeline, f1s.timeline) && accs.status == 0,
	       "accumulate_into_minus_one_is_the_fence");
	first = acc;
	ret = kfdsync_sync_file_accumulate("acc", &acc, f2);
	tap_ok(ret == 0 && acc >= 0 && acc != first && fcntl(first, F_GETFD) < 0 &&
	       fcntl(f2, F_GETFD) >= 0 && kfdsync_sync_file_get_status(acc, NULL, NULL, 0) == 2,
	       "accumulate_merges_and_closes_the_previous");
	kfdsync_timeline_inc(tl, 1);
	tap_ok(kfdsync_sync_file_wait(f1, 1000 * MS) == 0 &&
	       kfdsync_sync_file_wait(acc, 0) == -ETIME, "accumulate_waits_for_every_fence");
	kfdsync_timeline_inc(tl3, 1);
	tap_ok(kfdsync_sync_file_wait(acc, 1000 * MS) == 0 && status_of(acc) == 1,
	       "accumulate_signals_after_the_last");

	ret = kfdsync_sync_file_accumulate(NULL, &acc, e);
	kfdsync_timeline_free(tl2);	/* e ends with -ENOENT */
	tap_ok(ret == 0 && kfdsync_sync_file_wait(acc, 1000 * MS) == 0 &&
	       status_of(acc) == -ENOENT, "accumulate_error_reaches_the_merged_fence (%d)",
	       status_of(acc));
	/*
	 * Already failed when added: the kernel leaves signalled fences out
	 * of a merge, so the error is lost, and the function says so.
	 */
	{
		struct kfdsync_timeline *tl4, *tl5;
		int failed, pending, acc2 = -1, r1, r2;

		if (kfdsync_timeline_new(&tl4) || kfdsync_timeline_new(&tl5))
			tap_bail("no kfdsync timeline");
		failed = kfdsync_timeline_create_fence(tl4, 1, "acc-failed");
		pending = kfdsync_timeline_create_fence(tl5, 1, "acc-pending");
		kfdsync_timeline_free(tl4);	/* failed ends with -ENOENT */
		r1 = kfdsync_sync_file_accumulate(NULL, &acc2, pending);
		r2 = kfdsync_sync_file_accumulate(NULL, &acc2, failed);
		tap_ok(r1 == 0 && r2 == 1 && status_of(acc2) == 0,
		       "accumulate_reports_an_error_the_merge_loses (%d, %d)", r1, r2);
		kfdsync_timeline_free(tl5);
		close(failed);
		close(pending);
		close(acc2);
	}
	first = acc;
	if (pipe2(p, O_CLOEXEC))
		tap_bail("pipe2");
	ret = kfdsync_sync_file_accumulate(NULL, &acc, p[0]);
	tap_ok(ret == -EINVAL && acc == first && status_of(acc) == -ENOENT,
	       "accumulate_failure_keeps_the_accumulated_fence");
	close(p[0]);
	close(p[1]);
	close(acc);
	close(f1);
	close(f2);
	close(e);
	kfdsync_timeline_free(tl);
	kfdsync_timeline_free(tl3);
}

static void deadline_tests(void)
{
	struct kfdsync_timeline *tl;
	struct timespec ts;
	uint64_t soon;
	int f, ret;

	if (kfdsync_timeline_new(&tl))
		tap_bail("no kfdsync timeline");
	f = kfdsync_timeline_create_fence(tl, 1, "deadline");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	soon = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 16 * MS;
	ret = kfdsync_sync_file_set_deadline(f, soon);
	if (!kernel_at_least(6, 4)) {
		tap_ok(ret == -EOPNOTSUPP, "set_deadline_before_6_4_is_eopnotsupp (%d)", ret);
		tap_skip("SYNC_IOC_SET_DEADLINE needs Linux 6.4", "set_deadline_leaves_fence_pending");
		tap_skip("SYNC_IOC_SET_DEADLINE needs Linux 6.4", "set_deadline_on_signalled_fence");
	} else {
		tap_ok(ret == 0, "set_deadline_on_pending_fence (%d)", ret);
		/* A hint only: the fence still signals when its producer does. */
		usleep(50 * 1000);
		tap_ok(kfdsync_sync_file_wait(f, 0) == -ETIME, "set_deadline_leaves_fence_pending");
		kfdsync_timeline_inc(tl, 1);
		tap_ok(kfdsync_sync_file_wait(f, 1000 * MS) == 0 &&
		       kfdsync_sync_file_set_deadline(f, 0) == 0, "set_deadline_on_signalled_fence");
	}
	close(f);
	kfdsync_timeline_free(tl);
}

static void eventfd_tests(void)
{
	struct kfdsync_timeline *tl, *tl2;
	int drm, ev_sig, ev_avail, ev_again, ev_err, p[2], closed, f, e, ret;
	uint64_t cap = 0;
	uint32_t h;

	drm = drm_open_driver("virtio_gpu", true);
	if (drm < 0 || drmGetCap(drm, DRM_CAP_SYNCOBJ_TIMELINE, &cap) || !cap) {
		const char *why = drm < 0 ? "no virtio-gpu render node (the 6.12 guest boots have "
					    "one; no other guest driver has timeline syncobjs)" :
					    "virtio-gpu has no timeline syncobjs here";

		tap_skip_rest(PLAN, why);
		if (drm >= 0)
			close(drm);
		return;
	}
	if (drmSyncobjCreate(drm, 0, &h))
		tap_bail("drmSyncobjCreate");
	ev_sig = eventfd(0, EFD_CLOEXEC);
	ev_avail = eventfd(0, EFD_CLOEXEC);
	ev_again = eventfd(0, EFD_CLOEXEC);
	ev_err = eventfd(0, EFD_CLOEXEC);
	if (pipe2(p, O_CLOEXEC) || kfdsync_timeline_new(&tl) || kfdsync_timeline_new(&tl2))
		tap_bail("setup");
	closed = 999;		/* high enough that no later fd takes it */
	close(closed);

	ret = kfdsync_syncobj_eventfd(drm, h, 1, 0, ev_sig);
	if (!kernel_at_least(6, 6)) {
		tap_ok(ret == -EOPNOTSUPP, "syncobj_eventfd_before_6_6_is_eopnotsupp (%d)", ret);
		tap_skip_rest(PLAN, "DRM_IOCTL_SYNCOBJ_EVENTFD needs Linux 6.6");
		goto out;
	}
	tap_ok(ret == 0 && !eventfd_fired(ev_sig, 100), "syncobj_eventfd_waits_for_missing_point");
	ret = kfdsync_syncobj_eventfd(drm, h, 1, KFDSYNC_SYNCOBJ_WAIT_AVAILABLE, ev_avail);
	tap_ok(ret == 0 && !eventfd_fired(ev_avail, 100),
	       "syncobj_eventfd_available_waits_for_missing_point");
	f = kfdsync_timeline_create_fence(tl, 1, "eventfd");
	ret = kfdsync_syncobj_import_sync_file(drm, h, 1, f);
	tap_ok(ret == 0 && eventfd_fired(ev_avail, 2000) && !eventfd_fired(ev_sig, 100),
	       "syncobj_eventfd_available_fires_when_attached_not_signal");
	kfdsync_timeline_inc(tl, 1);
	tap_ok(eventfd_fired(ev_sig, 2000), "syncobj_eventfd_fires_when_point_signals");
	tap_ok(kfdsync_syncobj_eventfd(drm, h, 1, 0, ev_again) == 0 &&
	       eventfd_fired(ev_again, 2000), "syncobj_eventfd_signalled_point_fires_at_once");

	/* A fence ending with an error (its timeline freed: -ENOENT). */
	e = kfdsync_timeline_create_fence(tl2, 1, "eventfd-err");
	ret = kfdsync_syncobj_import_sync_file(drm, h, 2, e);
	tap_ok(ret == 0 && kfdsync_syncobj_eventfd(drm, h, 2, 0, ev_err) == 0 &&
	       !eventfd_fired(ev_err, 100), "syncobj_eventfd_error_fence_pending");
	kfdsync_timeline_free(tl2);
	tl2 = NULL;
	tap_ok(eventfd_fired(ev_err, 2000), "syncobj_eventfd_error_counts_as_signalled");

	tap_ok(kfdsync_syncobj_eventfd(drm, h, 1, 0, p[0]) == -EINVAL,
	       "syncobj_eventfd_not_an_eventfd");
	tap_ok(kfdsync_syncobj_eventfd(drm, h, 1, 0, closed) == -EBADF,
	       "syncobj_eventfd_closed_eventfd");
	tap_ok(kfdsync_syncobj_eventfd(drm, 0xdead, 1, 0, ev_sig) == -ENOENT,
	       "syncobj_eventfd_bad_handle");
	tap_ok(kfdsync_syncobj_eventfd(drm, h, 1, 4, ev_sig) == -EINVAL,
	       "syncobj_eventfd_bad_flags");
	close(f);
	close(e);
out:
	kfdsync_timeline_free(tl);
	kfdsync_timeline_free(tl2);
	close(p[0]);
	close(p[1]);
	close(ev_sig);
	close(ev_avail);
	close(ev_again);
	close(ev_err);
	drmSyncobjDestroy(drm, h);
	close(drm);
}

int main(void)
{
	tap_plan(PLAN);
	accumulate_tests();
	deadline_tests();
	eventfd_tests();
	return tap_exit();
}
