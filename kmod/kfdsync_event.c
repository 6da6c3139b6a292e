// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: registered events, their signal slots and ages.
 *
 * A context registers amdkfd signal events of its own process. At
 * registration kfdsync finds the event's signal slot in the caller's own
 * address space (never an address it could not have mapped itself), checks
 * that it is amdkfd's events mapping and the slot of that id, and reads the
 * slot through the kernel's direct mapping of the page from then on, from
 * any context.
 *
 * Lifetime of the page: where the page has a reference count of its own (a
 * GPU buffer's page on dGPUs, the first page of amdkfd's events area),
 * kfdsync takes a reference, so the page outlives the owner's. amdkfd's own
 * events area is one 32 KiB non-compound allocation, whose other pages have
 * no reference count to take; amdkfd frees it only when the owner's kfd
 * process is destroyed, after the owner's address space went away or when
 * amdgpu unloads. Both end the context's events first (mmu notifier
 * release, module GOING: a sticky error), and kfdsync never reads the slot
 * of an event that is unregistered or has a sticky error.
 *
 * The age of an event counts the signals kfdsync saw since the registration.
 * It advances on:
 *
 * - a GPU interrupt (hook on kfd_signal_event_interrupt()), if the slot is
 *   set (not all-ones) and this set state was not counted yet. amdkfd resets
 *   the slot to all-ones while it handles the interrupt; kfdsync looks at
 *   the slot when the function is entered (count) and when it returns (an
 *   all-ones slot ends the set state, so the next set is a new signal). A
 *   slot is only counted while it is set, so nothing the hooks see can
 *   advance an age early: not a spurious interrupt, not another process's
 *   interrupt (its events have their own slots), not an unset slot.
 * - a CPU set (hook on kfd_set_event()) of the context's process, after
 *   amdkfd returned success.
 * - KFDSYNC_IOCTL_RELAY_SIGNAL, only while the hooks are not the source.
 *
 * Every advance completes the fences waiting for that age, and checks the
 * condition of every condition fence of the event (kfdsync_hsa.c): for
 * those the signal is only the hint that the watched value may have changed.
 *
 * Locking: the live context list is an RCU list written under
 * kfdsync_live_lock; a context's event list is an RCU list written under
 * &kfdsync_ctx.lock; an event's state is under &kfdsync_event.lock, which
 * nests inside &kfdsync_ctx.lock. All are spinlocks taken with interrupts
 * off: the hooks run with preemption disabled.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include <linux/kfdsync.h>

#include "kfdsync_internal.h"

/* An unsignalled slot (amdkfd's UNSIGNALED_EVENT_SLOT). */
#define KFDSYNC_SLOT_UNSIGNALLED	(~0ULL)

/* The module that maps the events page. */
#define KFDSYNC_AMDGPU			"amdgpu"

/* Live contexts (&kfdsync_ctx.live_node), for the hooks. */
static DEFINE_SPINLOCK(kfdsync_live_lock);
static LIST_HEAD(kfdsync_live_ctxs);

/**
 * kfdsync_source() - where contexts learn of signals right now
 *
 * Return: %KFDSYNC_SOURCE_HOOKS when the GPU interrupt and CPU set hooks are
 * both attached, else %KFDSYNC_SOURCE_RELAY.
 */
u32 kfdsync_source(void)
{
	const u32 need = KFDSYNC_HOOK_GPU_INTERRUPT | KFDSYNC_HOOK_CPU_SET;

	return (kfdsync_hooks_attached() & need) == need ?
		KFDSYNC_SOURCE_HOOKS : KFDSYNC_SOURCE_RELAY;
}

static void kfdsync_event_free_rcu(struct rcu_head *rcu)
{
	struct kfdsync_event *ev = container_of(rcu, struct kfdsync_event, rcu);

	if (ev->page)
		put_page(ev->page);
	kfree(ev);
}

static void kfdsync_event_release(struct kref *ref)
{
	struct kfdsync_event *ev = container_of(ref, struct kfdsync_event, ref);

	/* The hooks may still be looking at it. */
	call_rcu(&ev->rcu, kfdsync_event_free_rcu);
}

/**
 * kfdsync_event_put() - drop a reference to an event
 * @ev: the event; the last put frees it after an RCU grace period
 *
 * Callable from any context.
 */
