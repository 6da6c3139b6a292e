/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: a context, one open of /dev/kfdsync, bound to its opener.
 */

#ifndef KFDSYNC_CTX_H
#define KFDSYNC_CTX_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/xarray.h>

struct dentry;
struct pid;
struct kfdsync_user;

/**
 * struct kfdsync_limits - the limits a context or timeline takes at open
 * @max_events:		Events a context may register.
 * @max_fences:		Pending fences of a context.
 * @max_imports:	Pending imports of a context.
 * @watchdog_ms:	Default fence watchdog, in milliseconds.
 * @watchdog_max_ms:	Upper bound of a per-fence watchdog.
 * @max_user_events:	Events the opener's user may register.
 * @max_user_fences:	Pending fences of the opener's user.
 * @max_user_imports:	Pending imports of the opener's user.
 *
 * Snapshots of the module parameters, so that a parameter changed through
 * sysfs never changes the rules of a live context.
 */
struct kfdsync_limits {
	u32 max_events;
	u32 max_fences;
	u32 max_imports;
	u32 watchdog_ms;
	u32 watchdog_max_ms;
	u32 max_user_events;
	u32 max_user_fences;
	u32 max_user_imports;
};

/**
 * struct kfdsync_ctx - one open of /dev/kfdsync
 * @ref:	Reference count; the file holds one, so do pending imports.
 * @node:	Entry in the list of contexts (kfdsync_ctx.c's lock).
 * @id:		Unique id, for debugfs.
 * @tgid:	Thread group that opened the device (reference held).
 * @mm:		Address space of @tgid (mmgrab() reference held: the
 *		mm_struct stays, its mappings may go away).
 * @comm:	Command name of the opener, for debugfs.
 * @user:	The opener's user (reference held): what it holds counts there.
 * @limits:	Limits, taken at open.
 * @events:	Registered events by id (RCU readers; xa_lock for writers).
 * @lock:	Protects @n_events, @imports, @n_imports and @dead.
 * @n_events:	Registered events.
 * @imports:	Pending imports (kfdsync_import.c).
 * @n_imports:	Length of @imports.
 * @dead:	Closed, or its address space went away: no new events or
 *		imports.
 * @n_pending:	Pending fences of all events of the context.
 * @mn:		Ends every fence when the address space goes away before the
 *		file is closed.
 * @mn_registered: @mn is registered.
 * @rcu:	Frees the context after readers are done.
 *
 * @id to @limits are set at open and constant afterwards.
 */
struct kfdsync_ctx {
	struct kref ref;
	struct list_head node;
	u64 id;
	struct pid *tgid;
	struct mm_struct *mm;
	char comm[TASK_COMM_LEN];
	struct kfdsync_user *user;
	struct kfdsync_limits limits;
	struct xarray events;
	/* Protects the counts, imports and state; see the kernel-doc. */
	spinlock_t lock;
	u32 n_events;
	struct list_head imports;
	u32 n_imports;
	bool dead;
	atomic_t n_pending;
	struct mmu_notifier mn;
	bool mn_registered;
	struct rcu_head rcu;
};

void kfdsync_ctx_release(struct kref *ref);

/**
 * kfdsync_ctx_get() - take a reference to a context
 * @ctx: the context
 *
 * Return: @ctx.
 */
static inline struct kfdsync_ctx *kfdsync_ctx_get(struct kfdsync_ctx *ctx)
{
	kref_get(&ctx->ref);
	return ctx;
}

/**
 * kfdsync_ctx_put() - drop a reference to a context
 * @ctx: the context; the last put frees it
 */
static inline void kfdsync_ctx_put(struct kfdsync_ctx *ctx)
{
	kref_put(&ctx->ref, kfdsync_ctx_release);
}

/**
 * kfdsync_ctx_is_caller() - is the current process the context's owner?
 * @ctx: the context
 *
 * A context acts only for the process that opened it.
 */
static inline bool kfdsync_ctx_is_caller(const struct kfdsync_ctx *ctx)
{
	return current->mm == ctx->mm;
}

struct kfdsync_ctx *kfdsync_ctx_create(const struct kfdsync_limits *limits,
				       unsigned int max_contexts,
				       unsigned int max_user_contexts);
void kfdsync_ctx_destroy(struct kfdsync_ctx *ctx);
void kfdsync_ctxs_amdkfd_gone(void);
void kfdsync_ctx_debugfs_init(struct dentry *root);

#endif /* KFDSYNC_CTX_H */
