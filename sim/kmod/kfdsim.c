// SPDX-License-Identifier: GPL-2.0-only
/*
 * kfdsim - a simulated GPU for kfdsync's tests: real amdkfd, simulated
 * hardware.
 *
 * Test-only: built and loaded by kfdsync's test suite, never installed.
 */

/**
 * DOC: Overview
 *
 * The test machine runs a real amdkfd (``modprobe amdgpu`` gives a CPU-only
 * /dev/kfd) but has no GPU. kfdsim plays the GPU, so that every test drives
 * amdkfd's own event code - signal page, acknowledge, set_event, waiters -
 * the way hardware does.
 *
 * A process opens /dev/kfdsim and creates queues on it. The open file is
 * bound to the process that opened it (its mm and tgid), like amdkfd's own
 * file: other processes get -EBADF. Each queue has
 *
 * - a ring in kernel memory. KFDSIM_IOC_SUBMIT copies dwords into it, so a
 *   packet cannot change after it was submitted and no user mapping has to
 *   be kept coherent; positions count dwords ever submitted (64-bit, never
 *   wrap);
 * - a kernel thread that parses the ring like a CP: PM4 type-3 packets, in
 *   order, one at a time, reading and writing memory in the owner's address
 *   space (kthread_use_mm() on the owner's mm, taken with mmget_not_zero()
 *   for each access, so an owner that exits stops the queue with -ESRCH);
 * - a completion record (KFDSIM_IOC_QUEUE_STATUS): the position up to which
 *   packets completed, counters and timestamps. A RELEASE_MEM is recorded
 *   complete *before* its interrupt is raised, so a waiter that amdkfd woke
 *   can assert that the packet ran.
 *
 * RELEASE_MEM with an interrupt calls amdkfd's kfd_signal_event_interrupt(
 * pasid, int_ctxid, 32) from the queue's thread (process context, like
 * amdkfd's interrupt worker). The pasid is the owner's, read from amdkfd's
 * sysfs (/sys/class/kfd/kfd/proc/<tgid>/pasid) in the owner's context when
 * the queue is created. Hardware exceptions go through
 * kfd_signal_hw_exception_event(pasid).
 *
 * amdkfd's functions are not exported. kfdsim resolves them when first
 * needed by registering a kprobe on "amdgpu:<function>" and reading its
 * address, and holds a reference on amdgpu.ko for the duration of each call
 * (try_module_get() on the module found through its /sys/module kobject).
 * A module notifier forgets the addresses when amdgpu goes away, so amdgpu
 * can be unloaded and reloaded while kfdsim stays loaded.
 *
 * Errors never WARN: a malformed packet, an unsupported opcode or field, or
 * a fault on the owner's memory stops the queue in %KFDSIM_QUEUE_ERROR with
 * a negative errno and the failing packet's position. Destroying a queue,
 * closing the file and the owner's exit stop the thread, also in the middle
 * of a WAIT_REG_MEM or a delay, and free everything. The only WARN is the
 * one KFDSIM_IOC_DEBUG_WARN asks for.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitfield.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/idr.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/wait.h>

#include "kfdsim_uapi.h"
#include "kfdsync_ksym.h"

static unsigned int max_queues = 64;
module_param(max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues, "Queues per open file (default 64)");

static unsigned int poll_us = 1000;
module_param(poll_us, uint, 0644);
MODULE_PARM_DESC(poll_us,
		 "WAIT_REG_MEM re-reads memory at least every poll_us microseconds (default 1000)");

/* PM4 type-3 packets (field layouts as in amdgpu's soc15d.h). */
#define PM4_TYPE			GENMASK(31, 30)
#define PM4_COUNT			GENMASK(29, 16)
#define PM4_OPCODE			GENMASK(15, 8)
#define PM4_PREDICATE			BIT(0)
#define PM4_MAX_DWORDS			(0x3fff + 2)

#define PM4_NOP				0x10
#define PM4_WRITE_DATA			0x37
#define PM4_WAIT_REG_MEM		0x3c
#define PM4_RELEASE_MEM			0x49
#define PM4_DMA_DATA			0x50

/* A NOP with count 0x3fff is a single dword (ring padding on gfx9). */
#define PM4_NOP_ONE_DWORD_COUNT		0x3fff

#define RELEASE_MEM_DST_SEL		GENMASK(17, 16)
#define RELEASE_MEM_INT_SEL		GENMASK(26, 24)
#define RELEASE_MEM_DATA_SEL		GENMASK(31, 29)

#define WRITE_DATA_DST_SEL		GENMASK(11, 8)
#define WRITE_DATA_ONE_ADDR		BIT(16)

#define WAIT_REG_MEM_FUNCTION		GENMASK(2, 0)
#define WAIT_REG_MEM_MEM_SPACE		GENMASK(5, 4)
#define WAIT_REG_MEM_OPERATION		GENMASK(7, 6)
#define WAIT_REG_MEM_SWAP		GENMASK(1, 0)

#define DMA_DATA_DST_SEL		GENMASK(21, 20)
#define DMA_DATA_SRC_SEL		GENMASK(30, 29)
#define DMA_DATA_BYTE_COUNT		GENMASK(20, 0)
#define DMA_DATA_CMD_SAS		BIT(26)
#define DMA_DATA_CMD_DAS		BIT(27)
#define DMA_DATA_CMD_SAIC		BIT(28)
#define DMA_DATA_CMD_DAIC		BIT(29)

#define KFDSIM_RING_DEFAULT		4096
#define KFDSIM_RING_MIN			1024
#define KFDSIM_RING_MAX			65536

/*
 * Internal result of a packet that was abandoned because the queue was
 * asked to stop, hang or take an exception; never reported to userspace.
 */
#define KFDSIM_ABANDONED		1

/**
 * struct kfdsim_file - an open /dev/kfdsim, bound to the process that opened it
 * @mm:		The owner's mm, mmgrab()ed; immutable.
 * @tgid:	The owner's thread group id; immutable.
 * @lock:	Protects @queues and @nr_queues.
 * @queues:	Queues by id.
 * @nr_queues:	Number of entries in @queues.
 */
