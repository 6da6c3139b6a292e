// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: contexts - one per open of /dev/kfdsync, bound to its opener.
 *
 * A context is bound to the thread group and the address space (mm) of the
 * process that opened it, and acts only for that process. Its user (the
 * effective uid) is charged for it and for everything it registers.
 * Closing the file ends the context; so does, for its fences, the end of
 * its address space, which may come first when the file lives on in another
 * process.
 *
 * The end of an address space is learnt from one mmu notifier per address
 * space (&struct kfdsync_mm), shared by all of its contexts
 * (mmu_notifier_get()): registering a notifier takes every lock of the
 * address space (mm_take_all_locks()) and dropping one waits for an SRCU
 * grace period, which a process opening and closing contexts, or exiting
 * with a thousand of them, would otherwise pay each time. The subscription
 * is freed after the last context of the address space is closed, after a
 * grace period (kfdsync_ctx_exit() waits for those at module exit).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string_helpers.h>

#include <linux/kfdsync.h>

#include "kfdsync_amdkfd.h"
#include "kfdsync_ctx.h"
#include "kfdsync_slot.h"
#include "kfdsync_trace.h"
#include "kfdsync_user.h"

/* The open contexts; kfdsync_ctx_lock protects the list, count and ids. */
static DEFINE_MUTEX(kfdsync_ctx_lock);
static LIST_HEAD(kfdsync_ctx_list);
static unsigned int kfdsync_ctx_count;
static u64 kfdsync_ctx_next_id;

/**
 * struct kfdsync_mm - the contexts of one address space
 * @mn:		The subscription (mmu_notifier_get()), one per address space.
 * @lock:	Protects @ctxs and @gone.
 * @ctxs:	The open contexts of the address space (&kfdsync_ctx.mm_node).
 * @gone:	The address space went away.
 */
struct kfdsync_mm {
	struct mmu_notifier mn;
	/* Protects the list and the state; see the kernel-doc. */
	struct mutex lock;
	struct list_head ctxs;
	bool gone;
};

/* The context's address space is going away: its fences cannot signal. */
static void kfdsync_ctx_gone(struct kfdsync_ctx *ctx)
{
	kfdsync_imports_kill(&ctx->imports);
	kfdsync_events_fail(&ctx->events, -ECANCELED);
}

static void kfdsync_mm_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct kfdsync_mm *sub = container_of(mn, struct kfdsync_mm, mn);
	struct kfdsync_ctx *ctx;

	mutex_lock(&sub->lock);
	sub->gone = true;
	list_for_each_entry(ctx, &sub->ctxs, mm_node)
		kfdsync_ctx_gone(ctx);
	mutex_unlock(&sub->lock);
}

static struct mmu_notifier *kfdsync_mm_alloc(struct mm_struct *mm)
{
	struct kfdsync_mm *sub = kzalloc(sizeof(*sub), GFP_KERNEL_ACCOUNT);

	if (!sub)
		return ERR_PTR(-ENOMEM);
	mutex_init(&sub->lock);
	INIT_LIST_HEAD(&sub->ctxs);
	return &sub->mn;
}

static void kfdsync_mm_free(struct mmu_notifier *mn)
{
	kfree(container_of(mn, struct kfdsync_mm, mn));
}

static const struct mmu_notifier_ops kfdsync_mm_ops = {
	.release = kfdsync_mm_release,
	.alloc_notifier = kfdsync_mm_alloc,
	.free_notifier = kfdsync_mm_free,
};

/* Join the subscription of the current address space. */
static int kfdsync_ctx_subscribe(struct kfdsync_ctx *ctx)
{
	struct mmu_notifier *mn = mmu_notifier_get(&kfdsync_mm_ops, ctx->mm);
	struct kfdsync_mm *sub;
	bool gone;

	if (IS_ERR(mn))
		return PTR_ERR(mn);
	sub = container_of(mn, struct kfdsync_mm, mn);
	mutex_lock(&sub->lock);
	list_add_tail(&ctx->mm_node, &sub->ctxs);
	gone = sub->gone;
	mutex_unlock(&sub->lock);
	ctx->mm_sub = sub;
	/* Not while the opener runs in it; as if it went right after. */
	if (gone)
		kfdsync_ctx_gone(ctx);
	return 0;
}

/* Leave it: the address space's end no longer reaches the context. */
static void kfdsync_ctx_unsubscribe(struct kfdsync_ctx *ctx)
{
	struct kfdsync_mm *sub = ctx->mm_sub;

	mutex_lock(&sub->lock);
	list_del(&ctx->mm_node);
	mutex_unlock(&sub->lock);
	mmu_notifier_put(&sub->mn);
}

static void kfdsync_ctx_free(struct kfdsync_ctx *ctx)
{
	kfdsync_user_put(ctx->user);
	mmdrop(ctx->mm);
	put_pid(ctx->tgid);
	kfree(ctx);
}

