// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: the fences kfdsync exports.
 *
 * A fence is "the next signal of a registered event after age A": its
 * seqno is A + 1 on the event's own fence context, and it signals when the
 * event's age reaches the seqno (kfdsync_event.c advances the age). A
 * condition fence (KFDSYNC_IOCTL_EXPORT_CONDITION, kfdsync_hsa.c) is
 * instead "the watched value satisfies the condition", on a fence context
 * of its own, checked at every advance of the age. Until
 * then it is on the event's pending list, which holds a reference, and its
 * watchdog is armed, which holds another.
 *
 * Every way a fence ends goes through kfdsync_fence_complete_locked() under
 * the event's lock (the fence lock): the event signal, the watchdog, the
 * errors. It takes the fence off the pending list and signals it; the list's
 * reference is dropped by kfdsync_fence_put_done() after the lock is
 * released, so that no fence is ever freed under its own lock.
 *
 * A fence holds a reference to kfdsync itself, dropped in an RCU callback
 * after the fence memory is gone; module exit waits for those callbacks
 * (rcu_barrier()). So kfdsync cannot be unloaded while any of its fences
 * exists anywhere: in a sync_file, in KMS state, in another process.
 */

#include <linux/dma-fence.h>
#include <linux/eventfd.h>
#include <linux/hrtimer.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/sync_file.h>
#include <linux/file.h>

#include "kfdsync_internal.h"

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
	return to_kfdsync_fence(fence)->ev->timeline;
}

static void kfdsync_fence_free_rcu(struct rcu_head *rcu)
{
	struct dma_fence *fence = container_of(rcu, struct dma_fence, rcu);
	struct kfdsync_fence *f = to_kfdsync_fence(fence);

	if (f->eventfd)
		eventfd_ctx_put(f->eventfd);
	if (f->watch)
		kfdsync_watch_free(f->watch);
	kfdsync_event_put(f->ev);
	kfree(f);
	/* Last: module exit's rcu_barrier() waits for this callback. */
	module_put(THIS_MODULE);
}

static void kfdsync_fence_release(struct dma_fence *fence)
{
	call_rcu(&fence->rcu, kfdsync_fence_free_rcu);
}

static const struct dma_fence_ops kfdsync_fence_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = kfdsync_fence_get_driver_name,
	.get_timeline_name = kfdsync_fence_get_timeline_name,
	.release = kfdsync_fence_release,
};

/**
 * kfdsync_fence_complete_locked() - end a pending fence
 * @f: a fence on its event's pending list
 * @error: 0 to signal, or the -errno to signal with
 * @done: list that takes over the pending list's reference to @f; pass it
 *	  to kfdsync_fence_put_done() after releasing the event's lock
 *
 * Takes @f off the pending list, disarms its watchdog and signals it.
 * Callable from any context; runs the fence's callbacks.
 */
void kfdsync_fence_complete_locked(struct kfdsync_fence *f, int error,
				   struct list_head *done)
{
	struct kfdsync_event *ev = f->ev;

	lockdep_assert_held(&ev->lock);

	list_move_tail(&f->node, done);
	ev->n_pending--;
	atomic_dec(&ev->ctx->n_pending);

	/* 1: disarmed, its reference is ours; -1: the callback drops it. */
	if (hrtimer_try_to_cancel(&f->watchdog) == 1)
		dma_fence_put(&f->base);	/* not the last: @done has one */

	if (error)
		dma_fence_set_error(&f->base, error);
	dma_fence_signal_locked(&f->base);
}

/**
 * kfdsync_fence_put_done() - drop the references of completed fences
 * @done: list filled by kfdsync_fence_complete_locked()
 *
 * Call without any event lock held. A completed fence's watch is never
 * read again: its pin is released here, not when the fence is freed.
 */
void kfdsync_fence_put_done(struct list_head *done)
{
	struct kfdsync_fence *f, *next;

	list_for_each_entry_safe(f, next, done, node) {
		list_del_init(&f->node);
		if (f->watch) {
			kfdsync_watch_free(f->watch);
			f->watch = NULL;
		}
		dma_fence_put(&f->base);
	}
}