struct kfdsim_file {
	struct mm_struct *mm;
	pid_t tgid;
	struct mutex lock;	/* protects queues, nr_queues */
	struct idr queues;
	unsigned int nr_queues;
};

/**
 * struct kfdsim_queue - a simulated compute queue
 * @ref:		References: the file's idr and ioctls in flight.
 * @file:		The owning file; outlives the queue's thread.
 * @pasid:		The owner's amdkfd pasid; immutable.
 * @thread:		The executing thread; immutable after creation.
 * @node:		Entry in kfdsim_queues, under kfdsim_queues_lock.
 * @ring:		@ring_dwords dwords. Dwords in [rptr, wptr) belong to
 *			the thread, the rest to the submitter holding
 *			@submit_lock.
 * @ring_dwords:	Ring size, a power of two; immutable.
 * @pkt:		The thread's copy of the packet it executes.
 * @bounce:		A page for DMA_DATA; the thread's.
 * @submit_lock:	Serialises submitters.
 * @wq:			Woken on progress, ring space, state changes and
 *			memory written by any queue.
 * @lock:		Protects every field below.
 * @wptr:		Position past the last dword submitted.
 * @rptr:		Position past the last packet completed.
 * @need:		Dwords the thread needs past @rptr to go on (the size
 *			of a packet that was only partly submitted).
 * @state:		KFDSIM_QUEUE_*; read locklessly by the thread.
 * @dead:		Set when the queue is destroyed.
 * @error:		0 or the negative errno that stopped the queue.
 * @error_pos:		Position of the packet that failed.
 * @error_header:	Header of the packet that failed.
 * @packets:		Packets completed.
 * @interrupts:		Interrupts raised.
 * @exec_pos:		Position of the packet being executed.
 * @exec_header:	Its header, 0 when none.
 * @last_complete_ns:	Time of the last completion.
 * @last_irq_ns:	Time just before the last interrupt.
 * @last_irq_pos:	Position past the packet that raised it.
 * @exc_requested:	HW exceptions requested by KFDSIM_IOC_INJECT; read
 *			locklessly by the thread.
 * @exc_done:		HW exceptions delivered by the thread.
 * @exc_result:		Result of the last delivery (0 or -ENODEV).
 */
struct kfdsim_queue {
	struct kref ref;
	struct kfdsim_file *file;
	u32 pasid;
	struct task_struct *thread;
	struct list_head node;

	u32 *ring;
	u32 ring_dwords;
	u32 *pkt;
	void *bounce;

	struct mutex submit_lock;	/* serialises submitters */
	wait_queue_head_t wq;

	spinlock_t lock;		/* protects the fields below */
	u64 wptr;
	u64 rptr;
	u64 need;
	u32 state;
	bool dead;
	int error;
	u64 error_pos;
	u32 error_header;
	u64 packets;
	u64 interrupts;
	u64 exec_pos;
	u32 exec_header;
	u64 last_complete_ns;
	u64 last_irq_ns;
	u64 last_irq_pos;
	u32 exc_requested;
	u32 exc_done;
	int exc_result;
};

/* All queues, so that a memory write by one wakes WAIT_REG_MEM in others. */
static LIST_HEAD(kfdsim_queues);
static DEFINE_SPINLOCK(kfdsim_queues_lock);
static atomic_t kfdsim_live_queues = ATOMIC_INIT(0);
static atomic_t kfdsim_thread_seq = ATOMIC_INIT(0);
/* Bumped after every memory write of a queue; WAIT_REG_MEM re-reads on it. */
static atomic_t kfdsim_mem_gen = ATOMIC_INIT(0);

/*
 * amdkfd binding.
 *
 * Both functions take the pasid first and have the same signature in
 * 6.1 and 6.12 (newer kernels change them); kfdsim refuses other kernels.
 */
typedef void (*kfdsim_event_interrupt_fn)(u32 pasid, u32 partial_id,
					  u32 valid_id_bits);
typedef void (*kfdsim_hw_exception_fn)(u32 pasid);

#define KFDSIM_KFD_MODULE		"amdgpu"

/* Protects kfdsim_kfd; held only to take a module reference or resolve. */
static DEFINE_MUTEX(kfdsim_kfd_lock);

/**
 * struct kfdsim_kfd - resolved amdkfd functions, under kfdsim_kfd_lock
 * @mod:		amdgpu.ko while resolved, NULL otherwise. Valid while
 *			set: the module notifier clears it before amdgpu's
 *			struct module is freed.
 * @event_interrupt:	kfd_signal_event_interrupt().
 * @hw_exception:	kfd_signal_hw_exception_event().
 */
struct kfdsim_kfd {
	struct module *mod;
	kfdsim_event_interrupt_fn event_interrupt;
	kfdsim_hw_exception_fn hw_exception;
};

static struct kfdsim_kfd kfdsim_kfd;

/*
 * Whether the running kernel's amdkfd has the signatures kfdsim calls: those
 * of 6.1 to 6.12 (Debian's two kernels). Newer kernels change them.
 */
static bool kfdsim_kfd_abi_known(void)
{
	unsigned int major, minor;

	if (sscanf(init_utsname()->release, "%u.%u", &major, &minor) != 2)
		return false;
	return major == 6 && minor >= 1 && minor <= 12;
}

/* Resolve amdkfd's functions; called with kfdsim_kfd_lock held. */
static int kfdsim_kfd_resolve(void)
{
	unsigned long irq, exc;
	struct module *mod;

	lockdep_assert_held(&kfdsim_kfd_lock);

	if (!kfdsim_kfd_abi_known())
		return -EOPNOTSUPP;

	mod = kfdsync_ksym_module_get(KFDSIM_KFD_MODULE);
	if (!mod)
		return -ENODEV;
	irq = (unsigned long)kfdsync_ksym_lookup(KFDSIM_KFD_MODULE,
						 "kfd_signal_event_interrupt",
						 NULL);
	exc = (unsigned long)kfdsync_ksym_lookup(KFDSIM_KFD_MODULE,
						 "kfd_signal_hw_exception_event",
						 NULL);
	if (!irq || !exc) {
		module_put(mod);
		return -ENODEV;
	}
	kfdsim_kfd.event_interrupt = (kfdsim_event_interrupt_fn)irq;
	kfdsim_kfd.hw_exception = (kfdsim_hw_exception_fn)exc;
	kfdsim_kfd.mod = mod;
	module_put(mod);
	return 0;
}

