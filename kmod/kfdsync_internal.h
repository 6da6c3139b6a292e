/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: definitions shared by the module's source files.
 */

#ifndef KFDSYNC_INTERNAL_H
#define KFDSYNC_INTERNAL_H

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/eventfd.h>
#include <linux/hrtimer.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct dentry;
struct eventfd_ctx;
struct mm_struct;
struct page;
struct pid;
struct kfdsync_watch;

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
 * @max_imports:	Imports this context may have pending.
 * @watchdog_ms:	Default fence watchdog, in milliseconds.
 * @watchdog_max_ms:	Upper bound of a per-fence watchdog override.
 * @lock:		Protects @events, @n_events, @imports, @n_imports and
 *			@dead (irqsave: the hooks take it with interrupts off).
 * @events:		Registered events (&kfdsync_event.node); RCU list,
 *			the hooks walk it without @lock.
 * @n_events:		Length of @events.
 * @imports:		Pending imports (kfdsync_import.c).
 * @n_imports:		Length of @imports.
 * @dead:		The context was closed, or its address space went
 *			away: no new registrations.
 * @n_pending:		Unsignalled fences of all events of the context.
 * @live_node:		Entry in the RCU list of live contexts the hooks
 *			walk, protected by the live list lock in
 *			kfdsync_event.c.
 * @mn:			Notifier on @mm: ends every fence when the address
 *			space goes away before the file is closed.
 * @mn_registered:	@mn is registered.
 * @rcu:		Frees the context after the hooks are done with it.
 *
 * @id to @watchdog_max_ms are set at open and constant afterwards. The
 * limits are snapshots of the module parameters at open, so that a parameter
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
	u32 max_imports;
	u32 watchdog_ms;
	u32 watchdog_max_ms;

	/* Protects the fields up to @dead. */
	spinlock_t lock;
	struct list_head events;
	u32 n_events;
	struct list_head imports;
	u32 n_imports;
	bool dead;
	atomic_t n_pending;
	struct list_head live_node;
	struct mmu_notifier mn;
	bool mn_registered;
	struct rcu_head rcu;
};

/* The length of "kfdsync:<tgid>:ev<id>" plus NUL, rounded up. */
#define KFDSYNC_TIMELINE_NAME_LEN	32

/**
 * struct kfdsync_event - a registered amdkfd signal event
 * @ref:	Reference count: the context's list holds one while
 *		registered, every fence of the event holds one.
 * @node:	Entry in &kfdsync_ctx.events (RCU list).
 * @rcu:	Frees the event after the hooks are done with it.
 * @ctx:	Owning context; valid while @registered (no reference: the
 *		context unregisters every event before it goes).
 * @id:		amdkfd event id (slot index).
 * @context:	dma_fence context of the event's fences.
 * @page:	The page with the event's signal slot, if kfdsync holds a
 *		reference to it, else NULL (see kfdsync_event.c).
 * @slot:	Kernel address of the slot in @page.
 * @timeline:	"kfdsync:<tgid>:ev<id>", the fences' timeline name.
 * @lock:	Protects everything below; the fence lock of every fence
 *		of the event.
 * @registered:	Still registered with @ctx.
 * @slot_seen:	The current set state of the slot (not all-ones) was
 *		counted already; cleared when the slot reads all-ones.
 * @error:	0, or the sticky -errno the event ended with.
 * @age:	Signals seen since registration.
 * @pending:	Unsignalled fences (&kfdsync_fence.node), sorted by nothing.
 * @n_pending:	Length of @pending.
 */
struct kfdsync_event {
	struct kref ref;
	struct list_head node;
	struct rcu_head rcu;
	struct kfdsync_ctx *ctx;
	u32 id;
	u64 context;
	struct page *page;
	u64 *slot;
	char timeline[KFDSYNC_TIMELINE_NAME_LEN];

	/* Protects the fields below; the fence lock. */
	spinlock_t lock;
	bool registered;
	bool slot_seen;
	int error;
	u64 age;
	struct list_head pending;
	u32 n_pending;
};