static enum hrtimer_restart kfdsync_fence_watchdog(struct hrtimer *timer)
{
	struct kfdsync_fence *f = container_of(timer, struct kfdsync_fence,
					       watchdog);
	struct kfdsync_event *ev = f->ev;
	unsigned long flags;
	LIST_HEAD(done);
	bool cookie;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&ev->lock, flags);
	if (!list_empty(&f->node) && !dma_fence_is_signaled_locked(&f->base))
		kfdsync_fence_complete_locked(f, -ETIMEDOUT, &done);
	spin_unlock_irqrestore(&ev->lock, flags);
	dma_fence_end_signalling(cookie);

	kfdsync_fence_put_done(&done);
	dma_fence_put(&f->base);	/* the watchdog's reference */
	return HRTIMER_NORESTART;
}

static void kfdsync_fence_eventfd_cb(struct dma_fence *fence,
				     struct dma_fence_cb *cb)
{
	struct kfdsync_fence *f = container_of(cb, struct kfdsync_fence, cb);

	kfdsync_eventfd_signal(f->eventfd);
	/* Never the last reference: whoever signals holds one. */
	dma_fence_put(fence);
}

/* The watchdog expiry of a new fence, in CLOCK_MONOTONIC ns. */
static u64 kfdsync_fence_deadline(const struct kfdsync_ctx *ctx,
				  u64 deadline_ns)
{
	u64 now = ktime_get_ns();
	u64 max = now + (u64)ctx->watchdog_max_ms * NSEC_PER_MSEC;

	if (!deadline_ns)
		return now + (u64)ctx->watchdog_ms * NSEC_PER_MSEC;
	return min(deadline_ns, max);
}

/*
 * Create a fence of event @id: for the next signal after @age, or, with
 * @watch (consumed in every case), for its condition. See the callers.
 */
static struct dma_fence *kfdsync_fence_new(struct kfdsync_ctx *ctx, u32 id,
					   u64 age, struct kfdsync_watch *watch,
					   u64 deadline_ns,
					   struct eventfd_ctx *eventfd)
{
	struct kfdsync_event *ev;
	struct kfdsync_fence *f;
	unsigned long flags;
	bool born = false;
	u64 deadline;
	int ret;