/*
 * Take a reference on amdgpu and copy the resolved functions to @kfd;
 * release with kfdsim_kfd_put().
 */
static int kfdsim_kfd_get(struct kfdsim_kfd *kfd)
{
	int ret = 0;

	mutex_lock(&kfdsim_kfd_lock);
	if (!kfdsim_kfd.mod)
		ret = kfdsim_kfd_resolve();
	if (!ret && !try_module_get(kfdsim_kfd.mod))
		ret = -ENODEV;	/* amdgpu is going away */
	if (!ret)
		*kfd = kfdsim_kfd;
	mutex_unlock(&kfdsim_kfd_lock);
	return ret;
}

static void kfdsim_kfd_put(struct kfdsim_kfd *kfd)
{
	module_put(kfd->mod);
}

static int kfdsim_kfd_module_notify(struct notifier_block *nb,
				    unsigned long action, void *data)
{
	struct module *mod = data;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&kfdsim_kfd_lock);
	if (kfdsim_kfd.mod == mod)
		memset(&kfdsim_kfd, 0, sizeof(kfdsim_kfd));
	mutex_unlock(&kfdsim_kfd_lock);
	return NOTIFY_DONE;
}

static struct notifier_block kfdsim_kfd_module_nb = {
	.notifier_call = kfdsim_kfd_module_notify,
};

static int kfdsim_kfd_signal_event_interrupt(u32 pasid, u32 ctxid)
{
	struct kfdsim_kfd kfd;
	int ret;

	ret = kfdsim_kfd_get(&kfd);
	if (ret)
		return -ENODEV;
	kfd.event_interrupt(pasid, ctxid, 32);
	kfdsim_kfd_put(&kfd);
	return 0;
}

static int kfdsim_kfd_signal_hw_exception(u32 pasid)
{
	struct kfdsim_kfd kfd;
	int ret;

	ret = kfdsim_kfd_get(&kfd);
	if (ret)
		return -ENODEV;
	kfd.hw_exception(pasid);
	kfdsim_kfd_put(&kfd);
	return 0;
}

/* The caller's pasid, from amdkfd's sysfs; in the caller's context. */
static int kfdsim_read_pasid(pid_t tgid, u32 *pasid)
{
	char path[64], buf[16];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/kfd/kfd/proc/%d/pasid", tgid);
	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return -ESRCH;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	if (kstrtou32(buf, 10, pasid) || !*pasid)
		return -ESRCH;
	return 0;
}

/* Queues. */

static void kfdsim_queue_free(struct kref *ref)
{
	struct kfdsim_queue *q = container_of(ref, struct kfdsim_queue, ref);

	kvfree(q->ring);
	kvfree(q->pkt);
	kfree(q->bounce);
	kfree(q);
	atomic_dec(&kfdsim_live_queues);
}

static void kfdsim_queue_put(struct kfdsim_queue *q)
{
	kref_put(&q->ref, kfdsim_queue_free);
}

/* Wake every queue's thread and waiters: memory changed. */
static void kfdsim_mem_kick(void)
{
	struct kfdsim_queue *q;

	atomic_inc(&kfdsim_mem_gen);
	spin_lock(&kfdsim_queues_lock);
	list_for_each_entry(q, &kfdsim_queues, node)
		wake_up_all(&q->wq);
	spin_unlock(&kfdsim_queues_lock);
}

/*
 * Whether the thread must abandon the packet it executes: the queue is
 * being destroyed, hung, stopped, or has an exception to deliver.
 */
static bool kfdsim_queue_abandon(struct kfdsim_queue *q)
{
	return kthread_should_stop() ||
	       READ_ONCE(q->state) != KFDSIM_QUEUE_RUNNING ||
	       READ_ONCE(q->exc_requested) != READ_ONCE(q->exc_done);
}

static bool kfdsim_queue_has_work(struct kfdsim_queue *q)
{
	bool ret;

	if (kthread_should_stop())
		return true;
	spin_lock(&q->lock);
	ret = q->exc_requested != q->exc_done ||
	      (q->state == KFDSIM_QUEUE_RUNNING && q->wptr - q->rptr >= q->need);
	spin_unlock(&q->lock);
	return ret;
}

/* Stop the queue with @err at the packet at @pos. */
static void kfdsim_queue_fail(struct kfdsim_queue *q, u64 pos, u32 header,
			      int err)
{
	spin_lock(&q->lock);
	if (q->state != KFDSIM_QUEUE_ERROR) {
		q->state = KFDSIM_QUEUE_ERROR;
		q->error = err;
		q->error_pos = pos;
		q->error_header = header;
	}
	q->exec_header = 0;
	spin_unlock(&q->lock);
	wake_up_all(&q->wq);
	pr_debug("queue of pid %d stopped at %llu (header 0x%08x): %d\n",
		 q->file->tgid, pos, header, err);
}

/* Enter the owner's address space; fails once the owner's mm is gone. */
static int kfdsim_mm_enter(struct kfdsim_queue *q)
{
	struct mm_struct *mm = q->file->mm;

	if (!mmget_not_zero(mm))
		return -ESRCH;
	kthread_use_mm(mm);
	return 0;
}

static void kfdsim_mm_leave(struct kfdsim_queue *q)
{
	struct mm_struct *mm = q->file->mm;

	kthread_unuse_mm(mm);
	mmput(mm);
}

/*
 * Sleep up to @ns, until a queue writes memory (after @gen) or until the
 * queue must abandon its packet.
 */
static void kfdsim_queue_sleep(struct kfdsim_queue *q, int gen, u64 ns)
{
	wait_event_interruptible_hrtimeout(q->wq,
					   kfdsim_queue_abandon(q) ||
					   atomic_read(&kfdsim_mem_gen) != gen,
					   ns_to_ktime(ns));
}

