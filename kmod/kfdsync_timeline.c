// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: CPU timelines, sw_sync-compatible, with a watchdog and limits.
 */

/**
 * DOC: CPU timelines
 *
 * /dev/kfdsync_timeline gives userspace producers that only userspace can
 * see (CPU stages, decoders, other devices) dma_fences, with the interface
 * of the kernel's sw_sync, which distribution kernels leave off
 * (include/uapi/linux/kfdsync_timeline.h).
 *
 * Every open() is one timeline (&struct kfdsync_tl): a 32-bit value that
 * starts at 0 and one dma_fence context. KFDSYNC_TL_IOC_CREATE_FENCE
 * returns a sync_file for a value; KFDSYNC_TL_IOC_INC advances the value and
 * signals every fence it reaches. As in sw_sync, values compare with 32-bit
 * wrap-around: a fence for a value the timeline has reached, or one more
 * than INT_MAX ahead of it, is born signalled, and a second fence for a
 * value that is still pending is the same fence. Closing the timeline
 * signals its pending fences with -ENOENT.
 *
 * What sw_sync lacks, and production use needs:
 *
 * - A watchdog: a fence still pending watchdog_ms after its creation is
 *   signalled with -ETIMEDOUT, together with every pending fence of a lower
 *   value, and a fence created later for a value at or below it is born
 *   with -ETIMEDOUT, so that the fences of the context still end in order.
 *   Expiry runs in process context, in bounded batches
 *   (kfdsync_watchdog.c).
 * - Limits: open timelines per user (max_user_timelines, -EMFILE) and
 *   system-wide (max_timelines, -ENFILE, not for CAP_SYS_ADMIN, see
 *   kfdsync_user.c); pending fences per timeline
 *   (max_timeline_fences) and per user (max_user_fences), -ENOSPC. As in
 *   sw_sync, a pending fence nobody holds any more leaves the timeline and
 *   counts against nothing.
 * - <debugfs>/kfdsync/timelines: every open timeline and the number of live
 *   fences.
 * - The module cannot unload while any fence lives: every fence holds its
 *   timeline, every timeline holds a reference to the module.
 *
 * Locking: &kfdsync_tl.lock (a spinlock taken with IRQs off) is the lock of
 * every fence of the timeline and protects its value and pending lists. The
 * pending lists hold no reference: a fence's release takes it off them
 * under the lock. Whoever signals under the lock first takes a reference
 * to each fence it signals (kref_get_unless_zero(): a fence whose last
 * reference is going is only unlinked) and drops those references after
 * unlocking, so a fence callback that drops the last reference of another
 * fence never re-enters the lock. The list of open timelines is protected
 * by kfdsync_tl_list_lock (a mutex).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/string_helpers.h>
#include <linux/sync_file.h>
#include <uapi/linux/sync_file.h>
#include <linux/uaccess.h>

#include <linux/kfdsync_timeline.h>

#include "kfdsync_fence.h"
#include "kfdsync_params.h"
#include "kfdsync_timeline.h"
#include "kfdsync_trace.h"
#include "kfdsync_user.h"
#include "kfdsync_watchdog.h"

/*
 * dma_fence_ops.set_deadline came (6.4) with SYNC_IOC_SET_DEADLINE, which
 * <linux/sync_file.h> brings in: the uAPI macro is the feature test.
 */
#ifdef SYNC_IOC_SET_DEADLINE
#define KFDSYNC_TL_HAVE_DEADLINE 1
#else
#define KFDSYNC_TL_HAVE_DEADLINE 0
#endif

/* Fence flag: &kfdsync_tl_fence.deadline is valid. */
#define KFDSYNC_TL_FENCE_HAS_DEADLINE	DMA_FENCE_FLAG_USER_BITS

