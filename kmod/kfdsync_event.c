// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: the events a context registered, their ages and fences.
 *
 * A context registers amdkfd signal events of its own process. Each
 * registered event has an age, the signals counted since the registration,
 * a fence context, and a queue of pending fences (kfdsync_fence.c). The
 * age advances, and fences up to it signal:
 *
 * - in hooks mode (KFDSYNC_SOURCE_HOOKS), when the slot layer
 *   (kfdsync_slot.c) counts a signal of the event's slot: a GPU write that
 *   amdkfd acknowledges, or a CPU set;
 * - in relay mode (KFDSYNC_SOURCE_RELAY), when the owner relays signals it
 *   saw (KFDSYNC_IOCTL_RELAY_SIGNAL).
 *
 * The source is the one active when the event was registered and never
 * changes: an event is counted by one source only.
 *
 * Every advance also checks the conditions of the event's condition fences
 * (kfdsync_hsa.c): for those the signal is only a hint.
 *
 * Locking: a context's table is an xarray (RCU lookups); an event's state
 * is under its queue's lock (&kfdsync_fences.lock, irqsave), which nests
 * inside the slot lock when the slot layer calls in.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-fence.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <linux/kfdsync.h>

#include "kfdsync_amdkfd.h"
#include "kfdsync_event.h"
#include "kfdsync_trace.h"
#include "kfdsync_user.h"
#include "kfdsync_watch.h"

static void kfdsync_event_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct kfdsync_event, rcu));
}

static void kfdsync_event_release(struct kref *ref)
{
	struct kfdsync_event *ev = container_of(ref, struct kfdsync_event, ref);

	kfdsync_fences_put(ev->fs);
	/* Table readers may still be looking at it. */
	call_rcu(&ev->rcu, kfdsync_event_free_rcu);
}

static void kfdsync_event_put(struct kfdsync_event *ev)
{
	kref_put(&ev->ref, kfdsync_event_release);
}

/* A registered event of @evs, with a new reference, or NULL. */
static struct kfdsync_event *kfdsync_event_lookup(struct kfdsync_events *evs,
						  u32 id)
{
	struct kfdsync_event *ev;

	rcu_read_lock();
	ev = xa_load(&evs->table, id);
	if (ev && !kref_get_unless_zero(&ev->ref))
		ev = NULL;
	rcu_read_unlock();
	return ev;
}

/* One more signal (or @count) of a live event; the queue lock held. */
static void kfdsync_event_advance_locked(struct kfdsync_event *ev, u64 count,
					 struct list_head *done)
{
	lockdep_assert_held(&ev->fs->lock);

	if (!ev->registered || ev->error)
		return;
	ev->age += count;
	trace_kfdsync_signal(ev->evs->tgid, ev->id, ev->fs->context, ev->source, count, ev->age);
	kfdsync_fences_reach_locked(ev->fs, ev->age, true, done);
}

/* The event ends with @error (sticky unless it has one); lock held. */
static void kfdsync_event_end_locked(struct kfdsync_event *ev, int error,
				     struct list_head *done)
{
	lockdep_assert_held(&ev->fs->lock);

	if (!ev->registered)
		return;
	if (!ev->error)
		ev->error = error;
	kfdsync_fences_end_locked(ev->fs, ev->error, done);
}

static void kfdsync_event_slot_signal(struct kfdsync_slot_sub *sub,
				      struct list_head *done)
{
	struct kfdsync_event *ev = container_of(sub, struct kfdsync_event, sub);
	unsigned long flags;

	spin_lock_irqsave(&ev->fs->lock, flags);
	kfdsync_event_advance_locked(ev, 1, done);
	spin_unlock_irqrestore(&ev->fs->lock, flags);
}

static void kfdsync_event_slot_end(struct kfdsync_slot_sub *sub, int error,
				   struct list_head *done)
{
	struct kfdsync_event *ev = container_of(sub, struct kfdsync_event, sub);
	unsigned long flags;

	spin_lock_irqsave(&ev->fs->lock, flags);
	kfdsync_event_end_locked(ev, error, done);
	spin_unlock_irqrestore(&ev->fs->lock, flags);
}

static const struct kfdsync_slot_sub_ops kfdsync_event_sub_ops = {
	.signal = kfdsync_event_slot_signal,
	.end = kfdsync_event_slot_end,
};