static int kfdsim_exec_delay(struct kfdsim_queue *q, u32 us)
{
	ktime_t end = ktime_add_us(ktime_get(), us);

	for (;;) {
		s64 left = ktime_to_ns(ktime_sub(end, ktime_get()));

		if (kfdsim_queue_abandon(q))
			return KFDSIM_ABANDONED;
		if (left <= 0)
			return 0;
		wait_event_interruptible_hrtimeout(q->wq,
						   kfdsim_queue_abandon(q),
						   ns_to_ktime(left));
	}
}

/* Raise a HW exception for the owner; the queue stops with -EIO first. */
static int kfdsim_queue_raise_exception(struct kfdsim_queue *q, u64 pos,
					u32 header)
{
	kfdsim_queue_fail(q, pos, header, -EIO);
	return kfdsim_kfd_signal_hw_exception(q->pasid);
}

static int kfdsim_exec_nop(struct kfdsim_queue *q, const u32 *pkt, u32 len,
			   u64 pos)
{
	if (len < 3 || pkt[1] != KFDSIM_NOP_MAGIC)
		return 0;

	switch (pkt[2]) {
	case KFDSIM_CMD_DELAY:
		if (len != 4 || pkt[3] > KFDSIM_DELAY_MAX_US)
			return -EINVAL;
		return kfdsim_exec_delay(q, pkt[3]);
	case KFDSIM_CMD_HANG:
		if (len != 3)
			return -EINVAL;
		spin_lock(&q->lock);
		if (q->state == KFDSIM_QUEUE_RUNNING)
			q->state = KFDSIM_QUEUE_HUNG;
		spin_unlock(&q->lock);
		return KFDSIM_ABANDONED;
	case KFDSIM_CMD_HW_EXCEPTION:
		if (len != 3)
			return -EINVAL;
		kfdsim_queue_raise_exception(q, pos, pkt[0]);
		return KFDSIM_ABANDONED;
	default:
		return -EINVAL;
	}
}

static int kfdsim_exec_release_mem(struct kfdsim_queue *q, const u32 *pkt,
				   u32 len, bool *irq, bool *wrote)
{
	u32 dst_sel = FIELD_GET(RELEASE_MEM_DST_SEL, pkt[2]);
	u32 int_sel = FIELD_GET(RELEASE_MEM_INT_SEL, pkt[2]);
	u32 data_sel = FIELD_GET(RELEASE_MEM_DATA_SEL, pkt[2]);
	u64 addr, data;
	int ret;

	if (len != 8)
		return -EINVAL;
	if (dst_sel > 1)	/* 0 memory controller, 1 TC L2 */
		return -EOPNOTSUPP;

	switch (int_sel) {
	case 0:			/* none */
		break;
	case 1:			/* interrupt only */
	case 2:			/* interrupt after write confirm */
	case 4:			/* unconditionally send int_ctxid */
		*irq = true;
		break;
	case 7:
		return -EINVAL;
	default:		/* data only, conditional interrupts */
		return -EOPNOTSUPP;
	}

	addr = pkt[3] | (u64)pkt[4] << 32;
	data = pkt[5] | (u64)pkt[6] << 32;
	switch (data_sel) {
	case 0:			/* discard */
		return 0;
	case 1:			/* low 32 bits */
		if (!IS_ALIGNED(addr, 4))
			return -EINVAL;
		break;
	case 2:			/* 64 bits */
		if (!IS_ALIGNED(addr, 8))
			return -EINVAL;
		break;
	case 3:			/* GPU clock counter */
	case 4:			/* system clock counter */
		if (!IS_ALIGNED(addr, 8))
			return -EINVAL;
		data = ktime_get_ns();
		break;
	case 5:			/* GDS */
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}

	ret = kfdsim_mm_enter(q);
	if (ret)
		return ret;
	if (data_sel == 1)
		ret = put_user((u32)data, (u32 __user *)u64_to_user_ptr(addr));
	else
		ret = put_user(data, (u64 __user *)u64_to_user_ptr(addr));
	kfdsim_mm_leave(q);
	if (ret)
		return -EFAULT;
	*wrote = true;
	return 0;
}

static int kfdsim_exec_write_data(struct kfdsim_queue *q, const u32 *pkt,
				  u32 len, bool *wrote)
{
	u32 dst_sel = FIELD_GET(WRITE_DATA_DST_SEL, pkt[1]);
	u32 __user *dst;
	u64 addr;
	u32 i, n;
	int ret;

	if (len < 5)
		return -EINVAL;
	/* 1 memory (sync), 2 TC L2, 5 memory (async); not registers, GDS */
	if (dst_sel != 1 && dst_sel != 2 && dst_sel != 5)
		return -EOPNOTSUPP;
	addr = pkt[2] | (u64)pkt[3] << 32;
	if (!IS_ALIGNED(addr, 4))
		return -EINVAL;
	dst = u64_to_user_ptr(addr);
	n = len - 4;

	ret = kfdsim_mm_enter(q);
	if (ret)
		return ret;
	if (pkt[1] & WRITE_DATA_ONE_ADDR) {
		for (i = 0; i < n && !ret; i++)
			ret = put_user(pkt[4 + i], dst);
	} else if (copy_to_user(dst, &pkt[4], n * sizeof(u32))) {
		ret = -EFAULT;
	}
	kfdsim_mm_leave(q);
	if (ret)
		return -EFAULT;
	*wrote = true;
	return 0;
}