/**
 * struct kfdsync_tl - one CPU timeline, one open of /dev/kfdsync_timeline
 * @ref:		References: the file and every fence hold one.
 * @lock:		Lock of every fence of the timeline; protects @value,
 *			@pending, @by_age, @nr_pending, @expired, @expired_set
 *			and @open.
 * @value:		Current value; fences up to it are signalled.
 * @pending:		Pending fences by distance ahead of @value (closest
 *			first).
 * @by_age:		The same fences in creation order: deadline order.
 * @nr_pending:		Length of @pending.
 * @expired:		With @expired_set, the highest value the watchdog
 *			ended, not reached yet.
 * @expired_set:	@expired is valid.
 * @open:		The file is open: the watchdog may be armed.
 * @watchdog:		Ends fences older than @watchdog_ms.
 * @context:		The dma_fence context.
 * @node:		Entry in kfdsync_tl_list (kfdsync_tl_list_lock).
 * @id:			Unique id, for debugfs.
 * @tgid:		Process id of the opener.
 * @comm:		Command name of the opener.
 * @name:		Timeline name: "kfdsync-timeline:<tgid>:<comm>".
 * @user:		The opener's user (reference held).
 * @limits:		Limits, snapshots at open.
 * @rcu:		Frees the timeline after a grace period.
 *
 * Fields not marked otherwise are set at open and constant.
 */
struct kfdsync_tl {
	struct kref ref;
	/* The fences' lock; see the kernel-doc above. */
	spinlock_t lock;
	u32 value;
	struct list_head pending;
	struct list_head by_age;
	unsigned int nr_pending;
	u32 expired;
	bool expired_set;
	bool open;
	struct kfdsync_watchdog watchdog;
	u64 context;
	struct list_head node;
	u64 id;
	pid_t tgid;
	char comm[TASK_COMM_LEN];
	char name[64];
	struct kfdsync_user *user;
	struct kfdsync_tl_limits limits;
	struct rcu_head rcu;
};

/**
 * struct kfdsync_tl_fence - a fence of a CPU timeline
 * @base:	The dma_fence; first, as dma_fence_free() frees it.
 * @tl:		The timeline (reference held).
 * @link:	Entry in &kfdsync_tl.pending while pending (timeline lock).
 * @age_link:	Entry in &kfdsync_tl.by_age while pending (timeline lock).
 * @done_link:	Entry in a list of signalled fences, with a reference.
 * @expires:	Watchdog expiry, CLOCK_MONOTONIC ns.
 * @deadline:	Earliest deadline hint, valid with KFDSYNC_TL_FENCE_HAS_DEADLINE
 *		(fence lock).
 */
struct kfdsync_tl_fence {
	struct dma_fence base;
	struct kfdsync_tl *tl;
	struct list_head link;
	struct list_head age_link;
	struct list_head done_link;
	u64 expires;
	ktime_t deadline;
};

static DEFINE_MUTEX(kfdsync_tl_list_lock);
static LIST_HEAD(kfdsync_tl_list);
static unsigned int kfdsync_tl_count;
static u64 kfdsync_tl_next_id;

/* Fences created and not yet released, for debugfs and leak tests. */
static atomic_t kfdsync_tl_live_fences = ATOMIC_INIT(0);

static struct dentry *kfdsync_tl_debugfs;

static const struct dma_fence_ops kfdsync_tl_fence_ops;

static struct kfdsync_tl *fence_tl(struct dma_fence *fence)
{
	return container_of(fence, struct kfdsync_tl_fence, base)->tl;
}

static void kfdsync_tl_free_rcu(struct rcu_head *rcu)
{
	struct kfdsync_tl *tl = container_of(rcu, struct kfdsync_tl, rcu);

	kfdsync_user_put(tl->user);
	kfree(tl);
	/* Last: module exit's rcu_barrier() waits for this callback. */
	module_put(THIS_MODULE);
}

static void kfdsync_tl_release(struct kref *ref)
{
	struct kfdsync_tl *tl = container_of(ref, struct kfdsync_tl, ref);

	/* RCU readers of a fence may still look at its timeline name. */
	call_rcu(&tl->rcu, kfdsync_tl_free_rcu);
}

static void kfdsync_tl_get(struct kfdsync_tl *tl)
{
	kref_get(&tl->ref);
}

static void kfdsync_tl_put(struct kfdsync_tl *tl)
{
	kref_put(&tl->ref, kfdsync_tl_release);
}

static const char *kfdsync_tl_fence_driver_name(struct dma_fence *fence)
{
	return "kfdsync";
}

static const char *kfdsync_tl_fence_timeline_name(struct dma_fence *fence)
{
	return fence_tl(fence)->name;
}

/* Take a pending fence off the timeline; the lock held. */
static void kfdsync_tl_unlink_locked(struct kfdsync_tl *tl,
				     struct kfdsync_tl_fence *f)
{
	lockdep_assert_held(&tl->lock);

