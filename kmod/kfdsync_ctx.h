/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: a context, one open of /dev/kfdsync, bound to its opener.
 */

#ifndef KFDSYNC_CTX_H
#define KFDSYNC_CTX_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/types.h>
#include "kfdsync_event.h"
#include "kfdsync_import.h"
#include "kfdsync_params.h"

struct dentry;
struct pid;
struct kfdsync_user;

/**
 * struct kfdsync_ctx - one open of /dev/kfdsync
 * @ref:	Reference count; the file holds one.
 * @node:	Entry in the list of contexts (kfdsync_ctx.c's lock).
 * @id:		Unique id, for debugfs.
 * @tgid:	Thread group that opened the device (reference held).
 * @mm:		Address space of @tgid (mmgrab() reference held: the
 *		mm_struct stays, its mappings may go away).
 * @comm:	Command name of the opener, for debugfs.
 * @user:	The opener's user (reference held): what it holds counts there.
 * @limits:	Limits, taken at open.
 * @events:	The registered events.
 * @imports:	The pending imports.
 * @mn:		Ends every fence when the address space goes away before the
 *		file is closed.
 * @mn_registered: @mn is registered.
 * @rcu:	Frees the context after readers are done.
 *
 * Everything but @events and @imports is set at open and constant.
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
	struct kfdsync_events events;
	struct kfdsync_imports imports;
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