static int kfdsim_exec_dma_data(struct kfdsim_queue *q, const u32 *pkt,
				u32 len, bool *wrote)
{
	u32 dst_sel = FIELD_GET(DMA_DATA_DST_SEL, pkt[1]);
	u32 src_sel = FIELD_GET(DMA_DATA_SRC_SEL, pkt[1]);
	u32 count = FIELD_GET(DMA_DATA_BYTE_COUNT, pkt[6]);
	u64 src = pkt[2] | (u64)pkt[3] << 32;
	u64 dst = pkt[4] | (u64)pkt[5] << 32;
	bool fill = src_sel == 2;
	u32 done, chunk, i;
	int ret;

	if (len != 7)
		return -EINVAL;
	/* dst 0 (DAS) or 3 (L2) is memory; src 0 or 3 memory, 2 data */
	if ((dst_sel != 0 && dst_sel != 3) ||
	    (src_sel != 0 && src_sel != 2 && src_sel != 3))
		return -EOPNOTSUPP;
	if (pkt[6] & (DMA_DATA_CMD_DAS | DMA_DATA_CMD_DAIC) ||
	    (!fill && pkt[6] & (DMA_DATA_CMD_SAS | DMA_DATA_CMD_SAIC)))
		return -EOPNOTSUPP;
	if (fill && (!IS_ALIGNED(dst, 4) || !IS_ALIGNED(count, 4)))
		return -EINVAL;
	if (!count)
		return 0;

	if (fill)
		for (i = 0; i < PAGE_SIZE / sizeof(u32); i++)
			((u32 *)q->bounce)[i] = pkt[2];

	ret = kfdsim_mm_enter(q);
	if (ret)
		return ret;
	for (done = 0; done < count && !ret; done += chunk) {
		chunk = min_t(u32, count - done, PAGE_SIZE);
		if (kfdsim_queue_abandon(q)) {
			ret = KFDSIM_ABANDONED;
			break;
		}
		if (!fill && copy_from_user(q->bounce,
					    u64_to_user_ptr(src + done), chunk))
			ret = -EFAULT;
		else if (copy_to_user(u64_to_user_ptr(dst + done), q->bounce,
				      chunk))
			ret = -EFAULT;
		*wrote = true;
		cond_resched();
	}
	kfdsim_mm_leave(q);
	return ret;
}

static bool kfdsim_compare(u32 function, u32 value, u32 ref)
{
	switch (function) {
	case 0:
		return true;
	case 1:
		return value < ref;
	case 2:
		return value <= ref;
	case 3:
		return value == ref;
	case 4:
		return value != ref;
	case 5:
		return value >= ref;
	default:
		return value > ref;
	}
}

static int kfdsim_exec_wait_reg_mem(struct kfdsim_queue *q, const u32 *pkt,
				    u32 len)
{
	u32 function = FIELD_GET(WAIT_REG_MEM_FUNCTION, pkt[1]);
	u32 mem_space = FIELD_GET(WAIT_REG_MEM_MEM_SPACE, pkt[1]);
	u32 operation = FIELD_GET(WAIT_REG_MEM_OPERATION, pkt[1]);
	u32 ref, mask, value;
	u32 __user *addr;
	int ret;

	if (len != 7 || function == 7 || mem_space > 1 || operation > 1)
		return -EINVAL;
	if (mem_space != 1 || operation != 0)	/* registers, write-wait */
		return -EOPNOTSUPP;
	if (pkt[2] & WAIT_REG_MEM_SWAP)
		return -EOPNOTSUPP;
	addr = u64_to_user_ptr(pkt[2] | (u64)pkt[3] << 32);
	ref = pkt[4];
	mask = pkt[5];

	for (;;) {
		int gen = atomic_read(&kfdsim_mem_gen);

		ret = kfdsim_mm_enter(q);
		if (ret)
			return ret;
		ret = get_user(value, addr);
		kfdsim_mm_leave(q);
		if (ret)
			return -EFAULT;
		if (kfdsim_compare(function, value & mask, ref))
			return 0;
		if (kfdsim_queue_abandon(q))
			return KFDSIM_ABANDONED;
		kfdsim_queue_sleep(q, gen, (u64)max(READ_ONCE(poll_us), 10U) *
				   NSEC_PER_USEC);
	}
}

/* Execute the packet in q->pkt; 0, KFDSIM_ABANDONED or -errno. */
static int kfdsim_exec(struct kfdsim_queue *q, u32 len, u64 pos, bool *irq,
		       bool *wrote)
{
	const u32 *pkt = q->pkt;

	if (pkt[0] & PM4_PREDICATE)
		return -EOPNOTSUPP;

	switch (FIELD_GET(PM4_OPCODE, pkt[0])) {
	case PM4_NOP:
		return kfdsim_exec_nop(q, pkt, len, pos);
	case PM4_RELEASE_MEM:
		return kfdsim_exec_release_mem(q, pkt, len, irq, wrote);
	case PM4_WAIT_REG_MEM:
		return kfdsim_exec_wait_reg_mem(q, pkt, len);
	case PM4_WRITE_DATA:
		return kfdsim_exec_write_data(q, pkt, len, wrote);
	case PM4_DMA_DATA:
		return kfdsim_exec_dma_data(q, pkt, len, wrote);
	default:
		return -EOPNOTSUPP;
	}
}