	list_del_init(&f->link);
	list_del_init(&f->age_link);
	tl->nr_pending--;
	kfdsync_user_uncharge(tl->user, KFDSYNC_USER_FENCES);
}

static void kfdsync_tl_fence_release(struct dma_fence *fence)
{
	struct kfdsync_tl_fence *f =
		container_of(fence, struct kfdsync_tl_fence, base);
	struct kfdsync_tl *tl = fence_tl(fence);
	unsigned long flags;

	/* Nobody holds it any more: it leaves the timeline, as in sw_sync. */
	spin_lock_irqsave(&tl->lock, flags);
	if (!list_empty(&f->link))
		kfdsync_tl_unlink_locked(tl, f);
	spin_unlock_irqrestore(&tl->lock, flags);
	atomic_dec(&kfdsync_tl_live_fences);
	dma_fence_free(fence);
	kfdsync_tl_put(tl);
}

#if KFDSYNC_TL_HAVE_DEADLINE
static struct kfdsync_tl_fence *to_tl_fence(struct dma_fence *fence)
{
	if (fence->ops != &kfdsync_tl_fence_ops)
		return NULL;
	return container_of(fence, struct kfdsync_tl_fence, base);
}

static void kfdsync_tl_fence_set_deadline(struct dma_fence *fence,
					  ktime_t deadline)
{
	struct kfdsync_tl_fence *f = to_tl_fence(fence);
	unsigned long flags;

	spin_lock_irqsave(&f->tl->lock, flags);
	if (!test_bit(KFDSYNC_TL_FENCE_HAS_DEADLINE, &fence->flags) ||
	    ktime_before(deadline, f->deadline))
		f->deadline = deadline;
	__set_bit(KFDSYNC_TL_FENCE_HAS_DEADLINE, &fence->flags);
	spin_unlock_irqrestore(&f->tl->lock, flags);
}
#endif

static const struct dma_fence_ops kfdsync_tl_fence_ops = {
	.get_driver_name = kfdsync_tl_fence_driver_name,
	.get_timeline_name = kfdsync_tl_fence_timeline_name,
	.release = kfdsync_tl_fence_release,
#if KFDSYNC_TL_HAVE_DEADLINE
	.set_deadline = kfdsync_tl_fence_set_deadline,
#endif
};

/* How far @value is ahead of the timeline; 0 or >INT_MAX: reached. */
static u32 kfdsync_tl_ahead(struct kfdsync_tl *tl, u32 value)
{
	return value - tl->value;
}

static bool kfdsync_tl_reached(struct kfdsync_tl *tl, u32 value)
{
	u32 ahead = kfdsync_tl_ahead(tl, value);

	return !ahead || ahead > INT_MAX;
}

/*
 * Signal a pending fence with @error (0 for success) and take it off the
 * timeline; it joins @done with a new reference, unless its last reference
 * is already going (then nobody can see it and it is only unlinked).
 */
static void kfdsync_tl_signal_locked(struct kfdsync_tl *tl,
				     struct kfdsync_tl_fence *f, int error,
				     struct list_head *done)
{
	lockdep_assert_held(&tl->lock);

	kfdsync_tl_unlink_locked(tl, f);
	if (!kref_get_unless_zero(&f->base.refcount)) {
		trace_kfdsync_fence_end(&f->base, error, true);
		return;
	}
	trace_kfdsync_fence_end(&f->base, error, false);
	if (error)
		dma_fence_set_error(&f->base, error);
	dma_fence_signal_locked(&f->base);
	list_add_tail(&f->done_link, done);
}

/* Drop the references of fences signalled under the lock. */
static void kfdsync_tl_put_done(struct list_head *done)
{
	struct kfdsync_tl_fence *f, *next;

	list_for_each_entry_safe(f, next, done, done_link) {
		list_del(&f->done_link);
		dma_fence_put(&f->base);
	}
}

/* Signal every pending fence at most @limit ahead with @error. */
static void kfdsync_tl_signal_upto_locked(struct kfdsync_tl *tl, u32 limit,
					  int error, struct list_head *done)
{
	struct kfdsync_tl_fence *f, *next;

	/* Distances are at most INT_MAX, so the list is in value order. */
	list_for_each_entry_safe(f, next, &tl->pending, link) {
		if (kfdsync_tl_ahead(tl, (u32)f->base.seqno) > limit)
			break;
		kfdsync_tl_signal_locked(tl, f, error, done);
	}
}

