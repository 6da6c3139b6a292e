// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: the fences kfdsync exports for an event, and their queue.
 *
 * An ordered fence is "the next signal of a registered event after age A":
 * seqno A + 1 on the event's fence context; it signals when the event's age
 * reaches the seqno (kfdsync_event.c calls kfdsync_fences_reach_locked()).
 * A condition fence (KFDSYNC_IOCTL_EXPORT_CONDITION) is "the watched value
 * satisfies the condition", on a fence context of its own, checked at every
 * advance of the age.
 *
 * Order within a context (I4). dma_fence merges, dma_resv and schedulers
 * keep only the later fence of a context, so a fence must never end while
 * one of a lower seqno of its context is still pending. Ages grow, so
 * signalling keeps the order; every way a fence ends early keeps it too:
 * when the watchdog ends seqno s, it ends every pending fence of seqno <= s
 * with it, and a fence exported later for a seqno <= s is born with
 * -ETIMEDOUT instead of pending behind them (@expired).
 *
 * Lifetime (I5). The queue holds no reference to its fences: a pending
 * fence nobody holds (its sync_file closed, no consumer) leaves the queue in
 * its release and stops counting against max_fences, as sw_sync's fences
 * do. Whoever ends fences under the lock takes a reference to each first
 * (kref_get_unless_zero: a fence whose last reference is being dropped is
 * only unlinked) and drops it with kfdsync_fence_put_done() after
 * unlocking, so no fence is freed under its own lock.
 *
 * Watchdog. Every pending fence has a deadline; one watchdog per queue
 * (kfdsync_watchdog.c) runs at the earliest and ends what expired in
 * bounded batches, in process context.
 *
 * A fence holds a reference to kfdsync itself, dropped in an RCU callback
 * after the fence memory is gone; module exit waits for those callbacks
 * (rcu_barrier()). So kfdsync cannot be unloaded while any of its fences
 * exists anywhere: in a sync_file, in KMS state, in another process.
 */

#include <linux/dma-fence.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>

#include "kfdsync_compat.h"
#include "kfdsync_fence.h"
#include "kfdsync_trace.h"
#include "kfdsync_user.h"
#include "kfdsync_watch.h"

static struct kfdsync_fence *to_kfdsync_fence(struct dma_fence *fence)
{
	return container_of(fence, struct kfdsync_fence, base);
}

static const char *kfdsync_fence_get_driver_name(struct dma_fence *fence)
{
	return KBUILD_MODNAME;
}

static const char *kfdsync_fence_get_timeline_name(struct dma_fence *fence)
{
	return to_kfdsync_fence(fence)->fs->timeline;
}

static void kfdsync_fences_free(struct kref *ref)
{
	kfree(container_of(ref, struct kfdsync_fences, ref));
}

/**
 * kfdsync_fences_put() - drop a reference to a queue
 * @fs: the queue; closed already if this is the event's reference
 *
 * Callable from any context.
 */
void kfdsync_fences_put(struct kfdsync_fences *fs)
{
	kref_put(&fs->ref, kfdsync_fences_free);
}

static void kfdsync_fence_free_rcu(struct rcu_head *rcu)
{
	struct dma_fence *fence = container_of(rcu, struct dma_fence, rcu);
	struct kfdsync_fence *f = to_kfdsync_fence(fence);

	if (f->eventfd)
		eventfd_ctx_put(f->eventfd);
	if (f->watch)
		kfdsync_watch_free(f->watch);
	kfdsync_fences_put(f->fs);
	kfree(f);
	/* Last: module exit's rcu_barrier() waits for this callback. */
	module_put(THIS_MODULE);
}

/* Take @f off the queue; the lock held. */
static void kfdsync_fence_unlink_locked(struct kfdsync_fence *f)
{
	struct kfdsync_fences *fs = f->fs;

	lockdep_assert_held(&fs->lock);

	list_del_init(&f->node);
	list_del_init(&f->dl_node);
	fs->n_pending--;
	atomic_dec(fs->limits.pending);
	kfdsync_user_uncharge(fs->limits.user, KFDSYNC_USER_FENCES);
}

