/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: kernel API differences between the releases kfdsync builds for,
 * decided by Kbuild (KFDSYNC_HAVE_*), never by LINUX_VERSION_CODE in C.
 */

#ifndef KFDSYNC_COMPAT_H
#define KFDSYNC_COMPAT_H

#include <linux/dma-fence.h>
#include <linux/eventfd.h>
#include <linux/hrtimer.h>

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

/**
 * kfdsync_hrtimer_setup() - initialise an hrtimer with its function
 * @timer: the timer
 * @function: its callback
 * @clock: the clock
 * @mode: the mode
 *
 * hrtimer_setup() replaced hrtimer_init() and a write of ->function (6.13).
 */
static inline void
kfdsync_hrtimer_setup(struct hrtimer *timer,
		      enum hrtimer_restart (*function)(struct hrtimer *),
		      clockid_t clock, enum hrtimer_mode mode)
{
#ifdef KFDSYNC_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, function, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = function;
#endif
}

/*
 * Fences with 64-bit seqnos: dma_fence_ops.use_64bit_seqno until
 * dma_fence_init64() replaced it (after 6.12).
 */
#ifdef KFDSYNC_HAVE_DMA_FENCE_INIT64
#define KFDSYNC_FENCE_OPS_64BIT
#define kfdsync_dma_fence_init64 dma_fence_init64
#else
#define KFDSYNC_FENCE_OPS_64BIT	.use_64bit_seqno = true,
#define kfdsync_dma_fence_init64 dma_fence_init
#endif

#endif /* KFDSYNC_COMPAT_H */