/* Advance the timeline by @inc (at most INT_MAX); signal what it reaches. */
static void kfdsync_tl_advance_locked(struct kfdsync_tl *tl, u32 inc,
				      struct list_head *done)
{
	lockdep_assert_held(&tl->lock);

	kfdsync_tl_signal_upto_locked(tl, inc, 0, done);
	tl->value += inc;
	if (tl->expired_set && kfdsync_tl_reached(tl, tl->expired))
		tl->expired_set = false;
}

static void kfdsync_tl_watchdog_arm_locked(struct kfdsync_tl *tl)
{
	struct kfdsync_tl_fence *oldest;

	lockdep_assert_held(&tl->lock);

	oldest = list_first_entry_or_null(&tl->by_age, struct kfdsync_tl_fence,
					  age_link);
	if (oldest && tl->open)
		kfdsync_watchdog_arm(&tl->watchdog, oldest->expires);
}

/*
 * The watchdog: a fence pending for watchdog_ms is signalled with
 * -ETIMEDOUT, and so is every pending fence of a lower value, which must not
 * signal after it; KFDSYNC_WATCHDOG_BATCH expiries at a time.
 */
static void kfdsync_tl_watchdog_expire(struct kfdsync_watchdog *wd)
{
	struct kfdsync_tl *tl = container_of(wd, struct kfdsync_tl, watchdog);
	struct kfdsync_tl_fence *oldest;
	unsigned int n = 0;
	bool more = false;
	LIST_HEAD(done);
	bool cookie;
	u32 value;
	u64 now;

	cookie = dma_fence_begin_signalling();
	spin_lock_irq(&tl->lock);
	now = ktime_get_ns();
	while ((oldest = list_first_entry_or_null(&tl->by_age,
						  struct kfdsync_tl_fence,
						  age_link)) &&
	       oldest->expires <= now) {
		if (n++ == KFDSYNC_WATCHDOG_BATCH) {
			more = tl->open;
			break;
		}
		trace_kfdsync_watchdog(&oldest->base, oldest->expires, now);
		value = (u32)oldest->base.seqno;
		if (!tl->expired_set || kfdsync_tl_ahead(tl, value) >
					kfdsync_tl_ahead(tl, tl->expired)) {
			tl->expired = value;
			tl->expired_set = true;
		}
		kfdsync_tl_signal_upto_locked(tl, kfdsync_tl_ahead(tl, value),
					      -ETIMEDOUT, &done);
	}
	if (more)
		kfdsync_watchdog_again(wd);
	else
		kfdsync_tl_watchdog_arm_locked(tl);
	spin_unlock_irq(&tl->lock);

	kfdsync_tl_put_done(&done);
	dma_fence_end_signalling(cookie);
}

/*
 * Find or add the fence for @value. Returns a new reference to the fence,
 * or ERR_PTR(-ENOMEM / -ENOSPC).
 */
static struct dma_fence *kfdsync_tl_fence_get(struct kfdsync_tl *tl,
					      u32 value)
{
	struct kfdsync_tl_fence *f, *pos;
	struct list_head *after;
	u32 ahead;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&f->link);
	INIT_LIST_HEAD(&f->age_link);
	f->tl = tl;
	dma_fence_init(&f->base, &kfdsync_tl_fence_ops, &tl->lock, tl->context,
		       value);

	spin_lock_irq(&tl->lock);
	if (kfdsync_tl_reached(tl, value)) {
		/* Born signalled, as in sw_sync; not pending. */
		dma_fence_signal_locked(&f->base);
		goto add;
	}
	ahead = kfdsync_tl_ahead(tl, value);
	if (tl->expired_set && ahead <= kfdsync_tl_ahead(tl, tl->expired)) {
		/* Behind a fence the watchdog ended: ended too, in order. */
		dma_fence_set_error(&f->base, -ETIMEDOUT);
		dma_fence_signal_locked(&f->base);
		goto add;
	}

	/* Scan from the farthest: values usually grow. */
	after = &tl->pending;
	list_for_each_entry_reverse(pos, &tl->pending, link) {
		u32 pos_ahead = kfdsync_tl_ahead(tl, (u32)pos->base.seqno);

		/* The same value's fence, unless its last reference is going. */
		if (pos_ahead == ahead && kref_get_unless_zero(&pos->base.refcount)) {
			spin_unlock_irq(&tl->lock);
			/* Never published, never referenced by anyone else. */
			kfree(f);
			return &pos->base;
		}
		if (pos_ahead <= ahead) {
			after = &pos->link;
			break;
		}
	}
	if (tl->nr_pending >= tl->limits.max_fences ||
	    !kfdsync_user_charge(tl->user, KFDSYNC_USER_FENCES,
				 tl->limits.max_user_fences)) {
		spin_unlock_irq(&tl->lock);
		kfree(f);
		return ERR_PTR(-ENOSPC);
	}

	list_add(&f->link, after);
	f->expires = ktime_get_ns() + (u64)tl->limits.watchdog_ms * NSEC_PER_MSEC;
	list_add_tail(&f->age_link, &tl->by_age);
	if (!tl->nr_pending++)
		kfdsync_tl_watchdog_arm_locked(tl);