/* The last reference went: a pending fence leaves the queue. */
static void kfdsync_fence_release(struct dma_fence *fence)
{
	struct kfdsync_fence *f = to_kfdsync_fence(fence);
	struct kfdsync_fences *fs = f->fs;
	unsigned long flags;

	spin_lock_irqsave(&fs->lock, flags);
	if (!list_empty(&f->dl_node))
		kfdsync_fence_unlink_locked(f);
	spin_unlock_irqrestore(&fs->lock, flags);
	call_rcu(&fence->rcu, kfdsync_fence_free_rcu);
}

static const struct dma_fence_ops kfdsync_fence_ops = {
	KFDSYNC_FENCE_OPS_64BIT
	.get_driver_name = kfdsync_fence_get_driver_name,
	.get_timeline_name = kfdsync_fence_get_timeline_name,
	.release = kfdsync_fence_release,
};

/*
 * End a pending fence with @error (0: signal). It joins @done with a new
 * reference, unless its last reference is already going (then it is only
 * unlinked: nobody can see it signal, and the trace says it was dropped;
 * last_status stays what the last fence anyone could see ended with).
 */
static void kfdsync_fence_end_locked(struct kfdsync_fence *f, int error,
				     struct list_head *done)
{
	struct kfdsync_fences *fs = f->fs;

	lockdep_assert_held(&fs->lock);

	kfdsync_fence_unlink_locked(f);
	if (!kref_get_unless_zero(&f->base.refcount)) {
		trace_kfdsync_fence_end(&f->base, error, true);
		return;
	}
	trace_kfdsync_fence_end(&f->base, error, false);
	fs->last_status = error ? error : 1;
	if (error)
		dma_fence_set_error(&f->base, error);
	dma_fence_signal_locked(&f->base);
	list_add_tail(&f->done_node, done);
}

/**
 * kfdsync_fence_put_done() - drop the references of ended fences
 * @done: list filled under a queue's lock
 *
 * Call without any queue lock held. An ended fence's watch is never read
 * again: its pin is released here, not when the fence is freed.
 */
void kfdsync_fence_put_done(struct list_head *done)
{
	struct kfdsync_fence *f, *next;

	list_for_each_entry_safe(f, next, done, done_node) {
		list_del(&f->done_node);
		if (f->watch) {
			kfdsync_watch_free(f->watch);
			f->watch = NULL;
		}
		dma_fence_put(&f->base);
	}
}

/* End every pending ordered fence of seqno <= @seqno with @error. */
static void kfdsync_fences_end_upto_locked(struct kfdsync_fences *fs,
					   u64 seqno, int error,
					   struct list_head *done)
{
	struct kfdsync_fence *f, *next;

	list_for_each_entry_safe(f, next, &fs->by_seqno, node) {
		if (f->base.seqno > seqno)
			break;
		kfdsync_fence_end_locked(f, error, done);
	}
}

/**
 * kfdsync_fences_reach_locked() - the event's age advanced
 * @fs: the queue
 * @age: the new age: ordered fences up to it signal
 * @check_watches: check the conditions of the condition fences too
 * @done: collects the ended fences
 */
void kfdsync_fences_reach_locked(struct kfdsync_fences *fs, u64 age,
				 bool check_watches, struct list_head *done)
{
	struct kfdsync_fence *f, *next;

	lockdep_assert_held(&fs->lock);

	kfdsync_fences_end_upto_locked(fs, age, 0, done);
	if (!check_watches)
		return;
	/* The signal is a hint, the value the truth. */
	list_for_each_entry_safe(f, next, &fs->watches, node)
		if (kfdsync_watch_holds(f->watch))
			kfdsync_fence_end_locked(f, 0, done);
}

/**
 * kfdsync_fences_end_locked() - end every pending fence with an error
 * @fs: the queue
 * @error: the -errno
 * @done: collects the ended fences
 */
