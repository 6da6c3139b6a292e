// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: the signal slots of amdkfd processes - the truth of GPU signals.
 *
 * An amdkfd signal event E of a process has a slot, 8 bytes at E * 8 in the
 * process's signal page: all-ones while unsignalled. A GPU completion
 * (RELEASE_MEM) writes another value into it and raises an interrupt;
 * amdkfd, handling the interrupt, finds set slots, acknowledges each
 * (writes all-ones back) and sets the event. kfdsync's ack hook runs for
 * every slot amdkfd is about to acknowledge (kfdsync_amdkfd.c).
 *
 * Counting. Every write of the slot that amdkfd acknowledges is counted
 * exactly once, even when two interrupt handlers of one process find the
 * same write set and both acknowledge it (amdkfd then sets the event
 * twice): at the hook, kfdsync replaces a written value with
 * KFDSYNC_SLOT_COUNTED by an atomic compare-and-exchange and counts a signal
 * only when the exchange succeeds. A marked slot still reads "set" to
 * amdkfd (not all-ones), so amdkfd's own view of the event is unchanged;
 * kfdsync never writes all-ones and never writes a slot that reads
 * all-ones. A new write replaces the mark and is counted at its own
 * acknowledgment; so is a write that lands between one handler's
 * acknowledgment and another's hook. What kfdsync cannot see: a write that
 * lands in the few instructions between the hook and amdkfd's
 * acknowledging store is overwritten by that store, for amdkfd too; it is
 * one signal with the write before it. CPU sets (kfd_set_event()) are
 * counted when amdkfd sets the event; they never touch the slot. An
 * interrupt that says the GPU signalled without writing the slot (ABI
 * 7.1's signal_mailbox_updated false) is one signal: a write the slot
 * holds then is taken (marked) with it, as amdkfd sets the event once and
 * acknowledges the slot, so the GPU hook that follows counts nothing more.
 *
 * Lifetime. kfdsync reads and marks a slot only through amdkfd's own
 * kernel mapping of the process's signal page (kfdsync_amdkfd_slot(),
 * found by event id at registration: the page amdkfd allocated, or the GPU
 * buffer libhsakmt gave it on a discrete GPU; the address the caller
 * passes is not used), and only while kfdsync or amdkfd holds a reference
 * on the amdkfd process: amdkfd unmaps a GPU buffer
 * (kfd_process_kunmap_signal_bo()) and frees the page
 * (kfd_event_free_process()) only in kfd_process_wq_release(), which runs
 * once the process's last reference is gone. Each place a slot is touched,
 * and what keeps the page mapped then:
 *
 * - the GPU hook (read, mark): amdkfd's reference, taken by
 *   kfd_signal_event_interrupt() before it reads the slot itself;
 * - registration (read, mark a pending write): the reference
 *   kfdsync_slot_subscribe() holds from before it finds the slot until
 *   the slot is visible to the free hook;
 * - kfdsync_slot_peek() (fdinfo, debugfs; read): a reference taken for
 *   the read, which finds nothing once amdkfd has let the process go;
 * - CPU sets, destroys, errors and the free hook touch no slot.
 *
 * The free hook (kfd_event_free_process(), after the unmap) makes the
 * process unreachable: dead (no new slot) and out of the tables, so no
 * hook, registration or peek finds its slots again; a worker then ends
 * them. Nothing reads a dead slot either. An event amdkfd
 * destroys ends its slot (the id may be reused for another event). Nothing
 * pins the page: the reference is what keeps it. File and line of each of
 * these in amdkfd's sources of every release: kmod/README.md, "Slot
 * lifetime".
 *
 * Objects. A &struct kfdsync_proc per amdkfd process with watched slots,
 * found by the opaque kfd_process pointer (GPU hooks) and by the address
 * space (CPU sets), each with a table of its slots by id; a &struct
 * kfdsync_slot per watched (process, id), shared by every subscriber (the
 * registered events of all of the process's kfdsync contexts). Hooks look
 * up in O(1), whatever other processes register.
 *
 * Walks. Ending many slots at once (a GPU reset, amdkfd freeing a process,
 * amdgpu going away) takes a process's lock for KFDSYNC_SLOT_BATCH slots at
 * a time, by id, and never holds kfdsync_procs_lock longer than it takes to
 * pick the processes: any GPU user can hang a queue and force a reset, or
 * raise VM faults at will, and the hooks run with preemption off. The
 * hooks only pick the processes (a reset walks the list under RCU) and
 * leave the ending to a worker, in process context: a reset, an exception,
 * and amdkfd freeing a process, whose hook first makes the process
 * unreachable (dead, out of the tables: nothing can read its page after
 * the hook returns) in constant time. amdgpu going away ends them in its
 * notifier, preemptibly. The worker ends fences, so its workqueue has a
 * rescuer (WQ_MEM_RECLAIM).
 *
 * Locking: kfdsync_slot_mutex serialises creation and the end of all slots
 * (process context); kfdsync_procs_lock protects the hash tables and the
 * list of processes (RCU readers); kfdsync_end_lock the processes the
 * hooks left to the worker; &kfdsync_proc.lock a process's table and state;
 * &kfdsync_slot.lock a slot's subscribers and state, and nests inside
 * &kfdsync_proc.lock; the subscribers' own locks nest inside it. Readers of
 * the tables use RCU; processes and slots are freed after a grace period.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include <linux/kfdsync.h>

#include "kfdsync_amdkfd.h"
#include "kfdsync_slot.h"
#include "kfdsync_trace.h"

/* A written slot whose write kfdsync counted: still "set" for amdkfd. */
#define KFDSYNC_SLOT_COUNTED	(~1ULL)

/* A process's slot table, in chunks allocated as ids are used. */
#define KFDSYNC_SLOT_CHUNK	512
#define KFDSYNC_SLOT_CHUNKS	(KFDSYNC_EVENT_ID_LIMIT / KFDSYNC_SLOT_CHUNK)

/* Slots ended under one hold of a process's lock, in a walk. */
#define KFDSYNC_SLOT_BATCH	64

struct kfdsync_slot_chunk {
	struct kfdsync_slot __rcu *slot[KFDSYNC_SLOT_CHUNK];
};

/**
 * struct kfdsync_proc - an amdkfd process with watched slots
 * @by_kp:	Entry in kfdsync_procs_by_kp while published.
 * @by_mm:	Entry in kfdsync_procs_by_mm while published.
 * @node:	Entry in kfdsync_procs (RCU) while published.
 * @end_node:	Entry in kfdsync_end_list while an end of its slots is
 *		pending (kfdsync_end_lock); the list holds a reference.
 * @end_error:	The -errno that end gives its slots (kfdsync_end_lock):
 *		the first one queued.
 * @end_cause:	Why, a KFDSYNC_END_* for the trace (kfdsync_end_lock).
 * @end_kill:	That end is for good: amdkfd freed the process
 *		(kfdsync_end_lock).
 * @gone_node:	Entry in kfdsync_slot_all_end()'s list (kfdsync_slot_mutex).
 * @kp:		amdkfd's struct kfd_process, an identity only (no
 *		reference); valid while published.
 * @mm:		The process's address space (mmgrab() reference).
 * @ref:	References: one per slot, one per walk that ends its slots.
 * @lock:	Protects @chunks and @dead.
 * @dead:	amdkfd freed the process: no new slots.
 * @chunks:	The live slots by id (RCU), KFDSYNC_SLOT_CHUNK ids a chunk.
 * @free_work:	Frees the process after readers are done, in process
 *		context: the last mmdrop() frees page tables under
 *		pgd_lock, which is not softirq-safe (no mmdrop() in an RCU
 *		callback).
 *
 * @by_kp, @by_mm and @node are protected by kfdsync_procs_lock.
 */
struct kfdsync_proc {
	struct hlist_node by_kp;
	struct hlist_node by_mm;
	struct list_head node;
	struct list_head end_node;
	int end_error;
	u32 end_cause;
	bool end_kill;
	struct list_head gone_node;
	const void *kp;
	struct mm_struct *mm;
	struct kref ref;
	/* Protects the slot table; see the kernel-doc. */
	spinlock_t lock;
	bool dead;
	struct kfdsync_slot_chunk __rcu *chunks[KFDSYNC_SLOT_CHUNKS];
	struct rcu_work free_work;
};

/**
 * struct kfdsync_slot - one watched slot
 * @proc:	The process (reference held).
 * @id:		The event id.
 * @addr:	Kernel address of the slot; read only while !@dead.
 * @lock:	Protects @subs, @dead and @signals.
 * @dead:	Ended: amdkfd destroyed the event or freed the process.
 * @subs:	Subscribers (&kfdsync_slot_sub.node).
 * @signals:	Signals counted since the slot was created.
 * @rcu:	Frees the slot after readers are done.
 */
struct kfdsync_slot {
	struct kfdsync_proc *proc;
	u32 id;
	u64 *addr;
	/* Protects the subscribers and the state. */
	spinlock_t lock;
	bool dead;
	struct list_head subs;
	u64 signals;
	struct rcu_head rcu;
};

static DEFINE_MUTEX(kfdsync_slot_mutex);
/*
 * Runs kfdsync_proc_free_work() and kfdsync_end_work; drained by
 * kfdsync_slot_exit().
 */
static struct workqueue_struct *kfdsync_slot_wq;
static DEFINE_SPINLOCK(kfdsync_procs_lock);
static DEFINE_HASHTABLE(kfdsync_procs_by_kp, 6);
static DEFINE_HASHTABLE(kfdsync_procs_by_mm, 6);
static LIST_HEAD(kfdsync_procs);

/* The processes whose slots a reset ends, for kfdsync_end_work. */
static DEFINE_SPINLOCK(kfdsync_end_lock);
static LIST_HEAD(kfdsync_end_list);
static void kfdsync_end_work_fn(struct work_struct *work);
static DECLARE_WORK(kfdsync_end_work, kfdsync_end_work_fn);

/* Drops what subscribers finished under the locks (fences). */
static void (*kfdsync_slot_done)(struct list_head *done);

/*
 * The longest time, in ns, kfdsync_procs_lock was held, one process's lock
 * was held while its slots were ended, and a hook spent in the slot layer
 * (with preemption off): for <debugfs>/kfdsync/slots.
 */
static atomic64_t kfdsync_held_table;
static atomic64_t kfdsync_held_proc;
static atomic64_t kfdsync_held_hook;

/* Note a hold that began at @since (ktime_get_ns()) in @max. */
static void kfdsync_held(atomic64_t *max, u64 since)
{
	s64 held = ktime_get_ns() - since;
	s64 cur = atomic64_read(max);

	while (held > cur && !atomic64_try_cmpxchg(max, &cur, held))
		;
}

static void kfdsync_proc_free_work(struct work_struct *work)
{
	struct kfdsync_proc *proc = container_of(to_rcu_work(work),
						 struct kfdsync_proc, free_work);
	unsigned int i;

	mmdrop(proc->mm);
	for (i = 0; i < KFDSYNC_SLOT_CHUNKS; i++)
		kfree(rcu_dereference_raw(proc->chunks[i]));
	kfree(proc);
}

/* Unpublish @proc; kfdsync_procs_lock held. */
static void kfdsync_proc_unhash_locked(struct kfdsync_proc *proc)
{
	lockdep_assert_held(&kfdsync_procs_lock);

	if (hlist_unhashed(&proc->by_kp))
		return;
	hash_del_rcu(&proc->by_kp);
	hash_del_rcu(&proc->by_mm);
	list_del_rcu(&proc->node);
}

static void kfdsync_proc_release(struct kref *ref)
{
	struct kfdsync_proc *proc = container_of(ref, struct kfdsync_proc, ref);
	u64 since;

	spin_lock(&kfdsync_procs_lock);
	since = ktime_get_ns();
	kfdsync_proc_unhash_locked(proc);
	kfdsync_held(&kfdsync_held_table, since);
	spin_unlock(&kfdsync_procs_lock);
	INIT_RCU_WORK(&proc->free_work, kfdsync_proc_free_work);
	queue_rcu_work(kfdsync_slot_wq, &proc->free_work);
}

static void kfdsync_proc_put(struct kfdsync_proc *proc)
{
	kref_put(&proc->ref, kfdsync_proc_release);
}

/* The published process of @kp; RCU read lock held. */
static struct kfdsync_proc *kfdsync_proc_by_kp(const void *kp)
{
	struct kfdsync_proc *proc;

	hash_for_each_possible_rcu(kfdsync_procs_by_kp, proc, by_kp,
				   (unsigned long)kp)
		if (proc->kp == kp)
			return proc;
	return NULL;
}

/* The published process of @mm; RCU read lock held. */
static struct kfdsync_proc *kfdsync_proc_by_mm(const struct mm_struct *mm)
{
	struct kfdsync_proc *proc;

	hash_for_each_possible_rcu(kfdsync_procs_by_mm, proc, by_mm,
				   (unsigned long)mm)
		if (proc->mm == mm)
			return proc;
	return NULL;
}

/* The live slot @id of @proc; RCU read lock held. */
static struct kfdsync_slot *kfdsync_proc_slot(struct kfdsync_proc *proc,
					      u32 id)
{
	struct kfdsync_slot_chunk *chunk;

	if (!proc || !id || id >= KFDSYNC_EVENT_ID_LIMIT)
		return NULL;
	chunk = rcu_dereference(proc->chunks[id / KFDSYNC_SLOT_CHUNK]);
	return chunk ? rcu_dereference(chunk->slot[id % KFDSYNC_SLOT_CHUNK])
		     : NULL;
}

/* The table entry of slot @id of @proc (its chunk exists); proc->lock held. */
static struct kfdsync_slot __rcu **kfdsync_proc_entry(struct kfdsync_proc *proc,
						      u32 id)
{
	struct kfdsync_slot_chunk *chunk;

	chunk = rcu_dereference_protected(proc->chunks[id / KFDSYNC_SLOT_CHUNK],
					  lockdep_is_held(&proc->lock));
	return &chunk->slot[id % KFDSYNC_SLOT_CHUNK];
}

/*
 * Tell every subscriber of @slot about one more signal, @from the GPU (the
 * slot had @value), the CPU or a registration's scan (KFDSYNC_TRACE_*).
 */
static void kfdsync_slot_signal_locked(struct kfdsync_slot *slot, u32 from,
				       u64 value, struct list_head *done)
{
	struct kfdsync_slot_sub *sub;

	lockdep_assert_held(&slot->lock);

	slot->signals++;
	trace_kfdsync_slot_signal(slot->id, from, value, slot->signals);
	list_for_each_entry(sub, &slot->subs, node)
		sub->ops->signal(sub, done);
}

/* Tell every subscriber of @slot that it ended with @error. */
static void kfdsync_slot_end_locked(struct kfdsync_slot *slot, int error,
				    struct list_head *done)
{
	struct kfdsync_slot_sub *sub;

	lockdep_assert_held(&slot->lock);

	list_for_each_entry(sub, &slot->subs, node)
		sub->ops->end(sub, error, done);
}

/*
 * Count a write of the slot that was not counted yet: replace it with the
 * mark, atomically against the GPU's writes and amdkfd's acknowledgment.
 * *@value is what was written.
 */
static bool kfdsync_slot_take_locked(struct kfdsync_slot *slot, u64 *value)
{
	u64 v;

	lockdep_assert_held(&slot->lock);

	v = READ_ONCE(*slot->addr);
	while (v != KFDSYNC_SLOT_UNSIGNALLED && v != KFDSYNC_SLOT_COUNTED) {
		if (try_cmpxchg64(slot->addr, &v, KFDSYNC_SLOT_COUNTED)) {
			*value = v;
			return true;
		}
	}
	return false;
}

/*
 * A signal of slot @id @from the GPU (@kp: a write amdkfd acknowledges, or
 * an interrupt that wrote nothing) or the CPU (@mm): count it, tell the
 * subscribers.
 */
static void kfdsync_slot_hit(const void *kp, const struct mm_struct *mm,
			     u32 id, u32 from)
{
	struct kfdsync_slot *slot;
	LIST_HEAD(done);
	u64 value = 0;
	bool cookie;

	cookie = dma_fence_begin_signalling();
	rcu_read_lock();
	slot = kfdsync_proc_slot(kp ? kfdsync_proc_by_kp(kp) :
				 kfdsync_proc_by_mm(mm), id);
	if (slot) {
		spin_lock(&slot->lock);
		/*
		 * An unwritten signal is one, whatever the slot holds: a write
		 * there is taken with it, as amdkfd's acknowledgment that
		 * follows takes it with its one set of the event.
		 */
		if (!slot->dead &&
		    (from == KFDSYNC_TRACE_CPU ||
		     kfdsync_slot_take_locked(slot, &value) ||
		     from == KFDSYNC_TRACE_UNWRITTEN))
			kfdsync_slot_signal_locked(slot, from, value, &done);
		spin_unlock(&slot->lock);
	}
	rcu_read_unlock();
	dma_fence_end_signalling(cookie);
	kfdsync_slot_done(&done);
}

/**
 * kfdsync_slot_gpu_ack() - hook: amdkfd acknowledges a set slot
 * @kp: amdkfd's process
 * @id: the event id
 *
 * Counts the write amdkfd is about to acknowledge, unless it was counted.
 */
void kfdsync_slot_gpu_ack(const void *kp, u32 id)
{
	kfdsync_slot_hit(kp, NULL, id, KFDSYNC_TRACE_GPU);
}

/**
 * kfdsync_slot_gpu_unwritten() - hook: a GPU signal that wrote no slot
 * @kp: amdkfd's process
 * @id: the event id
 *
 * Counts one signal, and takes a write the slot holds with it: amdkfd
 * sets the event once and acknowledges the slot, and the GPU hook then
 * finds nothing more to count.
 */
void kfdsync_slot_gpu_unwritten(const void *kp, u32 id)
{
	kfdsync_slot_hit(kp, NULL, id, KFDSYNC_TRACE_UNWRITTEN);
}

/**
 * kfdsync_slot_cpu_set() - hook: amdkfd sets an event from the CPU
 * @mm: the event's process's address space
 * @id: the event id
 */
void kfdsync_slot_cpu_set(const struct mm_struct *mm, u32 id)
{
	kfdsync_slot_hit(NULL, mm, id, KFDSYNC_TRACE_CPU);
}

/* End @slot with @error and take it off its process; proc->lock held. */
static void kfdsync_slot_kill_locked(struct kfdsync_slot *slot, int error,
				     struct list_head *done)
{
	struct kfdsync_proc *proc = slot->proc;

	lockdep_assert_held(&proc->lock);

	spin_lock(&slot->lock);
	slot->dead = true;
	kfdsync_slot_end_locked(slot, error, done);
	spin_unlock(&slot->lock);
	rcu_assign_pointer(*kfdsync_proc_entry(proc, slot->id), NULL);
}

/**
 * kfdsync_slot_event_destroy() - hook: amdkfd destroys an event
 * @kp: amdkfd's process
 * @id: the event id
 *
 * The slot ends (its subscribers with -ECANCELED); the id may be reused.
 */
void kfdsync_slot_event_destroy(const void *kp, u32 id)
{
	struct kfdsync_proc *proc;
	struct kfdsync_slot *slot;
	LIST_HEAD(done);
	bool cookie;

	trace_kfdsync_end(KFDSYNC_END_DESTROY, -ECANCELED, 0, id);
	cookie = dma_fence_begin_signalling();
	rcu_read_lock();
	proc = kfdsync_proc_by_kp(kp);
	if (proc && kfdsync_proc_slot(proc, id)) {
		spin_lock(&proc->lock);
		slot = rcu_dereference_protected(*kfdsync_proc_entry(proc, id),
						 lockdep_is_held(&proc->lock));
		if (slot)
			kfdsync_slot_kill_locked(slot, -ECANCELED, &done);
		spin_unlock(&proc->lock);
	}
	rcu_read_unlock();
	dma_fence_end_signalling(cookie);
	kfdsync_slot_done(&done);
}

/*
 * End the live slots of @proc with ids from *@id on with @error, and with
 * @kill for good, at most KFDSYNC_SLOT_BATCH of them under one hold of the
 * process's lock (and at most one chunk's ids scanned). Return: whether
 * ids are left (*@id is where to go on).
 */
static bool kfdsync_proc_end_batch(struct kfdsync_proc *proc, u32 *id,
				   int error, bool kill, struct list_head *done)
{
	unsigned int n = 0, scanned = 0;
	struct kfdsync_slot_chunk *chunk;
	struct kfdsync_slot *slot;
	u64 since;

	spin_lock(&proc->lock);
	since = ktime_get_ns();
	if (kill)
		proc->dead = true;
	while (*id < KFDSYNC_EVENT_ID_LIMIT && n < KFDSYNC_SLOT_BATCH &&
	       scanned < KFDSYNC_SLOT_CHUNK) {
		chunk = rcu_dereference_protected(proc->chunks[*id / KFDSYNC_SLOT_CHUNK],
						  lockdep_is_held(&proc->lock));
		if (!chunk) {
			*id = round_down(*id, KFDSYNC_SLOT_CHUNK) + KFDSYNC_SLOT_CHUNK;
			continue;
		}
		slot = rcu_dereference_protected(chunk->slot[*id % KFDSYNC_SLOT_CHUNK],
						 lockdep_is_held(&proc->lock));
		(*id)++;
		scanned++;
		if (!slot)
			continue;
		n++;
		if (kill) {
			kfdsync_slot_kill_locked(slot, error, done);
		} else {
			spin_lock(&slot->lock);
			kfdsync_slot_end_locked(slot, error, done);
			spin_unlock(&slot->lock);
		}
	}
	kfdsync_held(&kfdsync_held_proc, since);
	spin_unlock(&proc->lock);
	return *id < KFDSYNC_EVENT_ID_LIMIT;
}

/*
 * End every slot of @proc with @error (with @kill, for good: no new slots
 * either), a batch at a time; between batches the ended fences are dropped
 * and, if @may_sleep, others may run. @proc stays alive (a reference, or
 * RCU).
 */
static void kfdsync_proc_end(struct kfdsync_proc *proc, int error, bool kill,
			     bool may_sleep)
{
	bool cookie, more;
	LIST_HEAD(done);
	u32 id = 1;

	do {
		cookie = dma_fence_begin_signalling();
		more = kfdsync_proc_end_batch(proc, &id, error, kill, &done);
		dma_fence_end_signalling(cookie);
		kfdsync_slot_done(&done);
		if (may_sleep)
			cond_resched();
	} while (more);
}

/* End the slots of the processes the hooks left, in process context. */
static void kfdsync_end_work_fn(struct work_struct *work)
{
	struct kfdsync_proc *proc;
	u32 cause;
	bool kill;
	int error;

	for (;;) {
		spin_lock(&kfdsync_end_lock);
		proc = list_first_entry_or_null(&kfdsync_end_list,
						struct kfdsync_proc, end_node);
		if (proc) {
			list_del_init(&proc->end_node);
			error = proc->end_error;
			cause = proc->end_cause;
			kill = proc->end_kill;
		}
		spin_unlock(&kfdsync_end_lock);
		if (!proc)
			return;
		trace_kfdsync_end(cause, error, 0, 0);
		kfdsync_proc_end(proc, error, kill, true);
		kfdsync_proc_put(proc);	/* the list's */
	}
}

/*
 * Leave the end of @proc's slots with @error (with @kill, for good) for
 * @cause (KFDSYNC_END_*) to the worker; an end already pending keeps its
 * error and gains @kill. Return: whether @proc had slots left to end.
 */
static bool kfdsync_proc_queue_end(struct kfdsync_proc *proc, u32 cause,
				   int error, bool kill)
{
	bool queued = false;

	/* Its last slot is going: nothing left to end. */
	if (!kref_get_unless_zero(&proc->ref))
		return false;
	spin_lock(&kfdsync_end_lock);
	if (list_empty(&proc->end_node)) {
		list_add_tail(&proc->end_node, &kfdsync_end_list);
		proc->end_error = error;
		proc->end_cause = cause;
		proc->end_kill = kill;
		queued = true;
	} else {
		proc->end_kill |= kill;
	}
	spin_unlock(&kfdsync_end_lock);
	if (queued)
		queue_work(kfdsync_slot_wq, &kfdsync_end_work);
	else
		kfdsync_proc_put(proc);
	return true;
}

/**
 * kfdsync_slot_process_free() - hook: amdkfd frees a process's events
 * @kp: amdkfd's process
 *
 * Its signal page goes next. Nothing can read it from now on: the process
 * takes no new slot and leaves the tables, so no hook, registration or
 * peek finds it (and every reader holds a reference on amdkfd's process,
 * which this call comes after the last of). Its slots end (-EIO) shortly
 * after, from a worker: constant time here, whatever the number of slots.
 */
void kfdsync_slot_process_free(const void *kp)
{
	u64 entry = ktime_get_ns(), since;
	struct kfdsync_proc *proc;
	bool queued = false;

	rcu_read_lock();
	proc = kfdsync_proc_by_kp(kp);
	if (proc) {
		/* Dead first: no slot is added behind the worker. */
		spin_lock(&proc->lock);
		proc->dead = true;
		spin_unlock(&proc->lock);
		spin_lock(&kfdsync_procs_lock);
		since = ktime_get_ns();
		kfdsync_proc_unhash_locked(proc);
		kfdsync_held(&kfdsync_held_table, since);
		spin_unlock(&kfdsync_procs_lock);
		queued = kfdsync_proc_queue_end(proc, KFDSYNC_END_FREE, -EIO,
						true);
	}
	rcu_read_unlock();
	/* The worker says it for what it ends. */
	if (!queued)
		trace_kfdsync_end(KFDSYNC_END_FREE, -EIO, 0, 0);
	kfdsync_held(&kfdsync_held_hook, entry);
}

/**
 * kfdsync_slot_process_error() - hook: an exception hit a process
 * @kp: amdkfd's process (referenced by the caller)
 * @error: -EIO or -EFAULT, or -ENODEV (its GPU was unplugged)
 *
 * Its slots end with @error shortly after, from a worker: any GPU user can
 * raise faults at will, so the hook only picks the process.
 */
void kfdsync_slot_process_error(const void *kp, int error)
{
	u64 entry = ktime_get_ns();
	struct kfdsync_proc *proc;

	rcu_read_lock();
	proc = kfdsync_proc_by_kp(kp);
	if (proc)
		kfdsync_proc_queue_end(proc, error == -ENODEV ?
				       KFDSYNC_END_UNPLUG : KFDSYNC_END_EXCEPTION,
				       error, false);
	rcu_read_unlock();
	kfdsync_held(&kfdsync_held_hook, entry);
}

/*
 * A GPU reset: the processes with queues on @kdev (every process: NULL)
 * end with -EIO. Picks them under RCU, without kfdsync_procs_lock; the
 * worker ends their slots.
 */
static void kfdsync_slot_reset(const void *kdev)
{
	struct kfdsync_proc *proc;

	rcu_read_lock();
	list_for_each_entry_rcu(proc, &kfdsync_procs, node) {
		if (!kdev || kfdsync_amdkfd_process_uses(proc->mm, proc->kp, kdev))
			kfdsync_proc_queue_end(proc, KFDSYNC_END_RESET, -EIO, false);
	}
	rcu_read_unlock();
}

/**
 * kfdsync_slot_device_reset() - hook: a GPU was reset
 * @kdev: amdkfd's device
 *
 * The processes with queues on that device end with -EIO, shortly after,
 * from a worker.
 */
void kfdsync_slot_device_reset(const void *kdev)
{
	u64 entry = ktime_get_ns();

	kfdsync_slot_reset(kdev);
	kfdsync_held(&kfdsync_held_hook, entry);
}

/**
 * kfdsync_slot_all_end() - every slot ends: amdkfd is gone
 * @error: the -errno for the subscribers
 *
 * Process context (it sleeps between batches).
 */
void kfdsync_slot_all_end(int error)
{
	struct kfdsync_proc *proc, *next;
	LIST_HEAD(gone);
	u64 since;

	trace_kfdsync_end(KFDSYNC_END_UNLOAD, error, 0, 0);
	mutex_lock(&kfdsync_slot_mutex);
	spin_lock(&kfdsync_procs_lock);
	since = ktime_get_ns();
	list_for_each_entry(proc, &kfdsync_procs, node)
		if (kref_get_unless_zero(&proc->ref))
			list_add_tail(&proc->gone_node, &gone);
	kfdsync_held(&kfdsync_held_table, since);
	spin_unlock(&kfdsync_procs_lock);

	list_for_each_entry_safe(proc, next, &gone, gone_node) {
		list_del_init(&proc->gone_node);
		kfdsync_proc_end(proc, error, true, true);
		spin_lock(&kfdsync_procs_lock);
		since = ktime_get_ns();
		kfdsync_proc_unhash_locked(proc);
		kfdsync_held(&kfdsync_held_table, since);
		spin_unlock(&kfdsync_procs_lock);
		kfdsync_proc_put(proc);
	}
	mutex_unlock(&kfdsync_slot_mutex);
}

/*
 * The published process for @kp, created if needed, with a new reference;
 * kfdsync_slot_mutex held.
 */
static struct kfdsync_proc *kfdsync_proc_get(const void *kp,
					     struct mm_struct *mm)
{
	struct kfdsync_proc *proc;
	u64 since;

	lockdep_assert_held(&kfdsync_slot_mutex);

	rcu_read_lock();
	proc = kfdsync_proc_by_kp(kp);
	if (proc && !kref_get_unless_zero(&proc->ref))
		proc = NULL;
	rcu_read_unlock();
	if (proc)
		return proc;

	proc = kzalloc(sizeof(*proc), GFP_KERNEL_ACCOUNT);
	if (!proc)
		return ERR_PTR(-ENOMEM);
	proc->kp = kp;
	proc->mm = mm;
	mmgrab(mm);
	kref_init(&proc->ref);
	spin_lock_init(&proc->lock);
	INIT_LIST_HEAD(&proc->end_node);
	INIT_LIST_HEAD(&proc->gone_node);

	spin_lock(&kfdsync_procs_lock);
	since = ktime_get_ns();
	hash_add_rcu(kfdsync_procs_by_kp, &proc->by_kp, (unsigned long)kp);
	hash_add_rcu(kfdsync_procs_by_mm, &proc->by_mm, (unsigned long)mm);
	list_add_tail_rcu(&proc->node, &kfdsync_procs);
	kfdsync_held(&kfdsync_held_table, since);
	spin_unlock(&kfdsync_procs_lock);
	return proc;
}

/*
 * Add @sub to the live slot @id (at @kaddr) of @proc, creating it from
 * @fresh if needed, which then takes over the caller's reference to @proc
 * (and the table's chunk for @id from *@fresh_chunk, set to NULL if used).
 * A write pending in the slot is counted for the subscribers already there,
 * not for @sub: a signal pending at registration counts before age 0.
 * Return: 0 with *@used telling whether @fresh was used, or -EINVAL.
 */
static int kfdsync_slot_add(struct kfdsync_proc *proc, u32 id, u64 *kaddr,
			    struct kfdsync_slot_sub *sub,
			    struct kfdsync_slot *fresh,
			    struct kfdsync_slot_chunk **fresh_chunk, bool *used,
			    struct list_head *done)
{
	struct kfdsync_slot_chunk *chunk = *fresh_chunk;
	struct kfdsync_slot __rcu **entry;
	struct kfdsync_slot *slot;
	u64 value;

	spin_lock(&proc->lock);
	if (proc->dead) {
		spin_unlock(&proc->lock);
		return -EINVAL;
	}
	if (!rcu_access_pointer(proc->chunks[id / KFDSYNC_SLOT_CHUNK])) {
		rcu_assign_pointer(proc->chunks[id / KFDSYNC_SLOT_CHUNK], chunk);
		*fresh_chunk = NULL;
	}
	entry = kfdsync_proc_entry(proc, id);
	slot = rcu_dereference_protected(*entry, lockdep_is_held(&proc->lock));
	/* One signal page per process, set once: the same slot. */
	*used = !slot;
	if (!slot) {
		slot = fresh;
		slot->proc = proc;
		slot->id = id;
		slot->addr = kaddr;
		rcu_assign_pointer(*entry, slot);
	}
	spin_lock(&slot->lock);
	if (kfdsync_slot_take_locked(slot, &value))
		kfdsync_slot_signal_locked(slot, KFDSYNC_TRACE_SCAN, value, done);
	sub->slot = slot;
	list_add_tail(&sub->node, &slot->subs);
	spin_unlock(&slot->lock);
	spin_unlock(&proc->lock);
	return 0;
}

/* Test hook (<debugfs>/kfdsync/inject "unwatchable"): watch no slot. */
static bool kfdsync_slot_unwatchable;

/**
 * kfdsync_slot_watchable() - would the caller's events be watched now?
 *
 * Return: whether the hooks are active and the caller's amdkfd process has
 * a signal page (kfdsync_slot_subscribe() would find its slots).
 */
bool kfdsync_slot_watchable(void)
{
	bool page;
	void *kp;

	if (READ_ONCE(kfdsync_slot_unwatchable) || !current->mm)
		return false;
	kp = kfdsync_amdkfd_process_get(current->mm);
	if (!kp)
		return false;
	page = kfdsync_amdkfd_kprobes_fire() && kfdsync_amdkfd_slot(kp, 1);
	kfdsync_amdkfd_process_put(kp);
	return page;
}

/**
 * kfdsync_slot_subscribe() - watch slot @id of the caller's amdkfd process
 * @sub: the subscription (its @ops set)
 * @id: the event id, 1 to %KFDSYNC_EVENT_ID_LIMIT - 1
 *
 * Only while the hooks are active. The slot is found by @id through
 * amdkfd's own state (kfdsync_amdkfd_slot()). From now on @sub is told of
 * every signal of the slot, until it unsubscribes; the signal pending in
 * the slot now, if any, is not one.
 *
 * Return: 0; -ENOENT if the hooks cannot watch the slot: the caller has no
 * amdkfd process, or it has no signal page yet (no signal event), or the
 * hooks went meanwhile, or kprobes do not fire now (root disarmed them);
 * -EINVAL if the process is going; -ENOMEM.
 */
int kfdsync_slot_subscribe(struct kfdsync_slot_sub *sub, u32 id)
{
	struct mm_struct *mm = current->mm;
	struct kfdsync_slot_chunk *chunk;
	struct kfdsync_slot *fresh;
	struct kfdsync_proc *proc;
	LIST_HEAD(done);
	bool used = false;
	u64 *kaddr;
	void *kp;
	int ret;

	if (!id || id >= KFDSYNC_EVENT_ID_LIMIT)
		return -EINVAL;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	chunk = kzalloc(sizeof(*chunk), GFP_KERNEL_ACCOUNT);
	if (!fresh || !chunk) {
		kfree(fresh);
		kfree(chunk);
		return -ENOMEM;
	}
	spin_lock_init(&fresh->lock);
	INIT_LIST_HEAD(&fresh->subs);

	/* Held until the slot is visible to the free hook. */
	kp = READ_ONCE(kfdsync_slot_unwatchable) ? NULL :
	     kfdsync_amdkfd_process_get(mm);
	if (!kp) {
		kfree(fresh);
		kfree(chunk);
		return -ENOENT;
	}
	/* kprobes disarmed: the free hook may have been missed. */
	kaddr = kfdsync_amdkfd_kprobes_fire() ? kfdsync_amdkfd_slot(kp, id) :
						NULL;
	if (!kaddr) {
		ret = -ENOENT;
		goto out_put;
	}

	mutex_lock(&kfdsync_slot_mutex);
	proc = kfdsync_proc_get(kp, mm);
	if (IS_ERR(proc)) {
		ret = PTR_ERR(proc);
	} else {
		ret = kfdsync_slot_add(proc, id, kaddr, sub, fresh, &chunk,
				       &used, &done);
		/* A new slot keeps the process's reference. */
		if (!used)
			kfdsync_proc_put(proc);
	}
	mutex_unlock(&kfdsync_slot_mutex);
	kfdsync_slot_done(&done);
out_put:
	kfdsync_amdkfd_process_put(kp);
	if (!used)
		kfree(fresh);
	kfree(chunk);
	return ret;
}

static void kfdsync_slot_free_rcu(struct rcu_head *rcu)
{
	kfree(container_of(rcu, struct kfdsync_slot, rcu));
}

/**
 * kfdsync_slot_unsubscribe() - stop watching
 * @sub: a subscription made by kfdsync_slot_subscribe()
 *
 * The last subscriber frees the slot. Process context.
 */
void kfdsync_slot_unsubscribe(struct kfdsync_slot_sub *sub)
{
	struct kfdsync_slot *slot = sub->slot;
	struct kfdsync_proc *proc = slot->proc;
	bool last, live;

	spin_lock(&proc->lock);
	spin_lock(&slot->lock);
	list_del(&sub->node);
	last = list_empty(&slot->subs);
	live = !slot->dead;
	/* Nobody reads it any more: not even debugfs through a stale sub. */
	if (last)
		slot->dead = true;
	spin_unlock(&slot->lock);
	if (last && live)
		rcu_assign_pointer(*kfdsync_proc_entry(proc, slot->id), NULL);
	spin_unlock(&proc->lock);
	WRITE_ONCE(sub->slot, NULL);
	if (last) {
		call_rcu(&slot->rcu, kfdsync_slot_free_rcu);
		kfdsync_proc_put(proc);
	}
}

/**
 * kfdsync_slot_peek() - a subscribed slot's value, for fdinfo and debugfs
 * @sub: the subscription, maybe being unsubscribed
 * @value: out: the slot's value, if it is alive
 *
 * Reads the slot only with a reference on its amdkfd process, taken by
 * address space: none once amdkfd let the process go (its page may be
 * unmapped before the free hook runs), whether or not the hooks still
 * fire. Process context.
 *
 * Return: true if the slot is alive (and @value set).
 */
bool kfdsync_slot_peek(struct kfdsync_slot_sub *sub, u64 *value)
{
	struct kfdsync_slot *slot;
	struct mm_struct *mm;
	bool alive = false;
	const void *kp;
	void *ref;

	rcu_read_lock();
	slot = READ_ONCE(sub->slot);
	mm = slot ? slot->proc->mm : NULL;
	kp = slot ? slot->proc->kp : NULL;
	/* The process struct (and its mmgrab()) outlives this grace period. */
	if (mm)
		mmgrab(mm);
	rcu_read_unlock();
	if (!mm)
		return false;
	ref = kfdsync_amdkfd_process_get(mm);
	/* kprobes disarmed: the free hook may have been missed; read nothing. */
	if (ref == kp && kfdsync_amdkfd_kprobes_fire()) {
		rcu_read_lock();
		slot = READ_ONCE(sub->slot);
		if (slot) {
			spin_lock(&slot->lock);
			alive = !slot->dead;
			if (alive)
				*value = READ_ONCE(*slot->addr);
			spin_unlock(&slot->lock);
		}
		rcu_read_unlock();
	}
	if (ref)
		kfdsync_amdkfd_process_put(ref);
	mmdrop(mm);
	return alive;
}

static int kfdsync_slots_show(struct seq_file *m, void *unused)
{
	unsigned int procs = 0, slots = 0, id;
	struct kfdsync_proc *proc;

	rcu_read_lock();
	list_for_each_entry_rcu(proc, &kfdsync_procs, node) {
		procs++;
		for (id = 1; id < KFDSYNC_EVENT_ID_LIMIT; id++)
			slots += !!kfdsync_proc_slot(proc, id);
	}
	rcu_read_unlock();
	seq_printf(m, "# %u processes, %u slots\n", procs, slots);
	seq_puts(m, "# longest hold (ns): table process hook\n");
	seq_printf(m, "%lld %lld %lld\n", (long long)atomic64_read(&kfdsync_held_table),
		   (long long)atomic64_read(&kfdsync_held_proc),
		   (long long)atomic64_read(&kfdsync_held_hook));
	return 0;
}

static int kfdsync_slots_open(struct inode *inode, struct file *file)
{
	return single_open(file, kfdsync_slots_show, NULL);
}

/* Any write starts the longest holds afresh. */
static ssize_t kfdsync_slots_write(struct file *file, const char __user *buf,
				   size_t len, loff_t *ppos)
{
	atomic64_set(&kfdsync_held_table, 0);
	atomic64_set(&kfdsync_held_proc, 0);
	atomic64_set(&kfdsync_held_hook, 0);
	return len;
}

static const struct file_operations kfdsync_slots_fops = {
	.owner = THIS_MODULE,
	.open = kfdsync_slots_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = kfdsync_slots_write,
};

/*
 * Fault injection for tests and benchmarks, where no GPU can be reset:
 * "reset" ends every watched process's slots as a GPU reset that hit every
 * process would (-EIO); "end" ends every slot for good, as amdgpu going
 * away does; "unwatchable" makes every registration from then on take the
 * path of a slot the hooks cannot watch (the event goes to the relay),
 * "watchable" undoes it. Two act on the writer's own amdkfd process, as
 * the hooks of ABI 7.1 would, where no GPU can raise them:
 * "unwritten ID", an interrupt saying the GPU signalled event ID without
 * writing its slot; "terminate", its GPU unplugged.
 */
static int kfdsync_inject_own(const char *cmd)
{
	bool unwritten = !strncmp(cmd, "unwritten ", 10);
	void *kp;
	u32 id;

	if (unwritten && (kstrtou32(cmd + 10, 0, &id) ||
			  id >= KFDSYNC_EVENT_ID_LIMIT))
		return -EINVAL;
	if (!unwritten && !sysfs_streq(cmd, "terminate"))
		return -EINVAL;
	kp = current->mm ? kfdsync_amdkfd_process_get(current->mm) : NULL;
	if (!kp)
		return -ESRCH;
	if (unwritten)
		kfdsync_slot_gpu_unwritten(kp, id);
	else
		kfdsync_slot_process_error(kp, -ENODEV);
	kfdsync_amdkfd_process_put(kp);
	return 0;
}

static ssize_t kfdsync_inject_write(struct file *file, const char __user *buf,
				    size_t len, loff_t *ppos)
{
	char cmd[16] = "";
	int ret = 0;

	if (len >= sizeof(cmd) || copy_from_user(cmd, buf, len))
		return -EINVAL;
	if (sysfs_streq(cmd, "reset"))
		kfdsync_slot_device_reset(NULL);
	else if (sysfs_streq(cmd, "end"))
		kfdsync_slot_all_end(-EIO);
	else if (sysfs_streq(cmd, "unwatchable"))
		WRITE_ONCE(kfdsync_slot_unwatchable, true);
	else if (sysfs_streq(cmd, "watchable"))
		WRITE_ONCE(kfdsync_slot_unwatchable, false);
	else
		ret = kfdsync_inject_own(cmd);
	return ret ? ret : len;
}

static const struct file_operations kfdsync_inject_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kfdsync_inject_write,
};