/* Outside the slot layer: @count signals of @ev, or its end with @error. */
static void kfdsync_event_update(struct kfdsync_event *ev, u64 count,
				 int error)
{
	unsigned long flags;
	LIST_HEAD(done);
	bool cookie;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&ev->fs->lock, flags);
	if (error)
		kfdsync_event_end_locked(ev, error, &done);
	else
		kfdsync_event_advance_locked(ev, count, &done);
	spin_unlock_irqrestore(&ev->fs->lock, flags);
	dma_fence_end_signalling(cookie);
	kfdsync_fence_put_done(&done);
}

/* Take a registered event's resources back (after it left the table). */
static void kfdsync_event_close(struct kfdsync_event *ev)
{
	struct kfdsync_events *evs = ev->evs;
	unsigned long flags;

	spin_lock_irqsave(&ev->fs->lock, flags);
	ev->registered = false;
	spin_unlock_irqrestore(&ev->fs->lock, flags);
	trace_kfdsync_unregister(evs->tgid, ev->id, ev->fs->context, ev->age);
	/* Pending fences end with -ECANCELED, the watchdog stops. */
	kfdsync_fences_close(ev->fs);
	if (ev->source == KFDSYNC_SOURCE_HOOKS)
		kfdsync_slot_unsubscribe(&ev->sub);

	spin_lock(&evs->lock);
	evs->n--;
	spin_unlock(&evs->lock);
	kfdsync_user_uncharge(evs->user, KFDSYNC_USER_EVENTS);
	kfdsync_event_put(ev);	/* the table's */
}

/* A new event of @evs, not yet visible. */
static struct kfdsync_event *kfdsync_event_new(struct kfdsync_events *evs,
					       u32 id)
{
	const struct kfdsync_fences_limits limits = {
		.pending = &evs->n_pending,
		.max = evs->max_fences,
		.user = evs->user,
		.user_max = evs->max_user_fences,
	};
	char timeline[KFDSYNC_TIMELINE_NAME_LEN];
	struct kfdsync_event *ev;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT);
	if (!ev)
		return NULL;
	snprintf(timeline, sizeof(timeline), "kfdsync:%d:ev%u", evs->tgid, id);
	ev->fs = kfdsync_fences_new(dma_fence_context_alloc(1), timeline,
				    &limits);
	if (!ev->fs) {
		kfree(ev);
		return NULL;
	}
	kref_init(&ev->ref);
	ev->evs = evs;
	ev->id = id;
	ev->registered = true;
	ev->sub.ops = &kfdsync_event_sub_ops;
	return ev;
}

/**
 * kfdsync_event_register() - register one of the caller's signal events
 * @evs: the caller's context's events (current's process)
 * @id: amdkfd event id, 1 to %KFDSYNC_EVENT_ID_LIMIT - 1
 * @slot_addr: the event's slot in the caller's address space: only checked
 *	       for alignment (the slot is found by @id)
 *
 * The event is counted by the hooks when they are active and can watch its
 * slot (found by @id in amdkfd's own state), otherwise by the owner's relay.
 *
 * Return: 0; -EINVAL for a bad id or slot (see KFDSYNC_IOCTL_EVENT_REGISTER),
 * -EEXIST if @id is registered, -ENOSPC at the context's or the user's
 * limit of events, -ENOMEM, -EINTR, or -EPERM if the context is dead.
 */
