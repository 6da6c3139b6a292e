/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: a context, one open of /dev/kfdsync, bound to its opener.
 */

#ifndef KFDSYNC_CTX_H
#define KFDSYNC_CTX_H

#include <linux/list.h>
#include <linux/sched.h>
#include <linux/types.h>
#include "kfdsync_event.h"
#include "kfdsync_import.h"
#include "kfdsync_params.h"

struct dentry;
struct pid;
struct seq_file;
struct kfdsync_mm;
struct kfdsync_user;

/**
 * struct kfdsync_ctx - one open of /dev/kfdsync
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
 * @mm_sub:	The address space's subscription, shared by every context of
 *		@mm (reference held): ends every fence when the address space
 *		goes away before the file is closed.
 * @mm_node:	Entry in @mm_sub's contexts (its lock).
 *
 * Everything but @events, @imports and @mm_node is set at open and
 * constant. The file holds the context; closing it frees it.
 */
struct kfdsync_ctx {
	struct list_head node;
	u64 id;
	struct pid *tgid;
	struct mm_struct *mm;
	char comm[TASK_COMM_LEN];
	struct kfdsync_user *user;
	struct kfdsync_limits limits;
	struct kfdsync_events events;
	struct kfdsync_imports imports;
	struct kfdsync_mm *mm_sub;
	struct list_head mm_node;
};

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
void kfdsync_ctx_exit(void);
void kfdsync_ctx_show_fdinfo(struct seq_file *m, struct kfdsync_ctx *ctx);
void kfdsync_ctx_debugfs_init(struct dentry *root);

#endif /* KFDSYNC_CTX_H */