void kfdsync_event_put(struct kfdsync_event *ev)
{
	kref_put(&ev->ref, kfdsync_event_release);
}

/**
 * kfdsync_event_lookup() - find a registered event of a context
 * @ctx: the context
 * @id: amdkfd event id
 *
 * Return: a new reference to the event, or NULL if @id is not registered.
 */
struct kfdsync_event *kfdsync_event_lookup(struct kfdsync_ctx *ctx, u32 id)
{
	struct kfdsync_event *ev, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	list_for_each_entry(ev, &ctx->events, node) {
		if (ev->id == id) {
			kref_get(&ev->ref);
			found = ev;
			break;
		}
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
	return found;
}

/* Is @file amdgpu's (/dev/kfd, or a render node on dGPUs)? */
static bool kfdsync_file_is_amdgpu(const struct file *file)
{
	struct module *owner = file->f_op ? file->f_op->owner : NULL;

	return owner && !strcmp(module_name(owner), KFDSYNC_AMDGPU);
}

static int kfdsync_slot_pfn(struct vm_area_struct *vma, unsigned long addr,
			    unsigned long *pfn)
{
#ifdef KFDSYNC_HAVE_FOLLOW_PFNMAP
	struct follow_pfnmap_args args = { .vma = vma, .address = addr };
	int ret;

	ret = follow_pfnmap_start(&args);
	if (ret)
		return ret;
	*pfn = args.pfn;
	follow_pfnmap_end(&args);
	return 0;
#else
	return follow_pfn(vma, addr, pfn);
#endif
}

/*
 * Find the page of the slot of event @id at @addr in the caller's address
 * space and pin it if it can be pinned (*@pinned). Return the page or
 * ERR_PTR(-EINVAL).
 */
static struct page *kfdsync_slot_page(unsigned long addr, u32 id,
				      bool *pinned)
{
	struct mm_struct *mm = current->mm;
	unsigned long base = addr - (unsigned long)id * sizeof(u64);
	struct vm_area_struct *vma;
	struct page *page = ERR_PTR(-EINVAL);
	unsigned long pfn;

	if (mmap_read_lock_killable(mm))
		return ERR_PTR(-EINTR);

	vma = vma_lookup(mm, addr);
	/* amdkfd's events area: id 0's slot starts it, in the same mapping. */
	if (!vma || !(vma->vm_flags & VM_PFNMAP) || !vma->vm_file ||
	    !kfdsync_file_is_amdgpu(vma->vm_file) || base < vma->vm_start)
		goto out_unlock;
	if (kfdsync_slot_pfn(vma, addr, &pfn) || !pfn_valid(pfn))
		goto out_unlock;
	page = pfn_to_page(pfn);
	/* Normal RAM, not a reserved page (see the lifetime rule above). */
	if (PageReserved(page))
		page = ERR_PTR(-EINVAL);
	else
		*pinned = get_page_unless_zero(page);

out_unlock:
	mmap_read_unlock(mm);
	return page;
}

/**
 * kfdsync_event_register() - register one of the caller's signal events
 * @ctx: the caller's context (current's process)
 * @id: amdkfd event id, 1 to %KFDSYNC_EVENT_ID_LIMIT - 1
 * @slot_addr: the event's slot in the caller's address space
 *
 * Return: 0; -EINVAL for a bad id or slot (see KFDSYNC_IOCTL_EVENT_REGISTER),
 * -EEXIST if @id is registered, -ENOSPC at max_events, -ENOMEM, -EINTR, or
 * -EPERM if the context is dead.
 */
int kfdsync_event_register(struct kfdsync_ctx *ctx, u32 id, u64 slot_addr)
{
	unsigned long addr = (unsigned long)slot_addr;
	struct kfdsync_event *ev, *other;
	unsigned long flags;
	bool pinned = false;
	struct page *page;
	int ret;

	if (!id || id >= KFDSYNC_EVENT_ID_LIMIT || addr != slot_addr ||
	    !IS_ALIGNED(addr, sizeof(u64)) ||
	    offset_in_page(addr) != offset_in_page(id * sizeof(u64)))
		return -EINVAL;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT);
	if (!ev)
		return -ENOMEM;

	page = kfdsync_slot_page(addr, id, &pinned);
	if (IS_ERR(page)) {
		kfree(ev);
		return PTR_ERR(page);
	}