int kfdsync_event_register(struct kfdsync_events *evs, u32 id, u64 slot_addr)
{
	unsigned long addr = (unsigned long)slot_addr;
	struct kfdsync_event *ev;
	bool dead;
	int ret;

	if (!id || id >= KFDSYNC_EVENT_ID_LIMIT || addr != slot_addr ||
	    !IS_ALIGNED(addr, sizeof(u64)))
		return -EINVAL;

	spin_lock(&evs->lock);
	if (evs->dead) {
		ret = -EPERM;
	} else if (evs->n >= evs->max_events) {
		ret = -ENOSPC;
	} else {
		evs->n++;
		ret = 0;
	}
	spin_unlock(&evs->lock);
	if (ret)
		return ret;
	if (!kfdsync_user_charge(evs->user, KFDSYNC_USER_EVENTS,
				 evs->max_user_events)) {
		ret = -ENOSPC;
		goto err_count;
	}

	ev = kfdsync_event_new(evs, id);
	if (!ev) {
		ret = -ENOMEM;
		goto err_user;
	}
	ev->source = KFDSYNC_SOURCE_RELAY;
	if (kfdsync_amdkfd_active()) {
		/* Counted from here on; the pending signal, if any, is not. */
		ret = kfdsync_slot_subscribe(&ev->sub, id);
		if (!ret)
			ev->source = KFDSYNC_SOURCE_HOOKS;
		/* A slot the hooks cannot watch: the owner relays it. */
		else if (ret != -ENOENT)
			goto err_free;
	}
	ret = xa_insert(&evs->table, id, ev, GFP_KERNEL_ACCOUNT);
	if (ret) {
		if (ret == -EBUSY)
			ret = -EEXIST;
		goto err_unsubscribe;
	}
	trace_kfdsync_register(evs->tgid, id, ev->fs->context, ev->source);
	/* The address space went while we registered: as if it came after. */
	spin_lock(&evs->lock);
	dead = evs->dead;
	spin_unlock(&evs->lock);
	if (dead)
		kfdsync_event_update(ev, 0, -ECANCELED);
	return 0;

err_unsubscribe:
	if (ev->source == KFDSYNC_SOURCE_HOOKS)
		kfdsync_slot_unsubscribe(&ev->sub);
err_free:
	ev->registered = false;
	kfdsync_fences_close(ev->fs);
	kfdsync_event_put(ev);
err_user:
	kfdsync_user_uncharge(evs->user, KFDSYNC_USER_EVENTS);
err_count:
	spin_lock(&evs->lock);
	evs->n--;
	spin_unlock(&evs->lock);
	return ret;
}

/**
 * kfdsync_event_unregister() - unregister an event, cancel its fences
 * @evs: the context's events
 * @id: a registered event id
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int kfdsync_event_unregister(struct kfdsync_events *evs, u32 id)
{
	struct kfdsync_event *ev = xa_erase(&evs->table, id);

	if (!ev)
		return -ENOENT;
	trace_kfdsync_end(KFDSYNC_END_UNREGISTER, -ECANCELED, evs->tgid, id);
	kfdsync_event_close(ev);
	return 0;
}

/**
 * kfdsync_event_relay() - signals relayed by the owner
 * @evs: the caller's context's events
 * @id: a registered event id
 * @count: signals, at least 1
 *
 * Return: 0, -ENOENT if @id is not registered, -EBUSY if the event is
 * counted by the hooks.
 */
int kfdsync_event_relay(struct kfdsync_events *evs, u32 id, u32 count)
{
	struct kfdsync_event *ev = kfdsync_event_lookup(evs, id);
	int ret = 0;

	if (!ev)
		return -ENOENT;
	if (ev->source == KFDSYNC_SOURCE_RELAY)
		kfdsync_event_update(ev, count, 0);
	else
		ret = -EBUSY;
	kfdsync_event_put(ev);
	return ret;
}

/**
 * kfdsync_event_fail() - end a registered event with an error
 * @evs: the context's events
 * @id: a registered event id
 * @error: the -errno its pending fences end with; it becomes the event's
 *	   sticky error unless it has one already
 *
 * For imports whose fence ended with an error (KFDSYNC_IMPORT_FAIL_EVENT).
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int kfdsync_event_fail(struct kfdsync_events *evs, u32 id, int error)
{
	struct kfdsync_event *ev = kfdsync_event_lookup(evs, id);

	if (!ev)
		return -ENOENT;
	trace_kfdsync_end(KFDSYNC_END_IMPORT, error, evs->tgid, id);
	kfdsync_event_update(ev, 0, error);
	kfdsync_event_put(ev);
	return 0;
}

/**
 * kfdsync_event_exists() - is @id registered in @evs?
 * @evs: the context's events
 * @id: an event id
 *
 * Return: true if so, a snapshot.
 */
bool kfdsync_event_exists(struct kfdsync_events *evs, u32 id)
{
	struct kfdsync_event *ev = kfdsync_event_lookup(evs, id);

	if (ev)
		kfdsync_event_put(ev);
	return ev;
}