add:
	kfdsync_tl_get(tl);
	atomic_inc(&kfdsync_tl_live_fences);
	spin_unlock_irq(&tl->lock);
	return &f->base;
}

/*
 * KFDSYNC_TL_IOC_CREATE_FENCE. Errors: -EFAULT, -EINVAL (@name not
 * NUL-terminated), -ENOSPC (max_timeline_fences pending), -ENOMEM, -EMFILE
 * (no free fd).
 */
static long kfdsync_tl_ioctl_create_fence(struct kfdsync_tl *tl,
					  void __user *uarg)
{
	struct kfdsync_tl_create_fence args;
	struct dma_fence *fence;
	int fd;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (!memchr(args.name, '\0', sizeof(args.name)))
		return -EINVAL;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;

	fence = kfdsync_tl_fence_get(tl, args.value);
	if (IS_ERR(fence)) {
		put_unused_fd(fd);
		return PTR_ERR(fence);
	}

	args.fence = fd;
	return kfdsync_sync_file_install(fd, fence, args.name, uarg, &args,
					 sizeof(args));
}

/* KFDSYNC_TL_IOC_INC. Errors: -EFAULT. */
static long kfdsync_tl_ioctl_inc(struct kfdsync_tl *tl, void __user *uarg)
{
	LIST_HEAD(done);
	bool cookie;
	u32 inc;

	if (copy_from_user(&inc, uarg, sizeof(inc)))
		return -EFAULT;

	cookie = dma_fence_begin_signalling();
	spin_lock_irq(&tl->lock);
	trace_kfdsync_timeline_inc(tl->context, inc, tl->value);
	/* As sw_sync: steps of at most INT_MAX, so 32-bit compares work. */
	while (inc > INT_MAX) {
		kfdsync_tl_advance_locked(tl, INT_MAX, &done);
		inc -= INT_MAX;
	}
	kfdsync_tl_advance_locked(tl, inc, &done);
	spin_unlock_irq(&tl->lock);

	kfdsync_tl_put_done(&done);
	dma_fence_end_signalling(cookie);
	return 0;
}

/*
 * KFDSYNC_TL_IOC_GET_DEADLINE, 6.4+. Errors: -EFAULT, -EINVAL (@deadline_ns
 * or @pad not 0, @fence_fd not a sync_file of one timeline fence), -ENOENT
 * (no deadline set).
 */
static long kfdsync_tl_ioctl_get_deadline(struct kfdsync_tl *tl,
					  void __user *uarg)
{
#if KFDSYNC_TL_HAVE_DEADLINE
	struct kfdsync_tl_get_deadline args;
	struct kfdsync_tl_fence *f;
	struct dma_fence *fence;
	unsigned long flags;
	int ret = 0;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.deadline_ns || args.pad)
		return -EINVAL;

	fence = sync_file_get_fence(args.fence_fd);
	if (!fence)
		return -EINVAL;
	f = to_tl_fence(fence);
	if (!f) {
		ret = -EINVAL;
		goto out_put;
	}

	spin_lock_irqsave(&f->tl->lock, flags);
	if (test_bit(KFDSYNC_TL_FENCE_HAS_DEADLINE, &fence->flags))
		args.deadline_ns = ktime_to_ns(f->deadline);
	else
		ret = -ENOENT;
	spin_unlock_irqrestore(&f->tl->lock, flags);

	if (!ret && copy_to_user(uarg, &args, sizeof(args)))
		ret = -EFAULT;
out_put:
	dma_fence_put(fence);
	return ret;