/* Parse, execute and complete the packet at rptr. */
static void kfdsim_queue_step(struct kfdsim_queue *q)
{
	u32 mask = q->ring_dwords - 1;
	bool irq = false, wrote = false;
	u32 header, len, first, i;
	u64 pos, avail;
	int ret;

	spin_lock(&q->lock);
	pos = q->rptr;
	avail = q->wptr - pos;
	spin_unlock(&q->lock);

	header = q->ring[pos & mask];
	if (FIELD_GET(PM4_TYPE, header) != 3) {
		kfdsim_queue_fail(q, pos, header, -EINVAL);
		return;
	}
	len = FIELD_GET(PM4_COUNT, header) + 2;
	if (FIELD_GET(PM4_OPCODE, header) == PM4_NOP &&
	    FIELD_GET(PM4_COUNT, header) == PM4_NOP_ONE_DWORD_COUNT)
		len = 1;
	if (len > q->ring_dwords) {
		kfdsim_queue_fail(q, pos, header, -EINVAL);
		return;
	}
	if (len > avail) {
		/* Partly submitted: wait for the rest, like a CP. */
		spin_lock(&q->lock);
		q->need = len;
		spin_unlock(&q->lock);
		return;
	}

	first = min_t(u32, len, q->ring_dwords - (pos & mask));
	memcpy(q->pkt, &q->ring[pos & mask], first * sizeof(u32));
	for (i = first; i < len; i++)
		q->pkt[i] = q->ring[(pos + i) & mask];

	spin_lock(&q->lock);
	q->need = 1;
	q->exec_pos = pos;
	q->exec_header = header;
	spin_unlock(&q->lock);

	ret = kfdsim_exec(q, len, pos, &irq, &wrote);
	if (wrote)
		kfdsim_mem_kick();
	if (ret < 0) {
		kfdsim_queue_fail(q, pos, header, ret);
		return;
	}

	spin_lock(&q->lock);
	if (ret == KFDSIM_ABANDONED || q->state != KFDSIM_QUEUE_RUNNING) {
		/*
		 * Hung, stopped or interrupted: the packet never completes;
		 * exec_header keeps showing it.
		 */
		spin_unlock(&q->lock);
		wake_up_all(&q->wq);
		return;
	}
	q->exec_header = 0;
	q->rptr = pos + len;
	q->packets++;
	q->last_complete_ns = ktime_get_ns();
	if (irq) {
		q->interrupts++;
		q->last_irq_ns = ktime_get_ns();
		q->last_irq_pos = q->rptr;
	}
	spin_unlock(&q->lock);
	wake_up_all(&q->wq);

	/* Complete first, then interrupt: a woken waiter sees the record. */
	if (irq) {
		ret = kfdsim_kfd_signal_event_interrupt(q->pasid, q->pkt[7]);
		if (ret)
			kfdsim_queue_fail(q, pos, header, ret);
	}
}

static void kfdsim_queue_deliver_exception(struct kfdsim_queue *q)
{
	u32 ticket;
	u64 pos;
	u32 header;
	int ret;

	spin_lock(&q->lock);
	ticket = q->exc_requested;
	pos = q->rptr;
	header = q->exec_header;
	spin_unlock(&q->lock);

	ret = kfdsim_queue_raise_exception(q, pos, header);

	spin_lock(&q->lock);
	q->exc_done = ticket;
	q->exc_result = ret;
	spin_unlock(&q->lock);
	wake_up_all(&q->wq);
}

static int kfdsim_queue_thread(void *data)
{
	struct kfdsim_queue *q = data;

	while (!kthread_should_stop()) {
		wait_event_interruptible(q->wq, kfdsim_queue_has_work(q));
		if (kthread_should_stop())
			break;
		if (READ_ONCE(q->exc_requested) != READ_ONCE(q->exc_done))
			kfdsim_queue_deliver_exception(q);
		else if (READ_ONCE(q->state) == KFDSIM_QUEUE_RUNNING)
			kfdsim_queue_step(q);
	}
	return 0;
}

/* Stop the thread of a queue already removed from its file. */
static void kfdsim_queue_kill(struct kfdsim_queue *q)
{
	spin_lock(&q->lock);
	q->dead = true;
	spin_unlock(&q->lock);
	wake_up_all(&q->wq);
	kthread_stop(q->thread);

	spin_lock(&kfdsim_queues_lock);
	list_del(&q->node);
	spin_unlock(&kfdsim_queues_lock);
	kfdsim_queue_put(q);
}

static struct kfdsim_queue *kfdsim_queue_lookup(struct kfdsim_file *kf, u32 id)
{
	struct kfdsim_queue *q;

	mutex_lock(&kf->lock);
	q = idr_find(&kf->queues, id);
	if (q)
		kref_get(&q->ref);
	mutex_unlock(&kf->lock);
	return q;
}

/* ioctls */

static int kfdsim_ioctl_info(struct kfdsim_file *kf, void __user *uarg)
{
	struct kfdsim_info args;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags || args.pad)
		return -EINVAL;

	memset(&args, 0, sizeof(args));
	args.abi_version = KFDSIM_ABI_VERSION;
	args.live_queues = atomic_read(&kfdsim_live_queues);
	args.max_queues = max_queues;
	args.poll_us = READ_ONCE(poll_us);
	mutex_lock(&kfdsim_kfd_lock);
	args.amdkfd_bound = !!kfdsim_kfd.mod;
	mutex_unlock(&kfdsim_kfd_lock);

	return copy_to_user(uarg, &args, sizeof(args)) ? -EFAULT : 0;
}

static int kfdsim_ioctl_queue_create(struct kfdsim_file *kf, void __user *uarg)
{
	struct kfdsim_queue_create args;
	struct kfdsim_kfd kfd;
	struct kfdsim_queue *q;
	u32 pasid, ring_dwords;
	int ret, id;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;
	ring_dwords = args.ring_dwords ?: KFDSIM_RING_DEFAULT;
	if (!is_power_of_2(ring_dwords) || ring_dwords < KFDSIM_RING_MIN ||
	    ring_dwords > KFDSIM_RING_MAX)
		return -EINVAL;

	ret = kfdsim_read_pasid(kf->tgid, &pasid);
	if (ret)
		return ret;
	ret = kfdsim_kfd_get(&kfd);
	if (ret)
		return ret == -EOPNOTSUPP ? ret : -ENODEV;
	kfdsim_kfd_put(&kfd);

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	atomic_inc(&kfdsim_live_queues);
	kref_init(&q->ref);
	INIT_LIST_HEAD(&q->node);
	q->file = kf;
	q->pasid = pasid;
	q->ring_dwords = ring_dwords;
	q->need = 1;
	mutex_init(&q->submit_lock);
	init_waitqueue_head(&q->wq);
	spin_lock_init(&q->lock);
	q->ring = kvcalloc(ring_dwords, sizeof(u32), GFP_KERNEL);
	q->pkt = kvcalloc(min_t(u32, ring_dwords, PM4_MAX_DWORDS), sizeof(u32),
			  GFP_KERNEL);
	q->bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!q->ring || !q->pkt || !q->bounce) {
		ret = -ENOMEM;
		goto err_free;
	}

	q->thread = kthread_create(kfdsim_queue_thread, q, "kfdsim/%d",
				   atomic_inc_return(&kfdsim_thread_seq));
	if (IS_ERR(q->thread)) {
		ret = PTR_ERR(q->thread);
		goto err_free;
	}

	mutex_lock(&kf->lock);
	if (kf->nr_queues >= max_queues) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	id = idr_alloc(&kf->queues, q, 1, 0, GFP_KERNEL);
	if (id < 0) {
		ret = id;
		goto err_unlock;
	}
	kf->nr_queues++;
	spin_lock(&kfdsim_queues_lock);
	list_add_tail(&q->node, &kfdsim_queues);
	spin_unlock(&kfdsim_queues_lock);
	wake_up_process(q->thread);
	mutex_unlock(&kf->lock);

	args.queue_id = id;
	args.pasid = pasid;
	if (copy_to_user(uarg, &args, sizeof(args)))
		return -EFAULT;	/* the queue exists; destroyed at close */
	return 0;