/**
 * kfdsync_ctx_create() - a context for the current process
 * @limits: the limits it takes
 * @max_contexts: open contexts, system-wide (for callers without
 *		  CAP_SYS_ADMIN)
 * @max_user_contexts: open contexts of the current user
 *
 * Return: the context, or ERR_PTR(-ENOMEM), -ENFILE at @max_contexts,
 * -EMFILE at @max_user_contexts, or the mmu notifier's -errno.
 */
struct kfdsync_ctx *kfdsync_ctx_create(const struct kfdsync_limits *limits,
				       unsigned int max_contexts,
				       unsigned int max_user_contexts)
{
	struct kfdsync_ctx *ctx;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->user = kfdsync_user_get();
	if (!ctx->user) {
		kfree(ctx);
		return ERR_PTR(-ENOMEM);
	}
	if (!kfdsync_user_charge(ctx->user, KFDSYNC_USER_CONTEXTS,
				 max_user_contexts)) {
		kfdsync_user_put(ctx->user);
		kfree(ctx);
		return ERR_PTR(-EMFILE);
	}

	ctx->tgid = get_task_pid(current, PIDTYPE_TGID);
	ctx->mm = current->mm;
	mmgrab(ctx->mm);
	get_task_comm(ctx->comm, current);
	ctx->limits = *limits;
	INIT_LIST_HEAD(&ctx->node);
	INIT_LIST_HEAD(&ctx->mm_node);

	ctx->events.max_events = limits->max_events;
	ctx->events.max_user_events = limits->max_user_events;
	ctx->events.max_fences = limits->max_fences;
	ctx->events.max_user_fences = limits->max_user_fences;
	ctx->events.watchdog_ms = limits->watchdog_ms;
	ctx->events.watchdog_max_ms = limits->watchdog_max_ms;
	kfdsync_events_init(&ctx->events, ctx->user, pid_nr(ctx->tgid));

	ctx->imports.max = limits->max_imports;
	ctx->imports.user_max = limits->max_user_imports;
	ctx->imports.user = ctx->user;
	ctx->imports.mm = ctx->mm;
	ctx->imports.events = &ctx->events;
	kfdsync_imports_init(&ctx->imports);

	mutex_lock(&kfdsync_ctx_lock);
	if (kfdsync_ctx_count >= max_contexts && !kfdsync_user_beyond_global()) {
		mutex_unlock(&kfdsync_ctx_lock);
		ret = -ENFILE;
		goto err_destroy;
	}
	ctx->id = kfdsync_ctx_next_id++;
	list_add_tail(&ctx->node, &kfdsync_ctx_list);
	kfdsync_ctx_count++;
	mutex_unlock(&kfdsync_ctx_lock);

	ret = kfdsync_ctx_subscribe(ctx);
	if (ret)
		goto err_destroy;
	return ctx;

err_destroy:
	kfdsync_ctx_destroy(ctx);
	return ERR_PTR(ret);
}

/**
 * kfdsync_ctx_destroy() - close a context and free it
 * @ctx: the context
 *
 * Cancels every pending import and fence. Process context.
 */
void kfdsync_ctx_destroy(struct kfdsync_ctx *ctx)
{
	mutex_lock(&kfdsync_ctx_lock);
	if (!list_empty(&ctx->node)) {
		list_del_init(&ctx->node);
		kfdsync_ctx_count--;
	}
	mutex_unlock(&kfdsync_ctx_lock);

	/* The subscription's lock: no release callback is left on @ctx. */
	if (ctx->mm_sub)
		kfdsync_ctx_unsubscribe(ctx);
	kfdsync_imports_fini(&ctx->imports);
	kfdsync_events_fini(&ctx->events);
	kfdsync_user_uncharge(ctx->user, KFDSYNC_USER_CONTEXTS);
	kfdsync_ctx_free(ctx);
}

/**
 * kfdsync_ctxs_amdkfd_gone() - amdkfd went away: every event ends (-EIO)
 *
 * The contexts live on: once amdgpu is back, they register the events of
 * the new amdkfd.
 */
void kfdsync_ctxs_amdkfd_gone(void)
{
	struct kfdsync_ctx *ctx;

	trace_kfdsync_end(KFDSYNC_END_UNLOAD, -EIO, 0, 0);
	mutex_lock(&kfdsync_ctx_lock);
	list_for_each_entry(ctx, &kfdsync_ctx_list, node)
		kfdsync_events_end(&ctx->events, -EIO);
	mutex_unlock(&kfdsync_ctx_lock);
}

/**
 * kfdsync_ctx_exit() - at module exit, wait until every address space's
 * subscription is freed
 *
 * Every context is closed: their last mmu_notifier_put() calls only wait
 * for their SRCU grace period, then run kfdsync_mm_free().
 */
