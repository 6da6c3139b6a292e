/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: the fences kfdsync exports for an event, and their queue.
 *
 * A &struct kfdsync_fences holds the pending fences of one registered event
 * and is their fence lock. The event layer (kfdsync_event.c) decides when
 * fences end; this file keeps them ordered, ends them, expires them and
 * lets a fence nobody holds leave the queue.
 */

#ifndef KFDSYNC_FENCE_H
#define KFDSYNC_FENCE_H

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "kfdsync_watchdog.h"

struct eventfd_ctx;
struct kfdsync_user;
struct kfdsync_watch;

/**
 * struct kfdsync_fences_limits - what pending fences count against
 * @pending:	The context's count of pending fences.
 * @max:	The context's limit (max_fences).
 * @user:	The user, whose KFDSYNC_USER_FENCES count they take.
 * @user_max:	The user's limit (max_user_fences).
 *
 * The counts belong to the event's context, which closes every queue before
 * it goes: only pending fences touch them.
 */
struct kfdsync_fences_limits {
	atomic_t *pending;
	u32 max;
	struct kfdsync_user *user;
	u32 user_max;
};

/* The length of "kfdsync:<tgid>:ev<id>" plus NUL, rounded up. */
#define KFDSYNC_TIMELINE_NAME_LEN	32

/**
 * struct kfdsync_fences - the pending fences of one event
 * @ref:	References: the event and every fence hold one.
 * @lock:	The fence lock of every fence; protects the fields below and
 *		the state of the event that owns the queue.
 * @context:	dma_fence context of the ordered fences.
 * @timeline:	Timeline name of every fence.
 * @open:	Fences may be added; false once closed.
 * @by_seqno:	Pending ordered fences by seqno, lowest first.
 * @watches:	Pending condition fences (their own contexts).
 * @by_deadline: Every pending fence by watchdog deadline, earliest first.
 * @n_pending:	Pending fences.
 * @limits:	What pending fences count against, with @n_pending.
 * @expired:	Highest seqno the watchdog ended: a later fence at or below
 *		it is born with -ETIMEDOUT (fences of a context end in order).
 * @last_status: How the last fence ended: 1 signalled, or -errno.
 * @watchdog:	Ends fences whose deadline passed.
 */
struct kfdsync_fences {
	struct kref ref;
	/* The fence lock; see the kernel-doc. */
	spinlock_t lock;
	u64 context;
	char timeline[KFDSYNC_TIMELINE_NAME_LEN];
	bool open;
	struct list_head by_seqno;
	struct list_head watches;
	struct list_head by_deadline;
	u32 n_pending;
	struct kfdsync_fences_limits limits;
	u64 expired;
	int last_status;
	struct kfdsync_watchdog watchdog;
};

/**
 * struct kfdsync_fence - a fence kfdsync exported
 * @base:	The dma_fence; its lock is &kfdsync_fences.lock of @fs.
 * @fs:		The queue (reference held).
 * @node:	Entry in &kfdsync_fences.by_seqno or .watches while pending.
 * @dl_node:	Entry in &kfdsync_fences.by_deadline while pending.
 * @done_node:	Entry in a list of ended fences, with a reference.
 * @deadline:	Watchdog expiry, CLOCK_MONOTONIC ns.
 * @watch:	For a condition fence, its condition (owned), else NULL.
 * @eventfd:	For an eventfd export, signalled when the fence ends
 *		(reference held), else NULL.
 * @cb:		Callback that signals @eventfd.
 *
 * The queue holds no reference: a pending fence nobody holds leaves it
 * when its last reference goes.
 */
struct kfdsync_fence {
	struct dma_fence base;
	struct kfdsync_fences *fs;
	struct list_head node;
	struct list_head dl_node;
	struct list_head done_node;
	u64 deadline;
	struct kfdsync_watch *watch;
	struct eventfd_ctx *eventfd;
	struct dma_fence_cb cb;
};

struct kfdsync_fences *
kfdsync_fences_new(u64 context, const char *timeline,
		   const struct kfdsync_fences_limits *limits);
void kfdsync_fences_put(struct kfdsync_fences *fs);
void kfdsync_fences_close(struct kfdsync_fences *fs);

struct kfdsync_fence *kfdsync_fence_alloc(struct kfdsync_fences *fs,
					  u64 seqno,
					  struct kfdsync_watch *watch);
int kfdsync_fence_add_locked(struct kfdsync_fence *f, bool reached, int error,
			     u64 deadline);
void kfdsync_fence_publish(struct kfdsync_fence *f, bool born,
			   struct eventfd_ctx *eventfd);
void kfdsync_fence_discard(struct kfdsync_fence *f);

void kfdsync_fences_reach_locked(struct kfdsync_fences *fs, u64 age,
				 bool check_watches, struct list_head *done);
void kfdsync_fences_end_locked(struct kfdsync_fences *fs, int error,
			       struct list_head *done);
void kfdsync_fence_put_done(struct list_head *done);

int kfdsync_sync_file_install(int fd, struct dma_fence *fence,
			      const char *name, void __user *uarg,
			      const void *args, size_t size);
void kfdsync_fence_exit(void);

#endif /* KFDSYNC_FENCE_H */