void kfdsync_fences_end_locked(struct kfdsync_fences *fs, int error,
			       struct list_head *done)
{
	struct kfdsync_fence *f, *next;

	lockdep_assert_held(&fs->lock);

	list_for_each_entry_safe(f, next, &fs->by_deadline, dl_node)
		kfdsync_fence_end_locked(f, error, done);
}

/* Arm the watchdog for the earliest pending deadline, if any. */
static void kfdsync_fences_arm_locked(struct kfdsync_fences *fs)
{
	struct kfdsync_fence *first;

	lockdep_assert_held(&fs->lock);

	first = list_first_entry_or_null(&fs->by_deadline,
					 struct kfdsync_fence, dl_node);
	if (first && fs->open)
		kfdsync_watchdog_arm(&fs->watchdog, first->deadline);
}

/*
 * The watchdog: end the fences whose deadline passed (with every pending
 * ordered fence of a lower seqno), KFDSYNC_WATCHDOG_BATCH at a time.
 */
static void kfdsync_fences_expire(struct kfdsync_watchdog *wd)
{
	struct kfdsync_fences *fs =
		container_of(wd, struct kfdsync_fences, watchdog);
	struct kfdsync_fence *f;
	unsigned int n = 0;
	unsigned long flags;
	bool more = false;
	LIST_HEAD(done);
	bool cookie;
	u64 now;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&fs->lock, flags);
	now = ktime_get_ns();
	while ((f = list_first_entry_or_null(&fs->by_deadline,
					     struct kfdsync_fence, dl_node)) &&
	       f->deadline <= now) {
		if (n++ == KFDSYNC_WATCHDOG_BATCH) {
			more = fs->open;
			break;
		}
		trace_kfdsync_watchdog(&f->base, f->deadline, now);
		if (f->watch) {
			kfdsync_fence_end_locked(f, -ETIMEDOUT, &done);
			continue;
		}
		fs->expired = max(fs->expired, f->base.seqno);
		kfdsync_fences_end_upto_locked(fs, f->base.seqno, -ETIMEDOUT,
					       &done);
	}
	if (more)
		kfdsync_watchdog_again(wd);
	else
		kfdsync_fences_arm_locked(fs);
	spin_unlock_irqrestore(&fs->lock, flags);
	dma_fence_end_signalling(cookie);
	kfdsync_fence_put_done(&done);
}

/**
 * kfdsync_fences_new() - a queue for the fences of one event
 * @context: the dma_fence context of its ordered fences
 * @timeline: the fences' timeline name
 * @limits: what pending fences count against (copied)
 *
 * Return: the queue with one reference, open, or NULL (no memory).
 */
struct kfdsync_fences *
kfdsync_fences_new(u64 context, const char *timeline,
		   const struct kfdsync_fences_limits *limits)
{
	struct kfdsync_fences *fs = kzalloc(sizeof(*fs), GFP_KERNEL_ACCOUNT);

	if (!fs)
		return NULL;
	kref_init(&fs->ref);
	spin_lock_init(&fs->lock);
	fs->context = context;
	strscpy(fs->timeline, timeline, sizeof(fs->timeline));
	fs->open = true;
	INIT_LIST_HEAD(&fs->by_seqno);
	INIT_LIST_HEAD(&fs->watches);
	INIT_LIST_HEAD(&fs->by_deadline);
	fs->limits = *limits;
	kfdsync_watchdog_init(&fs->watchdog, kfdsync_fences_expire);
	return fs;
}

/**
 * kfdsync_fences_close() - no more fences: end the pending ones
 * @fs: the queue
 *
 * Pending fences end with -ECANCELED (unless they ended already); the
 * watchdog stops. Process context.
 */
void kfdsync_fences_close(struct kfdsync_fences *fs)
{
	unsigned long flags;
	LIST_HEAD(done);
	bool cookie;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&fs->lock, flags);
	fs->open = false;
	kfdsync_fences_end_locked(fs, -ECANCELED, &done);
	spin_unlock_irqrestore(&fs->lock, flags);
	dma_fence_end_signalling(cookie);
	kfdsync_fence_put_done(&done);
	kfdsync_watchdog_stop(&fs->watchdog);
}

