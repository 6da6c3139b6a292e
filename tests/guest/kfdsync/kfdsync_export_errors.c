// SPDX-License-Identifier: MIT
/*
 * kfdsync_export_errors: what event registration, export and relay refuse.
 *
 * How this program works: with its own event registered (kfdsync_export.h),
 * it calls every ioctl of the event interface with bad arguments (a table:
 * flags, ids, slots, ages, pointers, fds) and checks the documented errno of
 * each, then the limits max_events and max_fences (-ENOSPC). Tests register
 * themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/eventfd.h>

#include "sim_test.h"
#include "kfdsync_export.h"

/* ---- the bad inputs table ---- */

static uint32_t destroyed_id;
static HsaEvent *ev2;	/* registered, then unregistered */

/* 8: the first bit REGISTER does not know (its "register flags" are 1, 2, 4). */
static int bad_register_flags(void)
{
	struct kfdsync_event_register a = { .event_id = ev2->EventId,
					    .slot_addr = slot_addr(ev2), .flags = 8 };
	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
}

static int bad_register(uint32_t id, uint64_t slot)
{
	struct kfdsync_event_register a = { .event_id = id, .slot_addr = slot };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
}

static int bad_register_id_zero(void)
{
	return bad_register(0, slot_addr(ev2) - (uint64_t)ev2->EventId * 8);
}

static int bad_register_id_limit(void)
{
	return bad_register(4096, slot_addr(ev2));
}

static int bad_register_misaligned(void)
{
	return bad_register(ev2->EventId, slot_addr(ev2) + 4);
}

static int bad_register_duplicate(void)
{
	return bad_register(ev1->EventId, slot_addr(ev1));
}

static int bad_register_bad_pointer(void)
{
	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_REGISTER, (void *)8);
}

static int bad_unregister_flags(void)
{
	struct kfdsync_event_unregister a = { .event_id = ev1->EventId, .flags = 1 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &a);
}

static int bad_unregister_unknown(void)
{
	struct kfdsync_event_unregister a = { .event_id = ev2->EventId };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &a);
}

static int bad_query_flags(void)
{
	struct kfdsync_event_query a = { .event_id = ev1->EventId, .flags = 1 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_QUERY, &a);
}

static int bad_query_unknown(void)
{
	struct kfdsync_event_query a = { .event_id = 4000 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_QUERY, &a);
}

static int bad_export(uint32_t id, uint32_t flags, uint32_t pad, uint64_t age)
{
	struct kfdsync_export a = { .event_id = id, .flags = flags, .pad = pad, .age = age };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, &a);
}

static int bad_export_flags(void)
{
	return bad_export(ev1->EventId, 1, 0, 0);
}

static int bad_export_pad(void)
{
	return bad_export(ev1->EventId, 0, 1, 0);
}

static int bad_export_unknown_id(void)
{
	return bad_export(ev2->EventId, 0, 0, 0);
}

static int bad_export_future_age(void)
{
	return bad_export(ev1->EventId, 0, 0, ev_age(kfdsync, ev1->EventId) + 1);
}

static int bad_export_destroyed_event(void)
{
	return bad_export(destroyed_id, 0, 0, 0);
}

static int bad_export_bad_pointer(void)
{
	return ioctl(kfdsync, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, (void *)8);
}

static int bad_export_eventfd(int fd, uint32_t flags)
{
	struct kfdsync_export a = { .event_id = ev1->EventId, .flags = flags, .fd = fd,
				    .age = ev_age(kfdsync, ev1->EventId) };

	return ioctl(kfdsync, KFDSYNC_IOCTL_EXPORT_EVENTFD, &a);
}

static int bad_eventfd_not_eventfd(void)
{
	/* A sync_file is not an eventfd. */
	int fence = export(kfdsync, ev1->EventId, ev_age(kfdsync, ev1->EventId));
	int ret = bad_export_eventfd(fence, 0), err = errno;

	close(fence);
	errno = err;
	return ret;
}

static int bad_eventfd_closed_fd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	close(fd);
	return bad_export_eventfd(fd, 0);
}