	ev = kfdsync_event_lookup(ctx, id);
	if (!ev) {
		if (watch)
			kfdsync_watch_free(watch);
		return ERR_PTR(-ENOENT);
	}

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f) {
		if (watch)
			kfdsync_watch_free(watch);
		kfdsync_event_put(ev);
		return ERR_PTR(-ENOMEM);
	}
	/* The caller's open file pins the module; the fence pins it too. */
	__module_get(THIS_MODULE);
	f->ev = ev;
	f->watch = watch;
	INIT_LIST_HEAD(&f->node);
	hrtimer_init(&f->watchdog, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	f->watchdog.function = kfdsync_fence_watchdog;
	/* Conditions are unordered: one fence context each. */
	if (watch)
		dma_fence_init(&f->base, &kfdsync_fence_ops, &ev->lock,
			       dma_fence_context_alloc(1), 1);
	else
		dma_fence_init(&f->base, &kfdsync_fence_ops, &ev->lock,
			       ev->context, age + 1);
	deadline = kfdsync_fence_deadline(ctx, deadline_ns);

	spin_lock_irqsave(&ev->lock, flags);
	if (!ev->registered) {
		ret = -ENOENT;
		goto err_unlock;
	}
	if (!watch && age > ev->age) {
		ret = -EINVAL;
		goto err_unlock;
	}
	if (ev->error) {
		dma_fence_set_error(&f->base, ev->error);
		dma_fence_signal_locked(&f->base);
		born = true;
	} else if (watch ? kfdsync_watch_holds(watch) : ev->age > age) {
		dma_fence_signal_locked(&f->base);
		born = true;
	} else {
		if (atomic_inc_return(&ctx->n_pending) > ctx->max_fences) {
			atomic_dec(&ctx->n_pending);
			ret = -ENOSPC;
			goto err_unlock;
		}
		list_add_tail(&f->node, &ev->pending);
		ev->n_pending++;
		dma_fence_get(&f->base);	/* the pending list's */
		dma_fence_get(&f->base);	/* the watchdog's */
		hrtimer_start(&f->watchdog, ns_to_ktime(deadline),
			      HRTIMER_MODE_ABS_SOFT);
	}
	spin_unlock_irqrestore(&ev->lock, flags);

	/* Born signalled: the watch is never read again. */
	if (born && f->watch) {
		kfdsync_watch_free(f->watch);
		f->watch = NULL;
	}

	if (eventfd) {
		f->eventfd = eventfd;
		dma_fence_get(&f->base);	/* the callback's */
		if (dma_fence_add_callback(&f->base, &f->cb,
					   kfdsync_fence_eventfd_cb))
			kfdsync_fence_eventfd_cb(&f->base, &f->cb);
	}
	return &f->base;

err_unlock:
	spin_unlock_irqrestore(&ev->lock, flags);
	/* Unpin now, not after the grace period the release waits for. */
	if (f->watch) {
		kfdsync_watch_free(f->watch);
		f->watch = NULL;
	}
	/* Never published: the release frees it, the event and module refs. */
	dma_fence_put(&f->base);
	return ERR_PTR(ret);
}

/**
 * kfdsync_fence_create() - a fence for the next signal of an event
 * @ctx: the caller's context
 * @id: registered event id
 * @age: the fence signals when the event's age exceeds @age
 * @deadline_ns: watchdog expiry (absolute CLOCK_MONOTONIC, capped at now +
 *		 watchdog_max_ms), 0 for the context's default
 * @eventfd: if not NULL, an eventfd to signal when the fence ends; on
 *	     success the fence owns this reference
 *
 * The fence is born signalled if the event's age already exceeds @age, or
 * with the event's sticky error if it has one. Otherwise it counts against
 * the context's max_fences until it ends.
 *
 * Return: a new fence reference, or ERR_PTR(-ENOENT) if @id is not
 * registered, -EINVAL if @age is in the future, -ENOSPC if the context has
 * max_fences pending fences, -ENOMEM.
 */
struct dma_fence *kfdsync_fence_create(struct kfdsync_ctx *ctx, u32 id,
				       u64 age, u64 deadline_ns,
				       struct eventfd_ctx *eventfd)
{
	return kfdsync_fence_new(ctx, id, age, NULL, deadline_ns, eventfd);
}

/**
 * kfdsync_fence_create_watch() - a fence for a watched condition
 * @ctx: the caller's context
 * @id: registered event id, the hint
 * @watch: the value and condition (kfdsync_hsa.c); consumed, also on error
 * @deadline_ns: as for kfdsync_fence_create()
 * @eventfd: as for kfdsync_fence_create()
 *
 * The fence is on its own fence context. It is born signalled if the
 * condition holds now, or with the event's sticky error if it has one;
 * otherwise it signals at the first advance of the event's age that finds
 * the condition true, and counts against the context's max_fences until it
 * ends.
 *
 * Return: a new fence reference, or ERR_PTR(-ENOENT) if @id is not
 * registered, -ENOSPC if the context has max_fences pending fences, -ENOMEM.
 */
struct dma_fence *kfdsync_fence_create_watch(struct kfdsync_ctx *ctx, u32 id,
					     struct kfdsync_watch *watch,
					     u64 deadline_ns,
					     struct eventfd_ctx *eventfd)
{
	return kfdsync_fence_new(ctx, id, 0, watch, deadline_ns, eventfd);
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
 * events and drop those references.
 */
void kfdsync_fence_exit(void)
{
	rcu_barrier();
}
