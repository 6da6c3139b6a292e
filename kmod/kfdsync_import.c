// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: sync_file imports, a fence's end acted on for its importer.
 *
 * KFDSYNC_IOCTL_IMPORT_SYNC_FILE takes a reference to the fence of a
 * sync_file and adds a callback to it. What the importer asked for is done
 * in a fixed order (see "imports" in the uAPI header): fail a registered
 * event with the fence's error, write or subtract a value in the importer's
 * memory, set an amdkfd event, signal an eventfd.
 *
 * The memory write is what a GPU queue waits for, so the callback does it at
 * once, in the signalling context: the page is pinned and mapped, the write
 * is one store, nothing sleeps. Only when the fence ended with an error that
 * must first fail a downstream event is the write left to the worker: that
 * takes the downstream event's fence lock, which may be the very lock the
 * callback runs under (an import of one's own exported fence). Everything
 * else runs in a worker, which the callback queues: setting an amdkfd event
 * sleeps.
 *
 * The target page is pinned at import (kfdsync_pin.c: anonymous or shmem
 * memory of the importer, FOLL_WRITE | FOLL_LONGTERM, charged to the user's
 * RLIMIT_MEMLOCK), so the write never faults: a single aligned store or
 * atomic subtract through kmap_local_page(). Every import holds one page at
 * most; max_imports bounds how many a context can have pending.
 *
 * Lifetime: an import holds references to its fence, page and eventfd,
 * and is counted by its context's &kfdsync_imports until it is done.
 * Closing the context removes every callback that has not run (those
 * imports are cancelled: nothing written, pins released) and waits for the
 * context's own imports in progress, never for another context's, so no
 * import outlives its context (it needs no reference to it) and the module
 * cannot be unloaded under one.
 *
 * Memory: the worker ends fences (FAIL_EVENT) and writes what a GPU queue
 * waits for, so it must not wait for memory: its workqueue has a rescuer
 * (WQ_MEM_RECLAIM), and the part that signals is annotated as such
 * (dma_fence_begin_signalling()). Setting an amdkfd event is not: amdkfd
 * takes its own locks there, and a CPU waiter is no fence. Nor does the
 * worker unpin a page it wrote: marking it dirty takes the folio's lock,
 * which reclaim or I/O may hold for long, and every later import would
 * queue behind it on the rescuer. Those pins go to a list that an ordinary
 * worker (system_unbound_wq) releases; until then the import counts as
 * running, so closing its context still waits for it (and only for its
 * own).
 *
 * Locking: &kfdsync_imports.lock protects the list and the counts (process
 * context only).
 * The callback runs under the fence's lock and takes nothing else; closing
 * takes &kfdsync_imports.lock and then the fence's lock
 * (dma_fence_remove_callback()).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/workqueue.h>

#include <linux/kfdsync.h>

#include "kfdsync_amdkfd.h"
#include "kfdsync_compat.h"
#include "kfdsync_event.h"
#include "kfdsync_import.h"
#include "kfdsync_pin.h"
#include "kfdsync_trace.h"
#include "kfdsync_user.h"

#define KFDSYNC_IMPORT_ALL	(KFDSYNC_IMPORT_MEMORY |		\
				 KFDSYNC_IMPORT_MEMORY32 |		\
				 KFDSYNC_IMPORT_SUB |			\
				 KFDSYNC_IMPORT_SET_EVENT |		\
				 KFDSYNC_IMPORT_FAIL_EVENT |		\
				 KFDSYNC_IMPORT_EVENTFD)

/* Flags that ask for something to be done; one is required. */
#define KFDSYNC_IMPORT_ACTIONS	(KFDSYNC_IMPORT_MEMORY |		\
				 KFDSYNC_IMPORT_SET_EVENT |		\
				 KFDSYNC_IMPORT_FAIL_EVENT |		\
				 KFDSYNC_IMPORT_EVENTFD)

/**
 * struct kfdsync_import_op - one pending import
 * @cb:		Callback on @fence; queues @work.
 * @work:	Does the import, then frees it.
 * @node:	Entry in &kfdsync_imports.list, under its lock.
 * @unpin_node:	Entry in kfdsync_import_unpins once done, if @pinned.
 * @imp:	The importing context's imports.
 * @fence:	The imported fence (reference held).
 * @pin:	MEMORY: the pinned target.
 * @pinned:	MEMORY: @pin is set.
 * @written:	MEMORY: the callback wrote the value already.
 * @eventfd:	EVENTFD: the eventfd to signal (reference held), else NULL.
 * @flags:	KFDSYNC_IMPORT_* of the import.
 * @event_id:	SET_EVENT: amdkfd event id.
 * @fail_event_id: FAIL_EVENT: registered event id.
 * @value:	MEMORY: written when @fence signals.
 * @error_value: MEMORY: written when @fence ends with an error.
 */