static int bad_eventfd_flags(void)
{
	int fd = eventfd(0, EFD_CLOEXEC), ret, err;

	ret = bad_export_eventfd(fd, 1);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

static int bad_relay_flags(void)
{
	struct kfdsync_relay_signal a = { .event_id = ev1->EventId, .flags = 1 };

	return ioctl(kfdsync, KFDSYNC_IOCTL_RELAY_SIGNAL, &a);
}

static int bad_relay_unknown(void)
{
	struct kfdsync_relay_signal a = { .event_id = ev2->EventId };

	return ioctl(kfdsync, KFDSYNC_IOCTL_RELAY_SIGNAL, &a);
}

static int bad_relay_hooks_active(void)
{
	struct kfdsync_relay_signal a = { .event_id = ev1->EventId };

	if (relay_mode) {	/* not applicable: report the expected errno */
		errno = EBUSY;
		return -1;
	}
	return ioctl(kfdsync, KFDSYNC_IOCTL_RELAY_SIGNAL, &a);
}

static int bad_unknown_ioctl(void)
{
	struct kfdsync_export a = { 0 };

	return ioctl(kfdsync, _IOWR(KFDSYNC_IOCTL_BASE, 0x3f, struct kfdsync_export), &a);
}

static const struct bad_input {
	const char *name;
	int err;
	int (*call)(void);
} bad_inputs[] = {
	{ "register_unknown_flags", EINVAL, bad_register_flags },
	{ "register_id_zero", EINVAL, bad_register_id_zero },
	{ "register_id_beyond_limit", EINVAL, bad_register_id_limit },
	{ "register_slot_misaligned", EINVAL, bad_register_misaligned },
	{ "register_duplicate", EEXIST, bad_register_duplicate },
	{ "register_bad_pointer", EFAULT, bad_register_bad_pointer },
	{ "unregister_unknown_flags", EINVAL, bad_unregister_flags },
	{ "unregister_unknown_id", ENOENT, bad_unregister_unknown },
	{ "query_unknown_flags", EINVAL, bad_query_flags },
	{ "query_unknown_id", ENOENT, bad_query_unknown },
	{ "export_unknown_flags", EINVAL, bad_export_flags },
	{ "export_pad_nonzero", EINVAL, bad_export_pad },
	{ "export_unknown_id", ENOENT, bad_export_unknown_id },
	{ "export_age_in_future", EINVAL, bad_export_future_age },
	{ "export_unregistered_event", ENOENT, bad_export_destroyed_event },
	{ "export_bad_pointer", EFAULT, bad_export_bad_pointer },
	{ "export_eventfd_not_an_eventfd", EINVAL, bad_eventfd_not_eventfd },
	{ "export_eventfd_closed_fd", EBADF, bad_eventfd_closed_fd },
	{ "export_eventfd_unknown_flags", EINVAL, bad_eventfd_flags },
	{ "relay_unknown_flags", EINVAL, bad_relay_flags },
	{ "relay_unknown_id", ENOENT, bad_relay_unknown },
	{ "relay_refused_while_hooks_active", EBUSY, bad_relay_hooks_active },
	{ "unknown_ioctl", ENOTTY, bad_unknown_ioctl },
};

TEST(bad_inputs)
{
	struct kfdsync_event_unregister u;
	unsigned int i;

	/* ev2: registered, then unregistered. */
	if (__ev_register(kfdsync, ev2->EventId, slot_addr(ev2), NULL))
		tap_bail("register ev2 failed");
	u = (struct kfdsync_event_unregister){ .event_id = ev2->EventId };
	if (ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u))
		tap_bail("unregister ev2: %s", strerror(errno));
	destroyed_id = ev2->EventId;

	for (i = 0; i < ARRAY_SIZE(bad_inputs); i++)
		tap_errno(bad_inputs[i].call(), bad_inputs[i].err, "bad_input_%s",
			  bad_inputs[i].name);
}

/* max_events and max_fences, snapshotted at open. */
TEST(limits)
{
	int old_events = param_read("max_events"), old_fences = param_read("max_fences");
	HsaEvent *ev3 = new_event();
	int fd, f1, f2, f3, ret;

	if (old_events < 0 || old_fences < 0 || !param_write("max_events", 2) ||
	    !param_write("max_fences", 2)) {
		tap_skip("cannot set module parameters", "limit_max_events_enospc");
		tap_skip("cannot set module parameters", "limit_max_fences_enospc");
	} else {
		fd = open_kfdsync();
		param_write("max_events", old_events);
		param_write("max_fences", old_fences);
		ret = __ev_register(fd, ev1->EventId, slot_addr(ev1), NULL);
		if (!ret)
			ret = __ev_register(fd, ev2->EventId, slot_addr(ev2), NULL);
		if (!ret)
			ret = __ev_register(fd, ev3->EventId, slot_addr(ev3), NULL);
		tap_ok(ret == -ENOSPC, "limit_max_events_enospc (%s)", strerror(-ret));
		f1 = __export(fd, ev1->EventId, 0, 0);
		f2 = __export(fd, ev1->EventId, 0, 0);
		f3 = __export(fd, ev1->EventId, 0, 0);
		tap_ok(f1 >= 0 && f2 >= 0 && f3 == -ENOSPC, "limit_max_fences_enospc (%d)", f3);
		if (f1 >= 0)
			close(f1);
		if (f2 >= 0)
			close(f2);
		if (f3 >= 0)
			close(f3);
		close(fd);
	}
	hsaKmtDestroyEvent(ev3);
}

static void setup(void)
{
	export_setup();
	ev2 = new_event();
}

int main(int argc, char **argv)
{
	return export_main(argc, argv, setup, NULL);
}