	kref_init(&ev->ref);
	spin_lock_init(&ev->lock);
	INIT_LIST_HEAD(&ev->pending);
	ev->ctx = ctx;
	ev->id = id;
	ev->page = pinned ? page : NULL;
	ev->slot = page_address(page) + offset_in_page(addr);
	ev->context = dma_fence_context_alloc(1);
	ev->registered = true;
	snprintf(ev->timeline, sizeof(ev->timeline), "kfdsync:%d:ev%u",
		 pid_nr(ctx->tgid), id);
	/* A signal pending at registration counts before age 0. */
	ev->slot_seen = READ_ONCE(*ev->slot) != KFDSYNC_SLOT_UNSIGNALLED;

	spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->dead) {
		ret = -EPERM;
		goto err_unlock;
	}
	list_for_each_entry(other, &ctx->events, node) {
		if (other->id == id) {
			ret = -EEXIST;
			goto err_unlock;
		}
	}
	if (ctx->n_events >= ctx->max_events) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	list_add_tail_rcu(&ev->node, &ctx->events);
	ctx->n_events++;
	spin_unlock_irqrestore(&ctx->lock, flags);
	return 0;

err_unlock:
	spin_unlock_irqrestore(&ctx->lock, flags);
	if (ev->page)
		put_page(ev->page);
	kfree(ev);
	return ret;
}

/* Make the event's sticky error @error (if it has none) and end its fences. */
static void kfdsync_event_fail_locked(struct kfdsync_event *ev, int error,
				      struct list_head *done)
{
	struct kfdsync_fence *f, *next;

	lockdep_assert_held(&ev->lock);

	if (!ev->error)
		ev->error = error;
	list_for_each_entry_safe(f, next, &ev->pending, node)
		kfdsync_fence_complete_locked(f, ev->error, done);
}

/* Take @ev off its context (ctx->lock held) and cancel its fences. */
static void kfdsync_event_unlink(struct kfdsync_ctx *ctx,
				 struct kfdsync_event *ev,
				 struct list_head *done)
{
	lockdep_assert_held(&ctx->lock);

	list_del_rcu(&ev->node);
	ctx->n_events--;
	spin_lock(&ev->lock);
	kfdsync_event_fail_locked(ev, -ECANCELED, done);
	ev->registered = false;
	spin_unlock(&ev->lock);
}

/**
 * kfdsync_event_unregister() - unregister an event, cancel its fences
 * @ctx: the context
 * @id: a registered event id
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int kfdsync_event_unregister(struct kfdsync_ctx *ctx, u32 id)
{
	struct kfdsync_event *ev, *found = NULL;
	unsigned long flags;
	LIST_HEAD(done);

	spin_lock_irqsave(&ctx->lock, flags);
	list_for_each_entry(ev, &ctx->events, node) {
		if (ev->id == id) {
			found = ev;
			kfdsync_event_unlink(ctx, ev, &done);
			break;
		}
	}
	spin_unlock_irqrestore(&ctx->lock, flags);

	if (!found)
		return -ENOENT;
	kfdsync_fence_put_done(&done);
	kfdsync_event_put(found);	/* the context's list's */
	return 0;
}

/* One more signal: advance the age and signal the fences it completes. */
static void kfdsync_event_advance_locked(struct kfdsync_event *ev,
					 struct list_head *done)
{
	struct kfdsync_fence *f, *next;

	lockdep_assert_held(&ev->lock);

	ev->age++;
	list_for_each_entry_safe(f, next, &ev->pending, node) {
		/* A condition fence: the signal is a hint, the value the truth. */
		if (f->watch ? kfdsync_watch_holds(f->watch) :
			       f->base.seqno <= ev->age)
			kfdsync_fence_complete_locked(f, 0, done);
	}
}

/* Outside the hooks: one more signal of @ev (@error 0), or its end. */
static void kfdsync_event_update(struct kfdsync_event *ev, int error)
{
	unsigned long flags;
	LIST_HEAD(done);
	bool cookie;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&ev->lock, flags);
	if (ev->registered) {
		if (error)
			kfdsync_event_fail_locked(ev, error, &done);
		else
			kfdsync_event_advance_locked(ev, &done);
	}
	spin_unlock_irqrestore(&ev->lock, flags);
	dma_fence_end_signalling(cookie);
	kfdsync_fence_put_done(&done);
}