/**
 * kfdsync_event_query() - an event's state
 * @evs: the context's events
 * @id: a registered event id
 * @state: out: the state
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int kfdsync_event_query(struct kfdsync_events *evs, u32 id,
			struct kfdsync_event_state *state)
{
	struct kfdsync_event *ev = kfdsync_event_lookup(evs, id);
	unsigned long flags;

	if (!ev)
		return -ENOENT;
	spin_lock_irqsave(&ev->fs->lock, flags);
	state->age = ev->age;
	state->error = ev->error;
	state->pending = ev->fs->n_pending;
	state->last_status = ev->fs->last_status;
	spin_unlock_irqrestore(&ev->fs->lock, flags);
	state->source = ev->source;
	kfdsync_event_put(ev);
	return 0;
}

/* The watchdog expiry of a new fence, in CLOCK_MONOTONIC ns. */
static u64 kfdsync_event_deadline(const struct kfdsync_events *evs,
				  u64 deadline_ns)
{
	u64 now = ktime_get_ns();
	u64 max = now + (u64)evs->watchdog_max_ms * NSEC_PER_MSEC;

	if (!deadline_ns)
		return now + (u64)evs->watchdog_ms * NSEC_PER_MSEC;
	return min(deadline_ns, max);
}

/**
 * kfdsync_event_export() - a fence of a registered event
 * @evs: the caller's context's events
 * @id: registered event id
 * @age: without @watch, the fence signals when the event's age exceeds
 *	 @age (at most the current age)
 * @watch: a condition (consumed in every case): the fence signals at the
 *	   first advance of the age that finds it true, on a fence context
 *	   of its own; or NULL
 * @deadline_ns: watchdog expiry (absolute CLOCK_MONOTONIC, capped at now +
 *		 watchdog_max_ms), 0 for the context's default
 * @eventfd: if not NULL, an eventfd to signal when the fence ends; on
 *	     success the fence owns this reference
 *
 * The fence is born signalled if the age already exceeds @age (or the
 * condition holds), with the event's sticky error if it has one, or with
 * -ETIMEDOUT at or below a seqno the watchdog ended (fences of a context
 * end in order). Otherwise it is pending and counts against the context's
 * and the user's limits until it ends or nobody holds it.
 *
 * Return: a new fence reference, or ERR_PTR(-ENOENT) if @id is not
 * registered, -EINVAL if @age is in the future, -ENOSPC at max_fences or
 * max_user_fences, -ENOMEM.
 */
struct dma_fence *kfdsync_event_export(struct kfdsync_events *evs, u32 id,
				       u64 age, struct kfdsync_watch *watch,
				       u64 deadline_ns,
				       struct eventfd_ctx *eventfd)
{
	struct kfdsync_event *ev = kfdsync_event_lookup(evs, id);
	struct kfdsync_fence *f;
	unsigned long flags;
	u64 deadline;
	bool reached;
	int ret;

	if (!ev) {
		if (watch)
			kfdsync_watch_free(watch);
		return ERR_PTR(-ENOENT);
	}
	f = kfdsync_fence_alloc(ev->fs, age + 1, watch);
	if (!f) {
		kfdsync_event_put(ev);
		return ERR_PTR(-ENOMEM);
	}
	deadline = kfdsync_event_deadline(evs, deadline_ns);

	spin_lock_irqsave(&ev->fs->lock, flags);
	if (!ev->registered) {
		ret = -ENOENT;
	} else if (!watch && age > ev->age) {
		ret = -EINVAL;
	} else {
		reached = watch ? kfdsync_watch_holds(watch) : ev->age > age;
		ret = kfdsync_fence_add_locked(f, reached, ev->error, deadline);
	}
	spin_unlock_irqrestore(&ev->fs->lock, flags);
	kfdsync_event_put(ev);

	if (ret < 0) {
		kfdsync_fence_discard(f);
		return ERR_PTR(ret);
	}
	trace_kfdsync_export(evs->tgid, id, &f->base, age, watch, eventfd, ret == 1);
	kfdsync_fence_publish(f, ret == 1, eventfd);
	return &f->base;
}

/**
 * kfdsync_events_init() - set up a context's events
 * @evs: the events, zeroed, the limits already set
 * @user: the context's user (the context holds the reference)
 * @tgid: the owner's process id
 */