void kfdsync_ctx_exit(void)
{
	mmu_notifier_synchronize();
}

/**
 * kfdsync_ctx_show_fdinfo() - a context's lines in /proc/PID/fdinfo/FD
 * @m: the seq_file
 * @ctx: the context; the file being shown holds it
 *
 * The keys are ABI, documented in include/uapi/linux/kfdsync.h: keys are
 * only ever added. Everything printed but the counts and the events is
 * constant; the events are read as for debugfs.
 */
void kfdsync_ctx_show_fdinfo(struct seq_file *m, struct kfdsync_ctx *ctx)
{
	seq_printf(m, "kfdsync-context:\t%llu\n", ctx->id);
	seq_printf(m, "kfdsync-tgid:\t%d\n", pid_vnr(ctx->tgid));
	seq_printf(m, "kfdsync-uid:\t%u\n",
		   from_kuid_munged(seq_user_ns(m), ctx->user->uid));
	seq_printf(m, "kfdsync-source:\t%s\n",
		   kfdsync_amdkfd_active() ? "hooks" : "relay");
	seq_printf(m, "kfdsync-events:\t%u\n", READ_ONCE(ctx->events.n));
	seq_printf(m, "kfdsync-pending:\t%d\n",
		   atomic_read(&ctx->events.n_pending));
	seq_printf(m, "kfdsync-imports:\t%u\n", READ_ONCE(ctx->imports.n));
	seq_printf(m, "kfdsync-max-events:\t%u\n", ctx->limits.max_events);
	seq_printf(m, "kfdsync-max-fences:\t%u\n", ctx->limits.max_fences);
	seq_printf(m, "kfdsync-max-imports:\t%u\n", ctx->limits.max_imports);
	seq_printf(m, "kfdsync-watchdog-ms:\t%u\n", ctx->limits.watchdog_ms);
	seq_printf(m, "kfdsync-watchdog-max-ms:\t%u\n",
		   ctx->limits.watchdog_max_ms);
	kfdsync_events_show(m, &ctx->events, ctx->id, true);
}

static int kfdsync_contexts_show(struct seq_file *m, void *unused)
{
	const char *source = kfdsync_amdkfd_active() ? "hooks" : "relay";
	char comm[4 * TASK_COMM_LEN];
	struct kfdsync_ctx *ctx;
	int len;

	mutex_lock(&kfdsync_ctx_lock);
	seq_printf(m, "# %u contexts\n", kfdsync_ctx_count);
	seq_puts(m, "# id       tgid     comm             source events pending max_events max_fences watchdog_ms watchdog_max_ms imports max_imports uid\n");
	list_for_each_entry(ctx, &kfdsync_ctx_list, node) {
		/* One word, whatever the name: octal escapes, as mountinfo. */
		len = string_escape_str(ctx->comm, comm, sizeof(comm) - 1,
					ESCAPE_OCTAL, " \t\n\\");
		comm[min_t(int, len, sizeof(comm) - 1)] = '\0';
		seq_printf(m, "%-8llu %-8d %-16s %-6s %-6u %-7d %-10u %-10u %-11u %-15u %-7u %-11u %u\n",
			   ctx->id, pid_nr(ctx->tgid), comm, source,
			   READ_ONCE(ctx->events.n),
			   atomic_read(&ctx->events.n_pending),
			   ctx->limits.max_events, ctx->limits.max_fences,
			   ctx->limits.watchdog_ms,
			   ctx->limits.watchdog_max_ms,
			   READ_ONCE(ctx->imports.n), ctx->limits.max_imports,
			   __kuid_val(ctx->user->uid));
	}
	mutex_unlock(&kfdsync_ctx_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsync_contexts);

static int kfdsync_debugfs_events_show(struct seq_file *m, void *unused)
{
	struct kfdsync_ctx *ctx;

	seq_puts(m, "# ctx      tgid     source id    age                  slot               pending error  last\n");
	mutex_lock(&kfdsync_ctx_lock);
	list_for_each_entry(ctx, &kfdsync_ctx_list, node)
		kfdsync_events_show(m, &ctx->events, ctx->id, false);
	mutex_unlock(&kfdsync_ctx_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsync_debugfs_events);

/**
 * kfdsync_ctx_debugfs_init() - <debugfs>/kfdsync/contexts, events, and the
 * slot layer's files
 * @root: kfdsync's debugfs directory
 */
void kfdsync_ctx_debugfs_init(struct dentry *root)
{
	debugfs_create_file("contexts", 0444, root, NULL,
			    &kfdsync_contexts_fops);
	debugfs_create_file("events", 0444, root, NULL,
			    &kfdsync_debugfs_events_fops);
	kfdsync_slot_debugfs_init(root);
}