/**
 * kfdsync_event_relay() - a signal relayed by the owner
 * @ctx: the caller's context
 * @id: a registered event id
 *
 * Return: 0, -ENOENT if @id is not registered, -EBUSY if the hooks are the
 * active source.
 */
int kfdsync_event_relay(struct kfdsync_ctx *ctx, u32 id)
{
	struct kfdsync_event *ev = kfdsync_event_lookup(ctx, id);
	int ret = 0;

	if (!ev)
		return -ENOENT;
	if (kfdsync_source() == KFDSYNC_SOURCE_RELAY)
		kfdsync_event_update(ev, 0);
	else
		ret = -EBUSY;
	kfdsync_event_put(ev);
	return ret;
}

/**
 * kfdsync_event_fail() - end a registered event with an error
 * @ctx: the context
 * @id: a registered event id
 * @error: the -errno its pending fences end with; it becomes the event's
 *	   sticky error unless it has one already
 *
 * For imports whose fence ended with an error (KFDSYNC_IMPORT_FAIL_EVENT).
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int kfdsync_event_fail(struct kfdsync_ctx *ctx, u32 id, int error)
{
	struct kfdsync_event *ev = kfdsync_event_lookup(ctx, id);

	if (!ev)
		return -ENOENT;
	kfdsync_event_update(ev, error);
	kfdsync_event_put(ev);
	return 0;
}

/**
 * kfdsync_event_query() - an event's age, sticky error and pending fences
 * @ctx: the context
 * @id: a registered event id
 * @age: out: the age
 * @error: out: 0 or the sticky -errno
 * @pending: out: unsignalled fences
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int kfdsync_event_query(struct kfdsync_ctx *ctx, u32 id, u64 *age,
			int *error, u32 *pending)
{
	struct kfdsync_event *ev;
	unsigned long flags;

	ev = kfdsync_event_lookup(ctx, id);
	if (!ev)
		return -ENOENT;
	spin_lock_irqsave(&ev->lock, flags);
	*age = ev->age;
	*error = ev->error;
	*pending = ev->n_pending;
	spin_unlock_irqrestore(&ev->lock, flags);
	kfdsync_event_put(ev);
	return 0;
}

/*
 * Look at one event's slot. An all-ones slot ends a counted set state; a set
 * slot not counted yet is a signal if @count. Return whether the slot is set.
 */
static bool kfdsync_event_observe(struct kfdsync_event *ev, bool count,
				  struct list_head *done)
{
	unsigned long flags;
	bool set = false;
	u64 slot;

	spin_lock_irqsave(&ev->lock, flags);
	/* An event with an error may have lost its page (lifetime rule). */
	if (ev->registered && !ev->error) {
		slot = READ_ONCE(*ev->slot);
		set = slot != KFDSYNC_SLOT_UNSIGNALLED;
		if (!set) {
			ev->slot_seen = false;
		} else if (count && !ev->slot_seen) {
			ev->slot_seen = true;
			kfdsync_event_advance_locked(ev, done);
		}
	}
	spin_unlock_irqrestore(&ev->lock, flags);
	return set;
}

/*
 * One context's part of an interrupt: only event @id when amdkfd handles it
 * alone (@id set at entry, see below), else every event. Return whether only
 * @id was looked at.
 */
static bool kfdsync_ctx_interrupt(struct kfdsync_ctx *ctx, u32 id,
				  bool entry, struct list_head *done)
{
	struct kfdsync_event *ev;

	if (id) {
		list_for_each_entry_rcu(ev, &ctx->events, node) {
			if (ev->id != id)
				continue;
			if (kfdsync_event_observe(ev, entry, done) || !entry)
				return true;
			break;
		}
	}
	list_for_each_entry_rcu(ev, &ctx->events, node)
		kfdsync_event_observe(ev, entry, done);
	return false;
}