err_unlock:
	mutex_unlock(&kf->lock);
	kthread_stop(q->thread);
err_free:
	kfdsim_queue_put(q);
	return ret;
}

static int kfdsim_ioctl_queue_destroy(struct kfdsim_file *kf,
				      void __user *uarg)
{
	struct kfdsim_queue_destroy args;
	struct kfdsim_queue *q;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;

	mutex_lock(&kf->lock);
	q = idr_remove(&kf->queues, args.queue_id);
	if (q)
		kf->nr_queues--;
	mutex_unlock(&kf->lock);
	if (!q)
		return -ENOENT;

	kfdsim_queue_kill(q);
	return 0;
}

static bool kfdsim_queue_has_space(struct kfdsim_queue *q, u32 count)
{
	return READ_ONCE(q->dead) ||
	       READ_ONCE(q->state) == KFDSIM_QUEUE_ERROR ||
	       q->ring_dwords - (READ_ONCE(q->wptr) - READ_ONCE(q->rptr)) >=
	       count;
}

/* Wait for @count dwords of ring space; called with submit_lock held. */
static int kfdsim_queue_wait_space(struct kfdsim_queue *q, u32 count,
				   bool nonblock)
{
	int ret;

	lockdep_assert_held(&q->submit_lock);

	for (;;) {
		spin_lock(&q->lock);
		if (q->dead)
			ret = -ENOENT;
		else if (q->state == KFDSIM_QUEUE_ERROR)
			ret = -EIO;
		else if (q->ring_dwords - (q->wptr - q->rptr) >= count)
			ret = 0;
		else
			ret = -EAGAIN;
		spin_unlock(&q->lock);
		if (ret != -EAGAIN || nonblock)
			return ret;

		ret = wait_event_interruptible(q->wq,
					       kfdsim_queue_has_space(q, count));
		if (ret)
			return ret;
	}
}

static int kfdsim_ioctl_submit(struct kfdsim_file *kf, void __user *uarg)
{
	const u32 __user *src;
	struct kfdsim_submit args;
	struct kfdsim_queue *q;
	u32 mask, first;
	u64 wptr;
	int ret;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags & ~KFDSIM_SUBMIT_NONBLOCK || args.pad)
		return -EINVAL;

	q = kfdsim_queue_lookup(kf, args.queue_id);
	if (!q)
		return -ENOENT;
	if (!args.count_dwords || args.count_dwords > q->ring_dwords) {
		ret = -EINVAL;
		goto out_put;
	}

	ret = mutex_lock_interruptible(&q->submit_lock);
	if (ret)
		goto out_put;
	ret = kfdsim_queue_wait_space(q, args.count_dwords,
				      args.flags & KFDSIM_SUBMIT_NONBLOCK);
	if (ret)
		goto out_unlock;

	/* The free part of the ring is ours until wptr moves. */
	spin_lock(&q->lock);
	wptr = q->wptr;
	spin_unlock(&q->lock);
	mask = q->ring_dwords - 1;
	first = min_t(u32, args.count_dwords, q->ring_dwords - (wptr & mask));
	src = u64_to_user_ptr(args.dwords);
	if (copy_from_user(&q->ring[wptr & mask], src, first * sizeof(u32)) ||
	    copy_from_user(q->ring, src + first,
			   (args.count_dwords - first) * sizeof(u32))) {
		ret = -EFAULT;
		goto out_unlock;
	}

	spin_lock(&q->lock);
	q->wptr = wptr + args.count_dwords;
	args.end_pos = q->wptr;
	spin_unlock(&q->lock);
	wake_up_all(&q->wq);

	if (copy_to_user(uarg, &args, sizeof(args)))
		ret = -EFAULT;	/* submitted all the same */
out_unlock:
	mutex_unlock(&q->submit_lock);
out_put:
	kfdsim_queue_put(q);
	return ret;
}

static int kfdsim_ioctl_queue_status(struct kfdsim_file *kf, void __user *uarg)
{
	struct kfdsim_queue_status args;
	struct kfdsim_queue *q;
	u32 id;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;

	id = args.queue_id;
	q = kfdsim_queue_lookup(kf, id);
	if (!q)
		return -ENOENT;

	memset(&args, 0, sizeof(args));
	args.queue_id = id;
	spin_lock(&q->lock);
	args.state = q->state;
	args.error = q->error;
	args.submitted = q->wptr;
	args.completed = q->rptr;
	args.packets = q->packets;
	args.interrupts = q->interrupts;
	args.exec_pos = q->exec_pos;
	args.exec_header = q->exec_header;
	args.error_header = q->error_header;
	args.error_pos = q->error_pos;
	args.last_complete_ns = q->last_complete_ns;
	args.last_irq_ns = q->last_irq_ns;
	args.last_irq_pos = q->last_irq_pos;
	spin_unlock(&q->lock);
	kfdsim_queue_put(q);

	return copy_to_user(uarg, &args, sizeof(args)) ? -EFAULT : 0;
}

/* 0 reached, -EIO stopped with an error, -ENOENT destroyed, 1 not yet. */
static int kfdsim_queue_reached(struct kfdsim_queue *q, u64 pos)
{
	int ret = 1;

	spin_lock(&q->lock);
	if (q->rptr >= pos)
		ret = 0;
	else if (q->state == KFDSIM_QUEUE_ERROR)
		ret = -EIO;
	else if (q->dead)
		ret = -ENOENT;
	spin_unlock(&q->lock);
	return ret;
}