#else
	return -ENOTTY;
#endif
}

static long kfdsync_tl_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct kfdsync_tl *tl = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KFDSYNC_TL_IOC_CREATE_FENCE:
		return kfdsync_tl_ioctl_create_fence(tl, uarg);
	case KFDSYNC_TL_IOC_INC:
		return kfdsync_tl_ioctl_inc(tl, uarg);
	case KFDSYNC_TL_IOC_GET_DEADLINE:
		return kfdsync_tl_ioctl_get_deadline(tl, uarg);
	default:
		return -ENOTTY;
	}
}

/*
 * open() errors: -ENOMEM, -EMFILE (max_user_timelines timelines of the
 * user open), -ENFILE (max_timelines timelines open, and the caller has no
 * CAP_SYS_ADMIN).
 */
static int kfdsync_tl_open(struct inode *inode, struct file *file)
{
	struct kfdsync_tl *tl;
	int ret;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;

	tl = kzalloc(sizeof(*tl), GFP_KERNEL_ACCOUNT);
	if (!tl)
		return -ENOMEM;
	tl->user = kfdsync_user_get();
	if (!tl->user) {
		kfree(tl);
		return -ENOMEM;
	}
	kfdsync_params_tl(&tl->limits);
	if (!kfdsync_user_charge(tl->user, KFDSYNC_USER_TIMELINES,
				 tl->limits.max_user_timelines)) {
		kfdsync_user_put(tl->user);
		kfree(tl);
		return -EMFILE;
	}

	kref_init(&tl->ref);
	spin_lock_init(&tl->lock);
	INIT_LIST_HEAD(&tl->pending);
	INIT_LIST_HEAD(&tl->by_age);
	kfdsync_watchdog_init(&tl->watchdog, kfdsync_tl_watchdog_expire);
	tl->open = true;
	tl->context = dma_fence_context_alloc(1);
	tl->tgid = task_tgid_nr(current);
	get_task_comm(tl->comm, current);
	snprintf(tl->name, sizeof(tl->name), "kfdsync-timeline:%d:%s",
		 task_tgid_nr(current), tl->comm);

	mutex_lock(&kfdsync_tl_list_lock);
	if (kfdsync_tl_count >= tl->limits.max_timelines &&
	    !kfdsync_user_beyond_global()) {
		mutex_unlock(&kfdsync_tl_list_lock);
		kfdsync_user_uncharge(tl->user, KFDSYNC_USER_TIMELINES);
		kfdsync_user_put(tl->user);
		kfree(tl);
		return -ENFILE;
	}
	tl->id = kfdsync_tl_next_id++;
	list_add_tail(&tl->node, &kfdsync_tl_list);
	kfdsync_tl_count++;
	mutex_unlock(&kfdsync_tl_list_lock);
	trace_kfdsync_timeline_create(tl->tgid, tl->context);

	/* Dropped after the last fence and the file are gone. */
	__module_get(THIS_MODULE);
	file->private_data = tl;
	return 0;
}

static int kfdsync_tl_file_release(struct inode *inode, struct file *file)
{
	struct kfdsync_tl *tl = file->private_data;
	LIST_HEAD(done);
	bool cookie;

	mutex_lock(&kfdsync_tl_list_lock);
	list_del(&tl->node);
	kfdsync_tl_count--;
	mutex_unlock(&kfdsync_tl_list_lock);

	trace_kfdsync_end(KFDSYNC_END_CLOSE, -ENOENT, tl->tgid, 0);
	cookie = dma_fence_begin_signalling();
	spin_lock_irq(&tl->lock);
	tl->open = false;
	kfdsync_tl_signal_upto_locked(tl, U32_MAX, -ENOENT, &done);
	spin_unlock_irq(&tl->lock);

	kfdsync_tl_put_done(&done);
	dma_fence_end_signalling(cookie);
	/* Nothing pending, closed: the watchdog does not re-arm. */
	kfdsync_watchdog_stop(&tl->watchdog);
	kfdsync_user_uncharge(tl->user, KFDSYNC_USER_TIMELINES);
	kfdsync_tl_put(tl);
	return 0;
}

/*
 * /proc/PID/fdinfo/FD: the "kfdsync-" keys, ABI documented in
 * include/uapi/linux/kfdsync_timeline.h (keys are only ever added).
 */