/**
 * kfdsync_events_interrupt() - hook: amdkfd handles a GPU interrupt
 * @pasid: the interrupt's pasid
 * @id: at entry, the event id the interrupt names in full, or 0 (a partial
 *	id); at return, what the entry returned
 * @entry: true at the function's entry (before amdkfd acknowledges slots):
 *	   count newly set slots of @pasid's process; false at its return:
 *	   only notice slots amdkfd acknowledged
 *
 * amdkfd handles the event an interrupt names alone when its slot is set,
 * else it scans every slot of the process; kfdsync does the same, so that an
 * interrupt costs one slot read instead of one per registered event. Only an
 * optimisation: counting a set slot early is never wrong (a set slot is
 * counted once), and the return observes what the entry looked at.
 *
 * Called from the hook with preemption disabled.
 *
 * Return: @id if only event @id was looked at in some context, else 0.
 */
u32 kfdsync_events_interrupt(u32 pasid, u32 id, bool entry)
{
	struct kfdsync_ctx *ctx;
	LIST_HEAD(done);
	bool cookie, one = false;

	cookie = dma_fence_begin_signalling();
	rcu_read_lock();
	list_for_each_entry_rcu(ctx, &kfdsync_live_ctxs, live_node) {
		if (list_empty(&ctx->events))
			continue;
		/* Slots are per process: only an optimisation too. */
		if (!kfdsync_hooks_same_process(pasid, ctx->mm, true))
			continue;
		one |= kfdsync_ctx_interrupt(ctx, id, entry, &done);
	}
	rcu_read_unlock();
	dma_fence_end_signalling(cookie);
	kfdsync_fence_put_done(&done);
	return one ? id : 0;
}

/**
 * kfdsync_events_cpu_set() - hook: amdkfd set an event from the CPU
 * @mm: address space of the process that set it (amdkfd's kfd_set_event()
 *	runs in the owner's context)
 * @id: the event id
 *
 * Called from the hook with preemption disabled, after amdkfd succeeded.
 */
void kfdsync_events_cpu_set(const struct mm_struct *mm, u32 id)
{
	struct kfdsync_event *ev;
	struct kfdsync_ctx *ctx;
	unsigned long flags;
	LIST_HEAD(done);
	bool cookie;

	cookie = dma_fence_begin_signalling();
	rcu_read_lock();
	list_for_each_entry_rcu(ctx, &kfdsync_live_ctxs, live_node) {
		if (ctx->mm != mm)
			continue;
		list_for_each_entry_rcu(ev, &ctx->events, node) {
			if (ev->id != id)
				continue;
			spin_lock_irqsave(&ev->lock, flags);
			if (ev->registered)
				kfdsync_event_advance_locked(ev, &done);
			spin_unlock_irqrestore(&ev->lock, flags);
		}
	}
	rcu_read_unlock();
	dma_fence_end_signalling(cookie);
	kfdsync_fence_put_done(&done);
}

/* End every fence of @ctx with @error, which becomes its events' error. */
static void kfdsync_ctx_fail(struct kfdsync_ctx *ctx, int error,
			     struct list_head *done)
{
	struct kfdsync_event *ev;
	unsigned long flags;

	spin_lock_irqsave(&ctx->lock, flags);
	list_for_each_entry(ev, &ctx->events, node) {
		spin_lock(&ev->lock);
		kfdsync_event_fail_locked(ev, error, done);
		spin_unlock(&ev->lock);
	}
	spin_unlock_irqrestore(&ctx->lock, flags);
}

/**
 * kfdsync_events_fail() - hook: end the fences of a process, or of all
 * @pasid: the process, as amdkfd's pasid
 * @all: every context, not only @pasid's (GPU reset, amdgpu unloading)
 * @error: the -errno the fences end with (sticky for their events)
 *
 * A context whose process cannot be matched to @pasid (amdkfd's lookup
 * functions unavailable) is left alone.
 */
void kfdsync_events_fail(u32 pasid, bool all, int error)
{
	struct kfdsync_ctx *ctx;
	LIST_HEAD(done);
	bool cookie;

	cookie = dma_fence_begin_signalling();
	rcu_read_lock();
	list_for_each_entry_rcu(ctx, &kfdsync_live_ctxs, live_node) {
		if (all || kfdsync_hooks_same_process(pasid, ctx->mm, false))
			kfdsync_ctx_fail(ctx, error, &done);
	}
	rcu_read_unlock();
	dma_fence_end_signalling(cookie);
	kfdsync_fence_put_done(&done);
}