/**
 * struct kfdsync_fence - a fence kfdsync exported
 * @base:	The dma_fence; its lock is &kfdsync_event.lock of @ev.
 * @ev:		The event (reference held).
 * @node:	Entry in &kfdsync_event.pending while unsignalled; the list
 *		holds a fence reference.
 * @watchdog:	Ends the fence with -ETIMEDOUT; holds a fence reference
 *		while armed.
 * @eventfd:	For KFDSYNC_IOCTL_EXPORT_EVENTFD: signalled when the fence
 *		ends (reference held), else NULL.
 * @cb:		Callback that signals @eventfd.
 * @watch:	For KFDSYNC_IOCTL_EXPORT_CONDITION: the watched value and
 *		condition (kfdsync_hsa.c), owned by the fence until it ends,
 *		else NULL. Then the fence signals when an advance of the
 *		event's age finds the condition true, not at a seqno.
 */
struct kfdsync_fence {
	struct dma_fence base;
	struct kfdsync_event *ev;
	struct list_head node;
	struct hrtimer watchdog;
	struct eventfd_ctx *eventfd;
	struct dma_fence_cb cb;
	struct kfdsync_watch *watch;
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

void kfdsync_event_put(struct kfdsync_event *ev);
struct kfdsync_event *kfdsync_event_lookup(struct kfdsync_ctx *ctx, u32 id);
int kfdsync_event_register(struct kfdsync_ctx *ctx, u32 id, u64 slot_addr);
int kfdsync_event_unregister(struct kfdsync_ctx *ctx, u32 id);
int kfdsync_event_relay(struct kfdsync_ctx *ctx, u32 id);
int kfdsync_event_fail(struct kfdsync_ctx *ctx, u32 id, int error);
int kfdsync_event_query(struct kfdsync_ctx *ctx, u32 id, u64 *age,
			int *error, u32 *pending);
u32 kfdsync_events_interrupt(u32 pasid, u32 id, bool entry);
void kfdsync_events_cpu_set(const struct mm_struct *mm, u32 id);
void kfdsync_events_fail(u32 pasid, bool all, int error);
int kfdsync_ctx_events_init(struct kfdsync_ctx *ctx);
void kfdsync_ctx_events_fini(struct kfdsync_ctx *ctx);
u32 kfdsync_source(void);
void kfdsync_events_debugfs_init(struct dentry *debugfs_root);

struct dma_fence *kfdsync_fence_create(struct kfdsync_ctx *ctx, u32 id,
				       u64 age, u64 deadline_ns,
				       struct eventfd_ctx *eventfd);
void kfdsync_fence_complete_locked(struct kfdsync_fence *f, int error,
				   struct list_head *done);
void kfdsync_fence_put_done(struct list_head *done);
int kfdsync_sync_file_install(int fd, struct dma_fence *fence,
			      const char *name, void __user *uarg,
			      const void *args, size_t size);
void kfdsync_fence_exit(void);

struct dma_fence *kfdsync_fence_create_watch(struct kfdsync_ctx *ctx, u32 id,
					     struct kfdsync_watch *watch,
					     u64 deadline_ns,
					     struct eventfd_ctx *eventfd);
bool kfdsync_watch_holds(const struct kfdsync_watch *watch);
void kfdsync_watch_free(struct kfdsync_watch *watch);
int kfdsync_ioctl_export_condition(struct kfdsync_ctx *ctx,
				   void __user *uarg);

int kfdsync_hooks_init(bool enable, struct dentry *debugfs_root);
void kfdsync_hooks_exit(void);
u32 kfdsync_hooks_attached(void);
u32 kfdsync_hooks_supported(void);
bool kfdsync_hooks_amdkfd_present(void);
bool kfdsync_hooks_same_process(u32 pasid, const struct mm_struct *mm,
				bool unknown);
int kfdsync_hooks_set_event(const struct mm_struct *mm, u32 id, bool check);

unsigned int kfdsync_watchdog_default_ms(void);

struct kfdsync_import;
int kfdsync_import(struct kfdsync_ctx *ctx, const struct kfdsync_import *args);
void kfdsync_ctx_imports_fini(struct kfdsync_ctx *ctx);
int kfdsync_import_init(void);
void kfdsync_import_exit(void);

/**
 * kfdsync_eventfd_signal() - add 1 to an eventfd
 * @eventfd: the eventfd
 *
 * eventfd_signal() lost its count argument in 6.8.
 */
static inline void kfdsync_eventfd_signal(struct eventfd_ctx *eventfd)
{
#ifdef KFDSYNC_HAVE_EVENTFD_SIGNAL_1
	eventfd_signal(eventfd);
#else
	eventfd_signal(eventfd, 1);
#endif
}

int kfdsync_timeline_init(struct dentry *debugfs_root);
void kfdsync_timeline_exit(void);

#endif /* KFDSYNC_INTERNAL_H */