struct kfdsync_import_op {
	struct dma_fence_cb cb;
	struct work_struct work;
	struct list_head node;
	struct llist_node unpin_node;
	struct kfdsync_imports *imp;
	struct dma_fence *fence;
	struct kfdsync_pin pin;
	bool pinned;
	bool written;
	struct eventfd_ctx *eventfd;
	u32 flags;
	u32 event_id;
	u32 fail_event_id;
	u64 value;
	u64 error_value;
};

static struct workqueue_struct *kfdsync_import_wq;

static void kfdsync_import_unpin_work(struct work_struct *work);

/* Done imports whose written page is still pinned. */
static LLIST_HEAD(kfdsync_import_unpins);
static DECLARE_WORK(kfdsync_import_unpin, kfdsync_import_unpin_work);

/**
 * kfdsync_import_check() - check an import's argument alone
 * @data: &struct kfdsync_import, copied in
 *
 * Everything but the fd, the eventfd and the memory.
 *
 * Return: 0 or -EINVAL.
 */
int kfdsync_import_check(const void *data)
{
	const struct kfdsync_import *args = data;
	u32 flags = args->flags;
	bool mem = flags & KFDSYNC_IMPORT_MEMORY;
	bool mem32 = flags & KFDSYNC_IMPORT_MEMORY32;

	if ((flags & ~KFDSYNC_IMPORT_ALL) || !(flags & KFDSYNC_IMPORT_ACTIONS) ||
	    args->pad)
		return -EINVAL;

	if (!mem && ((flags & (KFDSYNC_IMPORT_MEMORY32 | KFDSYNC_IMPORT_SUB)) ||
		     args->addr || args->value || args->error_value))
		return -EINVAL;
	if (mem && !IS_ALIGNED(args->addr, mem32 ? sizeof(u32) : sizeof(u64)))
		return -EINVAL;
	if (mem32 && (args->value > U32_MAX || args->error_value > U32_MAX))
		return -EINVAL;

	if (flags & KFDSYNC_IMPORT_SET_EVENT) {
		if (!args->event_id || args->event_id >= KFDSYNC_EVENT_ID_LIMIT)
			return -EINVAL;
	} else if (args->event_id) {
		return -EINVAL;
	}

	if (!(flags & KFDSYNC_IMPORT_FAIL_EVENT) != !args->fail_event_id)
		return -EINVAL;
	if (!(flags & KFDSYNC_IMPORT_EVENTFD) && args->eventfd)
		return -EINVAL;
	return 0;
}

/* The fence of sync_file @fd: -EBADF for no file, -EINVAL for another file. */
static struct dma_fence *kfdsync_import_fence(int fd)
{
	struct dma_fence *fence = sync_file_get_fence(fd);
	struct file *file;

	if (fence)
		return fence;
	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	fput(file);
	return ERR_PTR(-EINVAL);
}

static void kfdsync_import_free(struct kfdsync_import_op *op, bool written)
{
	if (op->pinned)
		kfdsync_pin_release(&op->pin, written);
	if (op->eventfd)
		eventfd_ctx_put(op->eventfd);
	dma_fence_put(op->fence);
	kfree(op);
}

/* An import of @imp is no longer running. */
static void kfdsync_import_done(struct kfdsync_imports *imp)
{
	/* Last: a closing context may be gone once this is unlocked. */
	spin_lock(&imp->lock);
	if (!--imp->running)
		wake_up(&imp->idle);
	spin_unlock(&imp->lock);
}

/* Store or subtract @value at the target: one aligned access. */
static void kfdsync_import_write(struct kfdsync_import_op *op, u64 value)
{
	trace_kfdsync_import_write(op->fence, value);
	kfdsync_pin_write(&op->pin, value, op->flags & KFDSYNC_IMPORT_MEMORY32,
			  op->flags & KFDSYNC_IMPORT_SUB);
}

