/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: the events a context registered, their ages and fences.
 */

#ifndef KFDSYNC_EVENT_H
#define KFDSYNC_EVENT_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "kfdsync_fence.h"
#include "kfdsync_slot.h"

struct dma_fence;
struct eventfd_ctx;
struct kfdsync_user;
struct kfdsync_watch;
struct seq_file;

/**
 * struct kfdsync_events - the registered events of one context
 * @table:	Registered events by id (RCU readers; xa_lock for writers).
 * @lock:	Protects @n and @dead.
 * @n:		Registered events.
 * @dead:	No new registrations: the context closed or its address
 *		space went away.
 * @n_pending:	Pending fences of all the events.
 * @user:	The context's user, charged for events and pending fences.
 * @tgid:	The owner's process id, for timeline names.
 * @max_events: Limit of @n.
 * @max_user_events: The user's limit of events.
 * @max_fences:	Limit of @n_pending.
 * @max_user_fences: The user's limit of pending fences.
 * @watchdog_ms: Default fence watchdog.
 * @watchdog_max_ms: Upper bound of a fence's watchdog.
 *
 * Embedded in the context, which sets it up with kfdsync_events_init() and
 * ends it with kfdsync_events_fini(). The limits are constant.
 */
struct kfdsync_events {
	struct xarray table;
	/* Protects @n and @dead. */
	spinlock_t lock;
	u32 n;
	bool dead;
	atomic_t n_pending;
	struct kfdsync_user *user;
	pid_t tgid;
	u32 max_events;
	u32 max_user_events;
	u32 max_fences;
	u32 max_user_fences;
	u32 watchdog_ms;
	u32 watchdog_max_ms;
};

/**
 * struct kfdsync_event - an amdkfd signal event registered with a context
 * @ref:	References: the context's table holds one while registered,
 *		lookups take their own.
 * @rcu:	Frees the event after table readers are done.
 * @evs:	The context's events; valid while @registered (the context
 *		unregisters every event before it goes).
 * @id:		amdkfd event id (slot index).
 * @source:	KFDSYNC_SOURCE_*: the hooks (counted in the kernel through
 *		@sub) or the owner's relay; fixed at registration.
 * @sub:	The slot subscription (hooks).
 * @fs:		The pending fences; its lock protects the fields below.
 * @registered:	Still registered with @ctx.
 * @error:	0, or the sticky -errno the event ended with.
 * @age:	Signals counted since the registration.
 */
struct kfdsync_event {
	struct kref ref;
	struct rcu_head rcu;
	struct kfdsync_events *evs;
	u32 id;
	u32 source;
	struct kfdsync_slot_sub sub;
	struct kfdsync_fences *fs;
	bool registered;
	int error;
	u64 age;
};

/**
 * struct kfdsync_event_state - what EVENT_QUERY reports
 * @age:	Signals counted since the registration.
 * @error:	0 or the sticky -errno.
 * @pending:	Pending fences.
 * @source:	KFDSYNC_SOURCE_*.
 * @last_status: How the last fence of the event ended: 1 signalled,
 *		-errno, 0 none yet.
 */
struct kfdsync_event_state {
	u64 age;
	int error;
	u32 pending;
	u32 source;
	int last_status;
};

int kfdsync_event_register(struct kfdsync_events *evs, u32 id, u64 slot_addr);
int kfdsync_event_unregister(struct kfdsync_events *evs, u32 id);
int kfdsync_event_relay(struct kfdsync_events *evs, u32 id, u32 count);
int kfdsync_event_fail(struct kfdsync_events *evs, u32 id, int error);
int kfdsync_event_query(struct kfdsync_events *evs, u32 id,
			struct kfdsync_event_state *state);
bool kfdsync_event_exists(struct kfdsync_events *evs, u32 id);
struct dma_fence *kfdsync_event_export(struct kfdsync_events *evs, u32 id,
				       u64 age, struct kfdsync_watch *watch,
				       u64 deadline_ns,
				       struct eventfd_ctx *eventfd);

void kfdsync_events_init(struct kfdsync_events *evs, struct kfdsync_user *user,
			 pid_t tgid);
void kfdsync_events_fail(struct kfdsync_events *evs, int error);
void kfdsync_events_end(struct kfdsync_events *evs, int error);
void kfdsync_events_fini(struct kfdsync_events *evs);
void kfdsync_events_show(struct seq_file *m, struct kfdsync_events *evs,
			 u64 ctx_id, bool fdinfo);

#endif /* KFDSYNC_EVENT_H */
