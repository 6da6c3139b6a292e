// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: watchdog expiry, off the timer interrupt.
 *
 * The timer callback only queues work: a storm of deadlines that expire at
 * the same instant (many fences created together with the same watchdog)
 * costs the timer interrupt one queue_work() per watchdog, and the fences
 * are ended by workers that run preemptibly, KFDSYNC_WATCHDOG_BATCH at a
 * time, letting the rest of the machine run between batches.
 *
 * The watchdog is what ends a fence nothing else ends, and fences can sit
 * where memory reclaim waits for them (a dma_resv, a syncobj, a KMS
 * commit): its workqueue has a rescuer thread (WQ_MEM_RECLAIM), so expiry
 * never waits for a new worker, which would need memory. Expiry allocates
 * nothing and runs inside dma_fence_begin_signalling().
 */

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/workqueue.h>

#include "kfdsync_compat.h"
#include "kfdsync_watchdog.h"

static struct workqueue_struct *kfdsync_watchdog_wq;

static enum hrtimer_restart kfdsync_watchdog_fire(struct hrtimer *timer)
{
	struct kfdsync_watchdog *wd =
		container_of(timer, struct kfdsync_watchdog, timer);

	queue_work(kfdsync_watchdog_wq, &wd->work);
	return HRTIMER_NORESTART;
}

static void kfdsync_watchdog_work(struct work_struct *work)
{
	struct kfdsync_watchdog *wd =
		container_of(work, struct kfdsync_watchdog, work);

	wd->expire(wd);
}

/**
 * kfdsync_watchdog_init() - set up a watchdog
 * @wd: the watchdog
 * @expire: called in process context after a deadline passed
 */
void kfdsync_watchdog_init(struct kfdsync_watchdog *wd,
			   void (*expire)(struct kfdsync_watchdog *wd))
{
	kfdsync_hrtimer_setup(&wd->timer, kfdsync_watchdog_fire,
			      CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	INIT_WORK(&wd->work, kfdsync_watchdog_work);
	wd->expire = expire;
}

/**
 * kfdsync_watchdog_arm() - (re)arm for a deadline
 * @wd: the watchdog
 * @deadline_ns: absolute CLOCK_MONOTONIC time; replaces an earlier arming
 *
 * Callable from any context; the owner serialises its calls (its lock).
 */
void kfdsync_watchdog_arm(struct kfdsync_watchdog *wd, u64 deadline_ns)
{
	hrtimer_start(&wd->timer, ns_to_ktime(deadline_ns), HRTIMER_MODE_ABS);
}

/**
 * kfdsync_watchdog_again() - run @expire again soon, for what is left
 * @wd: the watchdog
 */
void kfdsync_watchdog_again(struct kfdsync_watchdog *wd)
{
	queue_work(kfdsync_watchdog_wq, &wd->work);
}

/**
 * kfdsync_watchdog_stop() - disarm for good
 * @wd: the watchdog
 *
 * The owner must no longer arm it, not even from a running @expire. On
 * return neither the timer nor @expire runs. Process context.
 */
void kfdsync_watchdog_stop(struct kfdsync_watchdog *wd)
{
	hrtimer_cancel(&wd->timer);
	cancel_work_sync(&wd->work);
}

/**
 * kfdsync_watchdog_wq_init() - create the expiry workqueue, with a rescuer
 *
 * Return: 0 or -ENOMEM.
 */
int kfdsync_watchdog_wq_init(void)
{
	kfdsync_watchdog_wq = alloc_workqueue("kfdsync_watchdog",
					      WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return kfdsync_watchdog_wq ? 0 : -ENOMEM;
}

/**
 * kfdsync_watchdog_wq_exit() - destroy it; every watchdog is stopped
 */
void kfdsync_watchdog_wq_exit(void)
{
	destroy_workqueue(kfdsync_watchdog_wq);
}