static void kfdsync_import_work(struct work_struct *work)
{
	struct kfdsync_import_op *op =
		container_of(work, struct kfdsync_import_op, work);
	struct kfdsync_imports *imp = op->imp;
	int error = min(dma_fence_get_status(op->fence), 0);
	bool cookie;

	/* The fence ended: no longer pending (max_imports), nor cancellable. */
	spin_lock(&imp->lock);
	list_del(&op->node);
	imp->n--;
	imp->running++;
	spin_unlock(&imp->lock);
	kfdsync_user_uncharge(imp->user, KFDSYNC_USER_IMPORTS);

	cookie = dma_fence_begin_signalling();
	/* First the error, so that nothing released below can beat it. */
	if (error && (op->flags & KFDSYNC_IMPORT_FAIL_EVENT))
		kfdsync_event_fail(imp->events, op->fail_event_id, error);
	if (op->pinned && !op->written)
		kfdsync_import_write(op, error ? op->error_value : op->value);
	dma_fence_end_signalling(cookie);
	/* After the value: an HSA waiter woken by the event reads it. */
	if (op->flags & KFDSYNC_IMPORT_SET_EVENT)
		kfdsync_amdkfd_set_event(imp->mm, op->event_id, false);
	if (op->eventfd)
		kfdsync_eventfd_signal(op->eventfd);
	trace_kfdsync_import_done(op->fence, error, op->flags);
	if (op->pinned) {
		/* Still running until unpinned, where it may sleep. */
		if (llist_add(&op->unpin_node, &kfdsync_import_unpins))
			queue_work(system_unbound_wq, &kfdsync_import_unpin);
		return;
	}
	kfdsync_import_free(op, false);
	kfdsync_import_done(imp);
}

/*
 * Release the pins of done imports, marking their pages dirty (this may
 * wait for a folio's lock), and end them.
 */
static void kfdsync_import_unpin_work(struct work_struct *work)
{
	/* Oldest first: a closing context waits for its own. */
	struct llist_node *list =
		llist_reverse_order(llist_del_all(&kfdsync_import_unpins));
	struct kfdsync_import_op *op, *next;
	struct kfdsync_imports *imp;

	llist_for_each_entry_safe(op, next, list, unpin_node) {
		imp = op->imp;
		kfdsync_import_free(op, true);
		kfdsync_import_done(imp);
	}
}

static void kfdsync_import_fence_cb(struct dma_fence *fence,
				    struct dma_fence_cb *cb)
{
	struct kfdsync_import_op *op =
		container_of(cb, struct kfdsync_import_op, cb);
	/* Signalled: the error is final (dma_fence_get_status() would lock). */
	int error = fence->error;

	if (op->pinned && !(error && (op->flags & KFDSYNC_IMPORT_FAIL_EVENT))) {
		kfdsync_import_write(op, error ? op->error_value : op->value);
		op->written = true;
	}
	queue_work(kfdsync_import_wq, &op->work);
}

/**
 * kfdsync_import() - act on the importer's behalf when a fence ends
 * @imp: the caller's context's imports (current's process)
 * @args: the ioctl's argument, copied in and checked by
 *	  kfdsync_import_check()
 *
 * Return: 0, or -errno as listed for KFDSYNC_IOCTL_IMPORT_SYNC_FILE.
 */