static int kfdsim_ioctl_queue_wait(struct kfdsim_file *kf, void __user *uarg)
{
	struct kfdsim_queue_wait args;
	struct kfdsim_queue *q;
	int ret;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;

	q = kfdsim_queue_lookup(kf, args.queue_id);
	if (!q)
		return -ENOENT;

	spin_lock(&q->lock);
	ret = args.pos > q->wptr ? -EINVAL : 0;
	spin_unlock(&q->lock);

	while (!ret) {
		s64 now = ktime_get_ns();
		s64 left = args.timeout_ns > now ? args.timeout_ns - now : 0;

		ret = kfdsim_queue_reached(q, args.pos);
		if (ret <= 0)
			break;
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = wait_event_interruptible_hrtimeout(q->wq,
							 kfdsim_queue_reached(q, args.pos) <= 0,
							 ns_to_ktime(left));
		if (ret == -ETIME)
			ret = 0;	/* re-check, then time out */
	}

	kfdsim_queue_put(q);
	return ret;
}

static int kfdsim_ioctl_inject(struct kfdsim_file *kf, void __user *uarg)
{
	struct kfdsim_inject args;
	struct kfdsim_queue *q;
	u32 ticket;
	int ret = 0;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags != KFDSIM_INJECT_HW_EXCEPTION &&
	    args.flags != KFDSIM_INJECT_HANG)
		return -EINVAL;

	q = kfdsim_queue_lookup(kf, args.queue_id);
	if (!q)
		return -ENOENT;

	if (args.flags == KFDSIM_INJECT_HANG) {
		spin_lock(&q->lock);
		if (q->state == KFDSIM_QUEUE_ERROR)
			ret = -EIO;
		else
			q->state = KFDSIM_QUEUE_HUNG;
		spin_unlock(&q->lock);
		wake_up_all(&q->wq);
		goto out_put;
	}

	spin_lock(&q->lock);
	ticket = ++q->exc_requested;
	spin_unlock(&q->lock);
	wake_up_all(&q->wq);
	/* The thread delivers it between packets or abandons the current one. */
	ret = wait_event_killable(q->wq,
				  (s32)(READ_ONCE(q->exc_done) - ticket) >= 0 ||
				  READ_ONCE(q->dead));
	if (!ret) {
		spin_lock(&q->lock);
		ret = (s32)(q->exc_done - ticket) >= 0 ? q->exc_result : -ENOENT;
		spin_unlock(&q->lock);
	}
out_put:
	kfdsim_queue_put(q);
	return ret;
}

static int kfdsim_ioctl_debug_warn(void)
{
	WARN(1, "kfdsim: deliberate warning requested by test\n");
	return 0;
}

static long kfdsim_ioctl(struct file *filp, unsigned int cmd,
			 unsigned long arg)
{
	struct kfdsim_file *kf = filp->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KFDSIM_IOC_INFO:
		return kfdsim_ioctl_info(kf, uarg);
	case KFDSIM_IOC_DEBUG_WARN:
		return kfdsim_ioctl_debug_warn();
	}

	/* Queues execute in the owner's address space: owner only. */
	if (current->mm != kf->mm)
		return -EBADF;

	switch (cmd) {
	case KFDSIM_IOC_QUEUE_CREATE:
		return kfdsim_ioctl_queue_create(kf, uarg);
	case KFDSIM_IOC_QUEUE_DESTROY:
		return kfdsim_ioctl_queue_destroy(kf, uarg);
	case KFDSIM_IOC_SUBMIT:
		return kfdsim_ioctl_submit(kf, uarg);
	case KFDSIM_IOC_QUEUE_STATUS:
		return kfdsim_ioctl_queue_status(kf, uarg);
	case KFDSIM_IOC_QUEUE_WAIT:
		return kfdsim_ioctl_queue_wait(kf, uarg);
	case KFDSIM_IOC_INJECT:
		return kfdsim_ioctl_inject(kf, uarg);
	default:
		return -ENOTTY;
	}
}

static int kfdsim_open(struct inode *inode, struct file *filp)
{
	struct kfdsim_file *kf;

	if (!current->mm)
		return -EINVAL;
	kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	if (!kf)
		return -ENOMEM;
	mmgrab(current->mm);
	kf->mm = current->mm;
	kf->tgid = task_tgid_nr(current);
	mutex_init(&kf->lock);
	idr_init(&kf->queues);
	filp->private_data = kf;
	return 0;
}

static int kfdsim_release(struct inode *inode, struct file *filp)
{
	struct kfdsim_file *kf = filp->private_data;
	struct kfdsim_queue *q;
	int id;

	/* No ioctl runs any more: the file is ours alone. */
	idr_for_each_entry(&kf->queues, q, id)
		kfdsim_queue_kill(q);
	idr_destroy(&kf->queues);
	mmdrop(kf->mm);
	kfree(kf);
	return 0;
}

static const struct file_operations kfdsim_fops = {
	.owner = THIS_MODULE,
	.open = kfdsim_open,
	.release = kfdsim_release,
	.unlocked_ioctl = kfdsim_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice kfdsim_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kfdsim",
	.fops = &kfdsim_fops,
	.mode = 0600,
};

static int __init kfdsim_init(void)
{
	int ret;

	ret = register_module_notifier(&kfdsim_kfd_module_nb);
	if (ret)
		return ret;
	ret = misc_register(&kfdsim_misc);
	if (ret)
		unregister_module_notifier(&kfdsim_kfd_module_nb);
	return ret;
}

static void __exit kfdsim_exit(void)
{
	misc_deregister(&kfdsim_misc);
	unregister_module_notifier(&kfdsim_kfd_module_nb);
}

module_init(kfdsim_init);
module_exit(kfdsim_exit);

MODULE_DESCRIPTION("kfdsync test-only GPU simulator driving amdkfd's event code");
MODULE_LICENSE("GPL");
