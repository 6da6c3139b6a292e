// SPDX-License-Identifier: MIT
/*
 * The amdkfd event calls libkfdsync makes itself, on its own /dev/kfd fd,
 * through the kernel's uAPI (<linux/kfd_ioctl.h>): creating, setting and
 * destroying the export relay's kick events, and setting the events that
 * relayed imports and HSA hints end with. No libhsakmt: libkfdsync works
 * where libhsakmt is a separate library (bookworm, trixie) and where the
 * thunk lives inside ROCr (forky and later), and never initialises a
 * second copy of it.
 *
 * amdkfd has one process per mm: every /dev/kfd fd of a process reaches
 * the same events, so this fd sets events that libhsakmt or ROCr created,
 * and a child of fork(2) can use none of them (amdkfd answers -EBADF).
 *
 * The events page. A signal event's slot is in the process's events page;
 * on a dGPU libhsakmt and ROCr allocate that page as GPU memory with their
 * first event and hand it to amdkfd, which refuses a second page. An event
 * created here before any of theirs would make amdkfd allocate a kernel
 * page instead (Linux 7.3 has none: -ENOMEM). The library creates a kick
 * event only for a relay, that is for an event the application created
 * already, so its kick shares the application's page.
 *
 * The wait (AMDKFD_IOC_WAIT_EVENTS) is relay.h's: it needs event ages
 * (amdkfd 1.14, Linux 6.5), which bookworm's linux-libc-dev (6.1) lacks.
 */
#include <linux/kfd_ioctl.h>
#include <string.h>

#include "kfdsync.h"
#include "internal.h"

int kfdsync_kfd_event_create(int kfd_fd, uint32_t *event_id)
{
	struct kfd_ioctl_create_event_args a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.event_type = KFD_IOC_EVENT_SIGNAL;
	a.auto_reset = 1;
	/* No event_page_offset: the process's events page (see above). */
	ret = kfdsync_ioctl(kfd_fd, AMDKFD_IOC_CREATE_EVENT, &a);
	if (ret)
		return ret;
	*event_id = a.event_id;
	return 0;
}

int kfdsync_kfd_event_set(int kfd_fd, uint32_t event_id)
{
	struct kfd_ioctl_set_event_args a = { .event_id = event_id };

	return kfdsync_ioctl(kfd_fd, AMDKFD_IOC_SET_EVENT, &a);
}

int kfdsync_kfd_event_destroy(int kfd_fd, uint32_t event_id)
{
	struct kfd_ioctl_destroy_event_args a = { .event_id = event_id };

	return kfdsync_ioctl(kfd_fd, AMDKFD_IOC_DESTROY_EVENT, &a);
}