int kfdsync_import(struct kfdsync_imports *imp,
		   const struct kfdsync_import *args)
{
	struct kfdsync_import_op *op;
	int ret;

	op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
	if (!op)
		return -ENOMEM;
	INIT_WORK(&op->work, kfdsync_import_work);
	INIT_LIST_HEAD(&op->node);
	op->imp = imp;
	op->flags = args->flags;
	op->event_id = args->event_id;
	op->fail_event_id = args->fail_event_id;
	op->value = args->value;
	op->error_value = args->error_value;

	op->fence = kfdsync_import_fence(args->fd);
	if (IS_ERR(op->fence)) {
		ret = PTR_ERR(op->fence);
		op->fence = NULL;
		goto err_free;
	}

	if (args->flags & KFDSYNC_IMPORT_EVENTFD) {
		op->eventfd = eventfd_ctx_fdget(args->eventfd);
		if (IS_ERR(op->eventfd)) {
			ret = PTR_ERR(op->eventfd);
			op->eventfd = NULL;
			goto err_free;
		}
	}

	if ((args->flags & KFDSYNC_IMPORT_FAIL_EVENT) &&
	    !kfdsync_event_exists(imp->events, args->fail_event_id)) {
		ret = -ENOENT;
		goto err_free;
	}

	if (args->flags & KFDSYNC_IMPORT_SET_EVENT) {
		ret = kfdsync_amdkfd_set_event(imp->mm, args->event_id, true);
		if (ret)
			goto err_free;
	}

	if (args->flags & KFDSYNC_IMPORT_MEMORY) {
		ret = kfdsync_pin_user(&op->pin, args->addr,
				       args->flags & KFDSYNC_IMPORT_MEMORY32 ?
				       sizeof(u32) : sizeof(u64));
		if (ret)
			goto err_free;
		op->pinned = true;
	}

	ret = 0;
	spin_lock(&imp->lock);
	if (imp->dead)
		ret = -EPERM;
	else if (imp->n >= imp->max ||
		 !kfdsync_user_charge(imp->user, KFDSYNC_USER_IMPORTS,
				      imp->user_max))
		ret = -ENOSPC;
	if (ret) {
		spin_unlock(&imp->lock);
		goto err_free;
	}
	list_add_tail(&op->node, &imp->list);
	imp->n++;
	spin_unlock(&imp->lock);
	trace_kfdsync_import_arm(imp->events->tgid, op->fence, args);

	/* Ended already: no callback will come, do it now. */
	if (dma_fence_add_callback(op->fence, &op->cb,
				   kfdsync_import_fence_cb))
		queue_work(kfdsync_import_wq, &op->work);
	return 0;

err_free:
	kfdsync_import_free(op, false);
	return ret;
}

/**
 * kfdsync_imports_init() - set up a context's imports
 * @imp: the imports, zeroed, the limits and pointers already set
 */
void kfdsync_imports_init(struct kfdsync_imports *imp)
{
	spin_lock_init(&imp->lock);
	INIT_LIST_HEAD(&imp->list);
	init_waitqueue_head(&imp->idle);
}

/**
 * kfdsync_imports_kill() - no new imports (the address space went away)
 * @imp: the context's imports
 */
void kfdsync_imports_kill(struct kfdsync_imports *imp)
{
	spin_lock(&imp->lock);
	imp->dead = true;
	spin_unlock(&imp->lock);
}

/* No import of the context is pending or running. */
static bool kfdsync_imports_idle(struct kfdsync_imports *imp)
{
	bool idle;

	spin_lock(&imp->lock);
	idle = list_empty(&imp->list) && !imp->running;
	spin_unlock(&imp->lock);
	return idle;
}

/**
 * kfdsync_imports_fini() - cancel a closing context's imports
 * @imp: the context's imports
 *
 * Imports whose fence has not ended are cancelled (nothing written, set or
 * signalled); the context's others are done before this returns. Other
 * contexts' imports are not waited for.
 */
void kfdsync_imports_fini(struct kfdsync_imports *imp)
{
	struct kfdsync_import_op *op, *next;
	LIST_HEAD(cancelled);

	spin_lock(&imp->lock);
	imp->dead = true;
	list_for_each_entry_safe(op, next, &imp->list, node) {
		/* False: the callback ran, the worker owns the import. */
		if (dma_fence_remove_callback(op->fence, &op->cb)) {
			trace_kfdsync_import_cancel(op->fence);
			list_move_tail(&op->node, &cancelled);
			imp->n--;
			kfdsync_user_uncharge(imp->user, KFDSYNC_USER_IMPORTS);
		}
	}
	spin_unlock(&imp->lock);

	list_for_each_entry_safe(op, next, &cancelled, node)
		kfdsync_import_free(op, false);
	/* Those left are queued or running: their worker ends them. */
	wait_event(imp->idle, kfdsync_imports_idle(imp));
}

/**
 * kfdsync_import_init() - create the imports' workqueue
 *
 * Return: 0 or -ENOMEM.
 */
int kfdsync_import_init(void)
{
	/*
	 * High priority: a GPU queue or a waiter may be blocked on it. A
	 * rescuer: it ends fences, whatever memory is left.
	 */
	kfdsync_import_wq = alloc_workqueue("kfdsync_import",
					    WQ_UNBOUND | WQ_HIGHPRI |
					    WQ_MEM_RECLAIM, 0);
	return kfdsync_import_wq ? 0 : -ENOMEM;
}

/**
 * kfdsync_import_exit() - destroy the imports' workqueue
 *
 * Every context is closed by now, so every import is done.
 */
void kfdsync_import_exit(void)
{
	destroy_workqueue(kfdsync_import_wq);
	flush_work(&kfdsync_import_unpin);
}