/**
 * kfdsync_fence_alloc() - a new, unpublished fence of a queue
 * @fs: the queue
 * @seqno: the ordered fence's seqno (the target age); ignored with @watch
 * @watch: a condition (owned by the fence from now on, also on error), or
 *	   NULL for an ordered fence
 *
 * Return: the fence, or NULL (no memory; @watch is freed).
 */
struct kfdsync_fence *kfdsync_fence_alloc(struct kfdsync_fences *fs,
					  u64 seqno,
					  struct kfdsync_watch *watch)
{
	struct kfdsync_fence *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f) {
		if (watch)
			kfdsync_watch_free(watch);
		return NULL;
	}
	/* The caller's open file pins the module; the fence pins it too. */
	__module_get(THIS_MODULE);
	kref_get(&fs->ref);
	f->fs = fs;
	f->watch = watch;
	INIT_LIST_HEAD(&f->node);
	INIT_LIST_HEAD(&f->dl_node);
	/* Conditions are unordered: one fence context each. */
	if (watch)
		kfdsync_dma_fence_init64(&f->base, &kfdsync_fence_ops, &fs->lock,
					 dma_fence_context_alloc(1), 1);
	else
		kfdsync_dma_fence_init64(&f->base, &kfdsync_fence_ops, &fs->lock,
					 fs->context, seqno);
	return f;
}

/* Insert @f into the ordered fences by seqno, searching from the tail. */
static void kfdsync_fences_insert_seqno(struct kfdsync_fences *fs,
					struct kfdsync_fence *f)
{
	struct kfdsync_fence *pos;

	list_for_each_entry_reverse(pos, &fs->by_seqno, node) {
		if (pos->base.seqno <= f->base.seqno) {
			list_add(&f->node, &pos->node);
			return;
		}
	}
	list_add(&f->node, &fs->by_seqno);
}

/* Insert @f into the fences by deadline, searching from the tail. */
static void kfdsync_fences_insert_deadline(struct kfdsync_fences *fs,
					   struct kfdsync_fence *f)
{
	struct kfdsync_fence *pos;

	list_for_each_entry_reverse(pos, &fs->by_deadline, dl_node) {
		if (pos->deadline <= f->deadline) {
			list_add(&f->dl_node, &pos->dl_node);
			return;
		}
	}
	list_add(&f->dl_node, &fs->by_deadline);
}

/**
 * kfdsync_fence_add_locked() - decide a new fence's state
 * @f: the fence from kfdsync_fence_alloc()
 * @reached: the event's age already reached its seqno, or its condition
 *	     holds: born signalled
 * @error: the event's sticky error: born with it (0 for none)
 * @deadline: the watchdog expiry if it is pending
 *
 * An ordered fence at or below a seqno the watchdog ended is born with
 * -ETIMEDOUT. Otherwise the fence is pending.
 *
 * Return: 1 if born ended, 0 if pending, -ENOSPC at the context's or the
 * user's limit of pending fences, or
 * -ENOENT if the queue is closed; on error the caller discards @f after
 * unlocking.
 */
int kfdsync_fence_add_locked(struct kfdsync_fence *f, bool reached, int error,
			     u64 deadline)
{
	struct kfdsync_fences *fs = f->fs;
	struct kfdsync_fence *first;

	lockdep_assert_held(&fs->lock);

	if (!fs->open)
		return -ENOENT;
	if (!error && !reached && !f->watch && f->base.seqno <= fs->expired)
		error = -ETIMEDOUT;
	if (error || reached) {
		if (error)
			dma_fence_set_error(&f->base, error);
		dma_fence_signal_locked(&f->base);
		return 1;
	}
	if (atomic_inc_return(fs->limits.pending) > fs->limits.max) {
		atomic_dec(fs->limits.pending);
		return -ENOSPC;
	}
	if (!kfdsync_user_charge(fs->limits.user, KFDSYNC_USER_FENCES,
				 fs->limits.user_max)) {
		atomic_dec(fs->limits.pending);
		return -ENOSPC;
	}
	fs->n_pending++;
	f->deadline = deadline;
	if (f->watch)
		list_add_tail(&f->node, &fs->watches);
	else
		kfdsync_fences_insert_seqno(fs, f);
	kfdsync_fences_insert_deadline(fs, f);
	first = list_first_entry(&fs->by_deadline, struct kfdsync_fence,
				 dl_node);
	if (first == f)
		kfdsync_watchdog_arm(&fs->watchdog, deadline);
	return 0;
}

