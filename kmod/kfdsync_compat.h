/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: kernel API differences between the releases kfdsync builds for,
 * decided by Kbuild (KFDSYNC_HAVE_*), never by LINUX_VERSION_CODE in C.
 */

#ifndef KFDSYNC_COMPAT_H
#define KFDSYNC_COMPAT_H

#include <linux/eventfd.h>

/**
 * kfdsync_eventfd_signal() - add 1 to an eventfd
 * @eventfd: the eventfd
 *
 * eventfd_signal() lost its count argument in 6.8.
 */
static inline void kfdsync_eventfd_signal(struct eventfd_ctx *eventfd)
{
#ifdef KFDSYNC_HAVE_EVENTFD_SIGNAL_1
	eventfd_signal(eventfd);
#else
	eventfd_signal(eventfd, 1);
#endif
}

#endif /* KFDSYNC_COMPAT_H */