static void kfdsync_tl_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct kfdsync_tl *tl = file->private_data;
	unsigned int nr_pending;
	u32 value;

	spin_lock_irq(&tl->lock);
	value = tl->value;
	nr_pending = tl->nr_pending;
	spin_unlock_irq(&tl->lock);
	seq_printf(m, "kfdsync-timeline:\t%llu\n", tl->id);
	seq_printf(m, "kfdsync-fence-context:\t%llu\n", tl->context);
	seq_printf(m, "kfdsync-value:\t%u\n", value);
	seq_printf(m, "kfdsync-pending:\t%u\n", nr_pending);
	seq_printf(m, "kfdsync-max-fences:\t%u\n", tl->limits.max_fences);
	seq_printf(m, "kfdsync-watchdog-ms:\t%u\n", tl->limits.watchdog_ms);
	seq_puts(m, "kfdsync-name:\t");
	seq_escape(m, tl->name, " \t\n\\");
	seq_putc(m, '\n');
}

static const struct file_operations kfdsync_tl_fops = {
	.owner = THIS_MODULE,
	.open = kfdsync_tl_open,
	.release = kfdsync_tl_file_release,
	.unlocked_ioctl = kfdsync_tl_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = kfdsync_tl_show_fdinfo,
};

/* Kernel default mode 0600; the udev rule opens it up like DRM nodes. */
static struct miscdevice kfdsync_tl_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kfdsync_timeline",
	.fops = &kfdsync_tl_fops,
};

static int kfdsync_timelines_show(struct seq_file *m, void *unused)
{
	struct kfdsync_tl_limits limits;
	char comm[4 * TASK_COMM_LEN], name[4 * sizeof_field(struct kfdsync_tl, name)];
	unsigned int nr_pending;
	struct kfdsync_tl *tl;
	u32 value;
	int len;

	mutex_lock(&kfdsync_tl_list_lock);
	kfdsync_params_tl(&limits);
	seq_printf(m, "# %u of %u timelines, %d live fences\n",
		   kfdsync_tl_count, limits.max_timelines,
		   atomic_read(&kfdsync_tl_live_fences));
	seq_puts(m, "# id       tgid     comm             context  value      pending max_fences watchdog_ms name\n");
	list_for_each_entry(tl, &kfdsync_tl_list, node) {
		/* Copy under the lock, print after: no printing with IRQs off. */
		spin_lock_irq(&tl->lock);
		value = tl->value;
		nr_pending = tl->nr_pending;
		spin_unlock_irq(&tl->lock);
		/* One word each, whatever the names: octal, as mountinfo. */
		len = string_escape_str(tl->comm, comm, sizeof(comm) - 1,
					ESCAPE_OCTAL, " \t\n\\");
		comm[min_t(int, len, sizeof(comm) - 1)] = '\0';
		len = string_escape_str(tl->name, name, sizeof(name) - 1,
					ESCAPE_OCTAL, " \t\n\\");
		name[min_t(int, len, sizeof(name) - 1)] = '\0';
		seq_printf(m, "%-8llu %-8d %-16s %-8llu %-10u %-7u %-10u %-11u %s\n",
			   tl->id, tl->tgid, comm, tl->context, value,
			   nr_pending, tl->limits.max_fences,
			   tl->limits.watchdog_ms, name);
	}
	mutex_unlock(&kfdsync_tl_list_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsync_timelines);

/**
 * kfdsync_timeline_init() - register /dev/kfdsync_timeline
 * @debugfs_root: the module's debugfs directory (may be an error pointer)
 *
 * Return: 0 or a negative errno from misc_register().
 */
int kfdsync_timeline_init(struct dentry *debugfs_root)
{
	int ret;

	ret = misc_register(&kfdsync_tl_misc);
	if (ret)
		return ret;

	kfdsync_tl_debugfs = debugfs_create_file("timelines", 0444,
						 debugfs_root, NULL,
						 &kfdsync_timelines_fops);
	return 0;
}

/**
 * kfdsync_timeline_exit() - unregister /dev/kfdsync_timeline
 *
 * No timeline or fence exists any more: each holds a module reference.
 */
void kfdsync_timeline_exit(void)
{
	debugfs_remove(kfdsync_tl_debugfs);
	misc_deregister(&kfdsync_tl_misc);
	/* Wait for the timelines' RCU frees (each holds a module reference). */
	rcu_barrier();
}
