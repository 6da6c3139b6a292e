/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: watchdog expiry, off the timer interrupt.
 *
 * A &struct kfdsync_watchdog is one CLOCK_MONOTONIC timer whose expiry
 * runs its owner's @expire function in process context (an unbound
 * workqueue), where it can take as long as it must and be preempted.
 * Owners arm it with their earliest deadline; @expire ends what expired,
 * in bounded batches (kfdsync_watchdog_again() for the rest), and re-arms.
 */

#ifndef KFDSYNC_WATCHDOG_H
#define KFDSYNC_WATCHDOG_H

#include <linux/hrtimer.h>
#include <linux/types.h>
#include <linux/workqueue.h>

/* Fences one expiry pass ends at most before it lets others run. */
#define KFDSYNC_WATCHDOG_BATCH	64

/**
 * struct kfdsync_watchdog - a deadline and the work that handles it
 * @timer:	Fires at the deadline; queues @work.
 * @work:	Runs @expire.
 * @expire:	The owner's expiry handler, in process context.
 */
struct kfdsync_watchdog {
	struct hrtimer timer;
	struct work_struct work;
	void (*expire)(struct kfdsync_watchdog *wd);
};

void kfdsync_watchdog_init(struct kfdsync_watchdog *wd,
			   void (*expire)(struct kfdsync_watchdog *wd));
void kfdsync_watchdog_arm(struct kfdsync_watchdog *wd, u64 deadline_ns);
void kfdsync_watchdog_again(struct kfdsync_watchdog *wd);
void kfdsync_watchdog_stop(struct kfdsync_watchdog *wd);
int kfdsync_watchdog_wq_init(void);
void kfdsync_watchdog_wq_exit(void);

#endif /* KFDSYNC_WATCHDOG_H */