/* The context's address space is going away: its fences cannot signal. */
static void kfdsync_ctx_mm_release(struct mmu_notifier *mn,
				   struct mm_struct *mm)
{
	struct kfdsync_ctx *ctx = container_of(mn, struct kfdsync_ctx, mn);
	unsigned long flags;
	LIST_HEAD(done);

	spin_lock_irqsave(&ctx->lock, flags);
	ctx->dead = true;
	spin_unlock_irqrestore(&ctx->lock, flags);
	kfdsync_ctx_fail(ctx, -ECANCELED, &done);
	kfdsync_fence_put_done(&done);
}

static const struct mmu_notifier_ops kfdsync_ctx_mn_ops = {
	.release = kfdsync_ctx_mm_release,
};

/**
 * kfdsync_ctx_events_init() - make a new context visible to the hooks
 * @ctx: the context, opened by current
 *
 * Return: 0, or -errno if the address space notifier cannot be registered.
 */
int kfdsync_ctx_events_init(struct kfdsync_ctx *ctx)
{
	int ret;

	spin_lock_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->events);
	INIT_LIST_HEAD(&ctx->imports);
	atomic_set(&ctx->n_pending, 0);

	ctx->mn.ops = &kfdsync_ctx_mn_ops;
	ret = mmu_notifier_register(&ctx->mn, ctx->mm);
	if (ret)
		return ret;
	ctx->mn_registered = true;

	spin_lock(&kfdsync_live_lock);
	list_add_tail_rcu(&ctx->live_node, &kfdsync_live_ctxs);
	spin_unlock(&kfdsync_live_lock);
	return 0;
}

/**
 * kfdsync_ctx_events_fini() - unregister every event of a closing context
 * @ctx: the context
 *
 * Its pending fences end with -ECANCELED. The context may still be seen by
 * hooks until an RCU grace period has passed: free it with kfree_rcu().
 */
void kfdsync_ctx_events_fini(struct kfdsync_ctx *ctx)
{
	struct kfdsync_event *ev, *next;
	unsigned long flags;
	LIST_HEAD(done);

	if (!ctx->mn_registered)
		return;

	spin_lock(&kfdsync_live_lock);
	list_del_rcu(&ctx->live_node);
	spin_unlock(&kfdsync_live_lock);

	/* Waits for a running release callback. */
	mmu_notifier_unregister(&ctx->mn, ctx->mm);

	spin_lock_irqsave(&ctx->lock, flags);
	ctx->dead = true;
	list_for_each_entry_safe(ev, next, &ctx->events, node) {
		kfdsync_event_unlink(ctx, ev, &done);
		/* The list's reference; freeing waits for RCU readers. */
		kfdsync_event_put(ev);
	}
	spin_unlock_irqrestore(&ctx->lock, flags);

	kfdsync_fence_put_done(&done);
}

static int kfdsync_events_show(struct seq_file *m, void *unused)
{
	struct kfdsync_event *ev;
	struct kfdsync_ctx *ctx;
	unsigned long flags;
	u64 slot;

	seq_puts(m, "# ctx      tgid     source id    age                  slot               pending error\n");
	rcu_read_lock();
	list_for_each_entry_rcu(ctx, &kfdsync_live_ctxs, live_node) {
		list_for_each_entry_rcu(ev, &ctx->events, node) {
			spin_lock_irqsave(&ev->lock, flags);
			/* Only a live event's slot may be read. */
			slot = ev->registered && !ev->error ?
			       READ_ONCE(*ev->slot) : 0;
			seq_printf(m, "%-8llu %-8d %-6s %-5u %-20llu %#018llx %-7u %d\n",
				   ctx->id, pid_nr(ctx->tgid),
				   kfdsync_source() == KFDSYNC_SOURCE_HOOKS ?
				   "hooks" : "relay", ev->id, ev->age, slot,
				   ev->n_pending, ev->error);
			spin_unlock_irqrestore(&ev->lock, flags);
		}
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsync_events);

/**
 * kfdsync_events_debugfs_init() - create <debugfs>/kfdsync/events
 * @debugfs_root: kfdsync's debugfs directory
 */
void kfdsync_events_debugfs_init(struct dentry *debugfs_root)
{
	debugfs_create_file("events", 0444, debugfs_root, NULL,
			    &kfdsync_events_fops);
}