/**
 * kfdsync_slot_debugfs_init() - <debugfs>/kfdsync/slots and inject
 * @root: kfdsync's debugfs directory
 */
void kfdsync_slot_debugfs_init(struct dentry *root)
{
	debugfs_create_file("slots", 0644, root, NULL, &kfdsync_slots_fops);
	debugfs_create_file("inject", 0200, root, NULL, &kfdsync_inject_fops);
}

/**
 * kfdsync_slot_init() - set up the slot layer
 * @done: drops what subscribers finished under the slot locks
 *
 * Return: 0 or -ENOMEM.
 */
int kfdsync_slot_init(void (*done)(struct list_head *done))
{
	/* A rescuer: a reset's end is a path that ends fences. */
	kfdsync_slot_wq = alloc_workqueue("kfdsync_slot",
					  WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!kfdsync_slot_wq)
		return -ENOMEM;
	kfdsync_slot_done = done;
	return 0;
}

/**
 * kfdsync_slot_exit() - wait for slots and processes to be freed
 *
 * Every subscriber is gone (each context unsubscribed its events).
 */
void kfdsync_slot_exit(void)
{
	/* A reset's end first: it drops process references. */
	flush_work(&kfdsync_end_work);
	/* The grace periods of queue_rcu_work() next, then the works. */
	rcu_barrier();
	destroy_workqueue(kfdsync_slot_wq);
}