static void kfdsync_fence_eventfd_cb(struct dma_fence *fence,
				     struct dma_fence_cb *cb)
{
	struct kfdsync_fence *f = container_of(cb, struct kfdsync_fence, cb);

	kfdsync_eventfd_signal(f->eventfd);
	/* Never the last reference: whoever signals holds one. */
	dma_fence_put(fence);
}

/**
 * kfdsync_fence_publish() - after kfdsync_fence_add_locked() succeeded
 * @f: the fence
 * @born: it was born ended (kfdsync_fence_add_locked() returned 1)
 * @eventfd: if not NULL, an eventfd to signal when the fence ends; the
 *	     fence owns this reference from now on
 *
 * A fence born ended releases its watch here (never read again).
 */
void kfdsync_fence_publish(struct kfdsync_fence *f, bool born,
			   struct eventfd_ctx *eventfd)
{
	if (born && f->watch) {
		kfdsync_watch_free(f->watch);
		f->watch = NULL;
	}
	if (eventfd) {
		f->eventfd = eventfd;
		/* The callback's reference keeps the fence until it ends. */
		dma_fence_get(&f->base);
		if (dma_fence_add_callback(&f->base, &f->cb,
					   kfdsync_fence_eventfd_cb))
			kfdsync_fence_eventfd_cb(&f->base, &f->cb);
	}
}

/**
 * kfdsync_fence_discard() - drop a fence kfdsync_fence_add_locked() refused
 * @f: the fence, never published
 */
void kfdsync_fence_discard(struct kfdsync_fence *f)
{
	/* Unpin now, not after the grace period the release waits for. */
	if (f->watch) {
		kfdsync_watch_free(f->watch);
		f->watch = NULL;
	}
	dma_fence_put(&f->base);
}

/**
 * kfdsync_sync_file_install() - give a fence to the caller as a sync_file
 * @fd: an fd reserved by the caller with get_unused_fd_flags()
 * @fence: the fence; the caller's reference is consumed
 * @name: the sync_file's name (SYNC_IOC_FILE_INFO), or NULL for the default
 * @uarg: the ioctl's argument in user memory
 * @args: the argument to copy back to @uarg, @fd already in it
 * @size: size of @args
 *
 * The fd is installed only once the argument is copied back, so that a
 * failing copy leaves the caller's file table untouched.
 *
 * Return: 0, or -ENOMEM or -EFAULT with @fd released.
 */
int kfdsync_sync_file_install(int fd, struct dma_fence *fence,
			      const char *name, void __user *uarg,
			      const void *args, size_t size)
{
	struct sync_file *sync_file = sync_file_create(fence);

	dma_fence_put(fence);
	if (!sync_file) {
		put_unused_fd(fd);
		return -ENOMEM;
	}
	if (name)
		strscpy(sync_file->user_name, name,
			sizeof(sync_file->user_name));
	if (copy_to_user(uarg, args, size)) {
		fput(sync_file->file);
		put_unused_fd(fd);
		return -EFAULT;
	}
	fd_install(fd, sync_file->file);
	return 0;
}

/**
 * kfdsync_fence_exit() - wait until every fence is freed
 *
 * Called at module exit, when the module's reference count, which every
 * fence holds, is zero: waits for the RCU callbacks that free fences and
 * drop those references.
 */
void kfdsync_fence_exit(void)
{
	rcu_barrier();
}