void kfdsync_events_init(struct kfdsync_events *evs, struct kfdsync_user *user,
			 pid_t tgid)
{
	xa_init(&evs->table);
	spin_lock_init(&evs->lock);
	atomic_set(&evs->n_pending, 0);
	evs->user = user;
	evs->tgid = tgid;
}

/**
 * kfdsync_events_end() - end every registered event with an error
 * @evs: the context's events
 * @error: the -errno (sticky for the events)
 *
 * For events amdkfd forgot (amdgpu went away): the context goes on, and
 * registers the events of the amdkfd that comes next.
 */
void kfdsync_events_end(struct kfdsync_events *evs, int error)
{
	struct kfdsync_event *ev;
	unsigned long id;

	rcu_read_lock();
	xa_for_each(&evs->table, id, ev) {
		if (!kref_get_unless_zero(&ev->ref))
			continue;
		rcu_read_unlock();
		kfdsync_event_update(ev, 0, error);
		kfdsync_event_put(ev);
		rcu_read_lock();
	}
	rcu_read_unlock();
}

/**
 * kfdsync_events_fail() - end every event with an error, no new ones
 * @evs: the context's events
 * @error: the -errno (sticky for the events)
 *
 * For a context whose address space went away.
 */
void kfdsync_events_fail(struct kfdsync_events *evs, int error)
{
	spin_lock(&evs->lock);
	evs->dead = true;
	spin_unlock(&evs->lock);
	trace_kfdsync_end(KFDSYNC_END_EXIT, error, evs->tgid, 0);
	kfdsync_events_end(evs, error);
}

/**
 * kfdsync_events_fini() - unregister every event of a closing context
 * @evs: the context's events
 *
 * Pending fences end with -ECANCELED. Process context.
 */
void kfdsync_events_fini(struct kfdsync_events *evs)
{
	struct kfdsync_event *ev;
	unsigned long id;

	spin_lock(&evs->lock);
	evs->dead = true;
	spin_unlock(&evs->lock);
	trace_kfdsync_end(KFDSYNC_END_CLOSE, -ECANCELED, evs->tgid, 0);
	xa_for_each(&evs->table, id, ev) {
		if (xa_cmpxchg(&evs->table, id, ev, NULL, 0) == ev)
			kfdsync_event_close(ev);
	}
	xa_destroy(&evs->table);
}

/**
 * kfdsync_events_show() - a context's events, for debugfs or fdinfo
 * @m: the seq_file
 * @evs: the context's events
 * @ctx_id: the context's id
 * @fdinfo: one "kfdsync-event-<id>:" line per event (the ABI documented in
 *	include/uapi/linux/kfdsync.h) instead of a debugfs row
 *
 * At most one line per event id, so at most 4095 lines.
 */
void kfdsync_events_show(struct seq_file *m, struct kfdsync_events *evs,
			 u64 ctx_id, bool fdinfo)
{
	struct kfdsync_event *ev;
	unsigned long flags, id;
	int error, last;
	u32 pending;
	char slot[20];
	const char *source;
	u64 age, value;

	rcu_read_lock();
	xa_for_each(&evs->table, id, ev) {
		if (!kref_get_unless_zero(&ev->ref))
			continue;
		spin_lock_irqsave(&ev->fs->lock, flags);
		age = ev->age;
		error = ev->error;
		pending = ev->fs->n_pending;
		last = ev->fs->last_status;
		spin_unlock_irqrestore(&ev->fs->lock, flags);
		strscpy(slot, "-", sizeof(slot));
		/* A relay event's slot is never read. */
		if (ev->source == KFDSYNC_SOURCE_HOOKS &&
		    kfdsync_slot_peek(&ev->sub, &value))
			snprintf(slot, sizeof(slot), "%#018llx", value);
		source = ev->source == KFDSYNC_SOURCE_HOOKS ? "hooks" : "relay";
		if (fdinfo)
			seq_printf(m, "kfdsync-event-%lu:\tsource=%s age=%llu slot=%s pending=%u error=%d last=%d\n",
				   id, source, age, slot, pending, error, last);
		else
			seq_printf(m, "%-8llu %-8d %-6s %-5lu %-20llu %-18s %-7u %-6d %d\n",
				   ctx_id, evs->tgid, source, id, age, slot,
				   pending, error, last);
		kfdsync_event_put(ev);
	}
	rcu_read_unlock();
}
