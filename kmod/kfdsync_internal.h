/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: definitions shared by the module's source files.
 */

#ifndef KFDSYNC_INTERNAL_H
#define KFDSYNC_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/sched.h>
#include <linux/types.h>

struct dentry;
struct mm_struct;
struct pid;

/**
 * struct kfdsync_ctx - one open of /dev/kfdsync
 * @ref:		Reference count; the file holds one.
 * @node:		Entry in the list of contexts, protected by the
 *			context list lock in kfdsync_drv.c.
 * @id:			Unique id, for debugfs.
 * @tgid:		Thread group that opened the device (reference held).
 * @mm:			Address space of @tgid (mmgrab() reference held: the
 *			mm_struct stays, its mappings may go away).
 * @comm:		Command name of the opener, for debugfs.
 * @max_events:		Events this context may register.
 * @max_fences:		Unsignalled fences this context may have exported.
 * @watchdog_ms:	Default fence watchdog, in milliseconds.
 * @watchdog_max_ms:	Upper bound of a per-fence watchdog override.
 *
 * Everything except @node is set at open and constant afterwards. The limits
 * are snapshots of the module parameters at open, so that a parameter
 * changed through sysfs never changes the rules of a live context.
 */
struct kfdsync_ctx {
	struct kref ref;
	struct list_head node;
	u64 id;
	struct pid *tgid;
	struct mm_struct *mm;
	char comm[TASK_COMM_LEN];
	u32 max_events;
	u32 max_fences;
	u32 watchdog_ms;
	u32 watchdog_max_ms;
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

int kfdsync_hooks_init(bool enable, struct dentry *debugfs_root);
void kfdsync_hooks_exit(void);
u32 kfdsync_hooks_attached(void);
u32 kfdsync_hooks_supported(void);
bool kfdsync_hooks_amdkfd_present(void);

unsigned int kfdsync_watchdog_default_ms(void);

int kfdsync_timeline_init(struct dentry *debugfs_root);
void kfdsync_timeline_exit(void);

#endif /* KFDSYNC_INTERNAL_H */
