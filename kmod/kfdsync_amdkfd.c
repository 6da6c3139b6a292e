// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: access to amdkfd - the gate, the functions kfdsync calls and
 * the hooks it places.
 *
 * amdkfd lives in amdgpu.ko and exports nothing kfdsync needs. kfdsync
 * places kprobes on amdkfd functions and calls a few of amdkfd's global
 * functions, found by the address of a kprobe registered on them. It does
 * either only when the loaded amdgpu passes the gate:
 *
 * - its BTF (/sys/kernel/btf/amdgpu, over the kernel's) has exactly one of
 *   the amdkfd ABIs kfdsync implements (kfdsync_abi.h): the prototypes of
 *   what kfdsync calls and probes, the structure fact it relies on. Not the
 *   kernel's release: an amdgpu built out of tree or backported is judged
 *   by what it is. kfdsync calls through pointers of those very prototypes
 *   (a kCFI kernel checks them);
 * - each function it calls or probes is one symbol of amdgpu's, and no
 *   probed function has a clone (.part, .isra, .constprop: code that
 *   bypasses the probed entry); kfd_set_event() calls set_event() (a
 *   direct call: the CPU hook tells a CPU set by its return address), and
 *   kfd_signal_event_interrupt() calls or jumps to the entry of
 *   set_event_from_interrupt() (how the GPU hook sees an interrupt's
 *   signals) at all three places its sources do (one inlined copy would
 *   let some GPU signals pass unseen);
 * - kprobes work: a probe on a function of kfdsync's own fires (root can
 *   disarm every kprobe through debugfs, or stop ftrace).
 *
 * Otherwise, with hooks=N, or when any hook cannot be attached, kfdsync
 * attaches nothing and calls nothing of amdkfd's: userspace relays signals
 * ("relay mode"), and INFO, STATUS, AMDKFD_ABI, debugfs and the kernel log
 * (once per load of amdgpu) say why. Hooks are all or nothing: a partial
 * set could count a signal in the kernel and again through the relay.
 *
 * amdgpu may be loaded before kfdsync, after it, or come and go while
 * kfdsync is loaded: a module notifier, registered before kfdsync looks for
 * amdgpu, attaches the hooks when amdgpu becomes live and detaches them
 * when it goes; every change happens under kfdsync_amdkfd_lock.
 *
 * The hooks, all plain kprobes at function entry (ftrace-based; kfdsync
 * refuses int3-based probes, whose handlers run in NMI-like context):
 *
 * - gpu_interrupt: set_event_from_interrupt(p, ev), static. amdkfd calls it for
 *   every slot it found set while handling a GPU interrupt, right before it
 *   acknowledges the slot (writes all-ones) and sets the event: every GPU
 *   signal amdkfd delivers passes here, whichever interrupt found it. The
 *   event id is read from @ev: struct kfd_event starts with its u32
 *   event_id (the structure fact, verified per release).
 * - cpu_set: set_event(ev), static, when called from kfd_set_event() (the
 *   return address is inside it): a CPU set of a signal event, in the
 *   owner's address space (the SET_EVENT ioctl, or amdkfd's worker after
 *   kthread_use_mm()), inside the event's lock.
 * - destroy: kfd_event_destroy(p, id); free: kfd_event_free_process(p), the
 *   only place amdkfd frees a process's events and signal page.
 * - hw_exception, vm_fault, poison (by pasid; from ABI 6.16 on vm_fault
 *   by the device data, whose process member is read where the BTF puts
 *   it) and reset (by device).
 * - From ABI 7.1 on: unwritten, kfd_signal_event_interrupt() (only when its
 *   signal_mailbox_updated is false: a GPU signal with no slot write), and
 *   terminate, kfd_signal_process_terminate_event() (GPU unplugged).
 *
 * Each ABI has its own set of hooks (&struct kfdsync_hook.abis); "all"
 * means all of the ABI the gate matched.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/static_call.h>
#include <linux/stringify.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <linux/kfdsync.h>

#include "kfdsync_abi.h"
#include "kfdsync_amdkfd.h"
#include "kfdsync_ksym.h"

/* The module that carries amdkfd. */
#define KFDSYNC_AMDGPU		"amdgpu"

/* Largest BTF blob kfdsync reads (Debian's are 2-6 MB). */
#define KFDSYNC_BTF_MAX		(64 << 20)

/**
 * struct kfdsync_hook - one kprobe on an amdkfd function
 * @name:	Short name, for debugfs.
 * @symbol:	"amdgpu:function", as kprobes resolve it.
 * @bit:	KFDSYNC_HOOK_* bit.
 * @pre:	The handler.
 * @abis:	The amdkfd ABIs that have the hook (enum kfdsync_abi_id bits).
 * @kp:		The kprobe; valid while @attached.
 * @attached:	@kp is registered.
 * @hits:	Times the handler ran since kfdsync was loaded.
 * @missed:	kprobe misses accumulated over earlier attachments.
 *
 * @kp and @attached are protected by kfdsync_amdkfd_lock; @hits is atomic.
 */
struct kfdsync_hook {
	const char *name;
	const char *symbol;
	u32 bit;
	kprobe_pre_handler_t pre;
	u32 abis;
	struct kprobe kp;
	bool attached;
	atomic64_t hits;
	u64 missed;
};

/*
 * The amdkfd functions kfdsync calls (kfdsync_abi_list.h's KFDSYNC_CALL),
 * one static call each, kfdsync_kfd_<member>, typed exactly as the list
 * says amdkfd defines them (the compiler checks, kfdsync_kfd_calls[]):
 *
 * lookup_pasid: kfd_lookup_process_by_pasid(), a referenced process by
 *	pasid (ABIs 6.1, 6.12); lookup_pasid_pdd the same from ABI 6.16 on,
 *	which also stores the device data where the pasid was found, unless
 *	given NULL. lookup_mm: kfd_lookup_process_by_mm(), a referenced
 *	process by address space. unref: kfd_unref_process(), drop such a
 *	reference. set_event: kfd_set_event(), as AMDKFD_IOC_SET_EVENT.
 *	pdd_of_dev: kfd_get_process_device_data(), a process's data for a
 *	device (ABI 6.1); pdd_of_node the same from ABI 6.12 on.
 *
 * A static call is a direct branch, patched into kfdsync's own code, never
 * an indirect one. Where the CPU enforces indirect branch tracking (IBT),
 * an indirect call must land on an ENDBR64, and module load seals (turns
 * into a NOP) the ENDBR64 of every amdkfd function whose address amdgpu
 * never takes: all of these, in Debian's 6.12 and later
 * (docs/notes-ibt.md). Pointed at amdkfd's functions under
 * kfdsync_amdkfd_lock before the hooks are published, and back to
 * returning 0 after they detach; the handlers and the callers below
 * (which hold amdgpu) call them only while the hooks are active.
 */
DEFINE_STATIC_CALL_RET0(kfdsync_kfd_lookup_pasid,
			struct kfd_process *(unsigned int));
DEFINE_STATIC_CALL_RET0(kfdsync_kfd_lookup_pasid_pdd,
			struct kfd_process *(unsigned int,
					     struct kfd_process_device **));
DEFINE_STATIC_CALL_RET0(kfdsync_kfd_lookup_mm,
			struct kfd_process *(const struct mm_struct *));
DEFINE_STATIC_CALL_RET0(kfdsync_kfd_unref, void (struct kfd_process *));
DEFINE_STATIC_CALL_RET0(kfdsync_kfd_set_event,
			int (struct kfd_process *, unsigned int));
DEFINE_STATIC_CALL_RET0(kfdsync_kfd_pdd_of_dev,
			struct kfd_process_device *(struct kfd_dev *,
						    struct kfd_process *));
DEFINE_STATIC_CALL_RET0(kfdsync_kfd_pdd_of_node,
			struct kfd_process_device *(struct kfd_node *,
						    struct kfd_process *));

/**
 * struct kfdsync_kfd_fns - what kfdsync knows of amdkfd's code and data
 * @set_event: The start of kfd_set_event()'s code.
 * @set_event_end: Its end.
 * @abi: The ABI amdgpu has, an enum kfdsync_abi_id.
 * @off: Where the members kfdsync reads are (enum kfdsync_abi_off), as
 *	 the gate read them from amdgpu's BTF.
 *
 * Set under kfdsync_amdkfd_lock before the hooks attach, cleared after
 * they detach; the handlers and the callers below (which hold amdgpu) read
 * it without a lock.
 */
struct kfdsync_kfd_fns {
	unsigned long set_event;
	unsigned long set_event_end;
	int abi;
	u32 off[KFDSYNC_ABI_OFFSETS];
};

static struct kfdsync_kfd_fns kfdsync_kfd;
static const struct kfdsync_amdkfd_ops *kfdsync_ops;

/* Serialises attach and detach: init, exit and the module notifier. */
static DEFINE_MUTEX(kfdsync_amdkfd_lock);
static bool kfdsync_hooks_enabled;
static bool kfdsync_assume_unverified;
static const char *kfdsync_fail_hook;
/* Written under kfdsync_amdkfd_lock, read locklessly. */
static bool kfdsync_amdgpu_live;
static struct module *kfdsync_amdgpu_mod;
static bool kfdsync_hooks_active;
static u32 kfdsync_hooks_mask;
static u32 kfdsync_relay_reason;
static char kfdsync_relay_detail[64];
/* The gate's verdict on the amdgpu loaded, and what it took; under kfdsync_amdkfd_lock. */
static struct kfdsync_abi_verdict kfdsync_verdict;
static u64 kfdsync_verdict_ns;

static void kfdsync_hook_hit(struct kfdsync_hook *hook)
{
	atomic64_inc(&hook->hits);
}

/* In KFDSYNC_HOOK_* bit order. */
enum {
	KFDSYNC_HOOK_IDX_ACK,
	KFDSYNC_HOOK_IDX_CPU,
	KFDSYNC_HOOK_IDX_HW_EXCEPTION,
	KFDSYNC_HOOK_IDX_VM_FAULT,
	KFDSYNC_HOOK_IDX_RESET,
	KFDSYNC_HOOK_IDX_POISON,
	KFDSYNC_HOOK_IDX_DESTROY,
	KFDSYNC_HOOK_IDX_FREE,
	KFDSYNC_HOOK_IDX_UNWRITTEN,
	KFDSYNC_HOOK_IDX_TERMINATE,
	KFDSYNC_HOOK_COUNT,
};

static struct kfdsync_hook kfdsync_hooks[KFDSYNC_HOOK_COUNT];

/* set_event_from_interrupt(struct kfd_process *p, struct kfd_event *ev) */
static int kfdsync_hook_ack(struct kprobe *kp, struct pt_regs *regs)
{
	const void *p = (const void *)regs_get_kernel_argument(regs, 0);
	const u32 *ev = (const u32 *)regs_get_kernel_argument(regs, 1);

	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_ACK]);
	/* NULL: an id amdkfd does not know; it then acknowledges nothing. */
	if (ev)
		kfdsync_ops->gpu_ack(p, READ_ONCE(*ev));
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_ack);

/* set_event(struct kfd_event *ev), counted when kfd_set_event() calls it */
static int kfdsync_hook_cpu(struct kprobe *kp, struct pt_regs *regs)
{
	const u32 *ev = (const u32 *)regs_get_kernel_argument(regs, 0);
	unsigned long caller = regs_get_kernel_stack_nth(regs, 0);

	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_CPU]);
	if (caller > kfdsync_kfd.set_event &&
	    caller < kfdsync_kfd.set_event_end &&
	    current->mm)
		kfdsync_ops->cpu_set(current->mm, READ_ONCE(*ev));
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_cpu);

/* int kfd_event_destroy(struct kfd_process *p, u32 event_id) */
static int kfdsync_hook_destroy(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_DESTROY]);
	kfdsync_ops->event_destroy((const void *)regs_get_kernel_argument(regs, 0),
				   regs_get_kernel_argument(regs, 1));
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_destroy);

/* void kfd_event_free_process(struct kfd_process *p) */
static int kfdsync_hook_free(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_FREE]);
	kfdsync_ops->process_free((const void *)regs_get_kernel_argument(regs, 0));
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_free);

/*
 * The process of @pasid, referenced (drop with kfdsync_kfd_unref), or
 * NULL. From ABI 6.16 on amdkfd would also store the device data the
 * pasid was found in: given NULL, it stores nothing.
 */
static struct kfd_process *kfdsync_lookup_pasid(u32 pasid)
{
	if (kfdsync_abi_in(KFDSYNC_FROM(6_16), kfdsync_kfd.abi))
		return static_call(kfdsync_kfd_lookup_pasid_pdd)(pasid, NULL);
	return static_call(kfdsync_kfd_lookup_pasid)(pasid);
}

NOKPROBE_SYMBOL(kfdsync_lookup_pasid);

/* The process of @pasid, reported with @error. */
static void kfdsync_pasid_error(u32 pasid, int error)
{
	struct kfd_process *p = kfdsync_lookup_pasid(pasid);

	if (!p)
		return;
	kfdsync_ops->process_error(p, error);
	static_call(kfdsync_kfd_unref)(p);
}

NOKPROBE_SYMBOL(kfdsync_pasid_error);

/* void kfd_signal_hw_exception_event(u32 pasid) */
static int kfdsync_hook_hw_exception(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_HW_EXCEPTION]);
	kfdsync_pasid_error(regs_get_kernel_argument(regs, 0), -EIO);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_hw_exception);

/*
 * void kfd_signal_vm_fault_event(dev, u32 pasid, ...) up to ABI 6.12;
 * (struct kfd_process_device *pdd, ...) from 6.16 on, whose caller holds
 * a reference on pdd->process for the call.
 */
static int kfdsync_hook_vm_fault(struct kprobe *kp, struct pt_regs *regs)
{
	const char *pdd;

	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_VM_FAULT]);
	if (!kfdsync_abi_in(KFDSYNC_FROM(6_16), kfdsync_kfd.abi)) {
		kfdsync_pasid_error(regs_get_kernel_argument(regs, 1), -EFAULT);
		return 0;
	}
	pdd = (const char *)regs_get_kernel_argument(regs, 0);
	if (pdd)
		kfdsync_ops->process_error(READ_ONCE(*(const void * const *)
				(pdd + kfdsync_kfd.off[KFDSYNC_ABI_OFF_PDD_PROCESS])),
					   -EFAULT);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_vm_fault);

/* void kfd_signal_reset_event(dev) */
static int kfdsync_hook_reset(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_RESET]);
	kfdsync_ops->device_reset((const void *)regs_get_kernel_argument(regs, 0));
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_reset);

/* void kfd_signal_poison_consumed_event(dev, u32 pasid) */
static int kfdsync_hook_poison(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_POISON]);
	kfdsync_pasid_error(regs_get_kernel_argument(regs, 1), -EIO);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_poison);

/*
 * void kfd_signal_event_interrupt(u32 pasid, u32 partial_id,
 *				   u32 valid_id_bits, bool signal_mailbox_updated)
 * (ABI 7.1): an interrupt that says the GPU did not write the slot.
 */
static int kfdsync_hook_unwritten(struct kprobe *kp, struct pt_regs *regs)
{
	u32 id = regs_get_kernel_argument(regs, 1);
	struct kfd_process *p;

	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_UNWRITTEN]);
	/* A bool argument is the register's low byte; the rest is undefined. */
	if (!kfdsync_abi_signal_unwritten(id, regs_get_kernel_argument(regs, 2),
					  (u8)regs_get_kernel_argument(regs, 3)))
		return 0;
	p = kfdsync_lookup_pasid(regs_get_kernel_argument(regs, 0));
	if (!p)
		return 0;
	kfdsync_ops->gpu_unwritten(p, id);
	static_call(kfdsync_kfd_unref)(p);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_unwritten);

/*
 * void kfd_signal_process_terminate_event(struct kfd_process *p) (ABI
 * 7.1): its GPU is unplugged; amdkfd sets every signal event, with no slot
 * write, and sends SIGBUS. The work did not complete.
 */
static int kfdsync_hook_terminate(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(&kfdsync_hooks[KFDSYNC_HOOK_IDX_TERMINATE]);
	kfdsync_ops->process_error((const void *)regs_get_kernel_argument(regs, 0),
				   -ENODEV);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_terminate);

#define KFDSYNC_HOOK_IN(_idx, _name, _fn, _bit, _pre, _abis)	\
	[_idx] = {						\
		.name = _name,					\
		.symbol = KFDSYNC_AMDGPU ":" _fn,		\
		.bit = _bit,					\
		.pre = _pre,					\
		.abis = _abis,					\
		.hits = ATOMIC64_INIT(0),			\
	}
#define KFDSYNC_HOOK(_idx, _name, _fn, _bit, _pre)		\
	KFDSYNC_HOOK_IN(_idx, _name, _fn, _bit, _pre, KFDSYNC_ALL)

static struct kfdsync_hook kfdsync_hooks[KFDSYNC_HOOK_COUNT] = {
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_ACK, "gpu_interrupt",
		     "set_event_from_interrupt", KFDSYNC_HOOK_GPU_INTERRUPT,
		     kfdsync_hook_ack),
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_CPU, "cpu_set", "set_event",
		     KFDSYNC_HOOK_CPU_SET, kfdsync_hook_cpu),
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_HW_EXCEPTION, "hw_exception",
		     "kfd_signal_hw_exception_event", KFDSYNC_HOOK_HW_EXCEPTION,
		     kfdsync_hook_hw_exception),
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_VM_FAULT, "vm_fault",
		     "kfd_signal_vm_fault_event", KFDSYNC_HOOK_VM_FAULT,
		     kfdsync_hook_vm_fault),
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_RESET, "reset", "kfd_signal_reset_event",
		     KFDSYNC_HOOK_RESET, kfdsync_hook_reset),
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_POISON, "poison",
		     "kfd_signal_poison_consumed_event", KFDSYNC_HOOK_POISON,
		     kfdsync_hook_poison),
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_DESTROY, "destroy", "kfd_event_destroy",
		     KFDSYNC_HOOK_DESTROY, kfdsync_hook_destroy),
	KFDSYNC_HOOK(KFDSYNC_HOOK_IDX_FREE, "free", "kfd_event_free_process",
		     KFDSYNC_HOOK_FREE, kfdsync_hook_free),
	KFDSYNC_HOOK_IN(KFDSYNC_HOOK_IDX_UNWRITTEN, "unwritten",
			"kfd_signal_event_interrupt", KFDSYNC_HOOK_UNWRITTEN,
			kfdsync_hook_unwritten, KFDSYNC_FROM(7_1)),
	KFDSYNC_HOOK_IN(KFDSYNC_HOOK_IDX_TERMINATE, "terminate",
			"kfd_signal_process_terminate_event",
			KFDSYNC_HOOK_TERMINATE, kfdsync_hook_terminate,
			KFDSYNC_FROM(7_1)),
};

static void kfdsync_set_relay(u32 reason, const char *fmt, ...)
	__printf(2, 3);

static void kfdsync_set_relay(u32 reason, const char *fmt, ...)
{
	va_list ap;

	lockdep_assert_held(&kfdsync_amdkfd_lock);

	WRITE_ONCE(kfdsync_relay_reason, reason);
	va_start(ap, fmt);
	vscnprintf(kfdsync_relay_detail, sizeof(kfdsync_relay_detail), fmt, ap);
	va_end(ap);
}

/*
 * An amdkfd function kfdsync calls: its static call's name, the function's
 * name, the ABIs it is for (enum kfdsync_abi_id bits), and its static
 * call.
 */
struct kfdsync_kfd_call {
	const char *call;
	const char *name;
	u32 abis;
	struct static_call_key *key;
	void *tramp;
};

/* @key, if @tramp_type is r(*)(...): a build error if not. */
#define KFDSYNC_KFD_KEY(key, tramp_type, r, ...)			\
	((key) + BUILD_BUG_ON_ZERO(!__builtin_types_compatible_p(	\
		tramp_type, r(*)(__VA_ARGS__))))

static const struct kfdsync_kfd_call kfdsync_kfd_calls[] = {
#define KFDSYNC_CALL(set, member, f, r, ...)				\
	{ .call = #member, .name = __stringify(f), .abis = set,		\
	  .key = KFDSYNC_KFD_KEY(&STATIC_CALL_KEY(kfdsync_kfd_##member),	\
		typeof(STATIC_CALL_TRAMP(kfdsync_kfd_##member)) *,	\
		r, __VA_ARGS__),					\
	  .tramp = (void *)STATIC_CALL_TRAMP_ADDR(kfdsync_kfd_##member) },
#include "kfdsync_abi_list.h"
};

/* Point @call's static call at @fn (NULL: back to returning 0). */
static void kfdsync_kfd_point(const struct kfdsync_kfd_call *call, void *fn)
{
	__static_call_update(call->key, call->tramp,
			     fn ?: (void *)__static_call_return0);
}

/* Where @call's static call branches now (NULL: it returns 0). */
static void *kfdsync_kfd_target(const struct kfdsync_kfd_call *call)
{
	void *fn = READ_ONCE(call->key->func);

	return fn == (void *)__static_call_return0 ? NULL : fn;
}

/* The gate's verdict when nothing was checked, with why. */
static void kfdsync_verdict_unchecked(const char *why)
{
	lockdep_assert_held(&kfdsync_amdkfd_lock);

	memset(&kfdsync_verdict, 0, sizeof(kfdsync_verdict));
	kfdsync_verdict_ns = 0;
	kfdsync_verdict.result = KFDSYNC_AMDKFD_ABI_UNCHECKED;
	kfdsync_verdict.abi = -1;
	strscpy(kfdsync_verdict.reason, why, sizeof(kfdsync_verdict.reason));
}

/*
 * /sys/kernel/btf/@name, read from the init namespace's root (whoever
 * loads amdgpu, in whatever mount namespace): a vmalloc()ed copy in *@buf.
 * Not kernel_read_file(): its LSM hook knows no "BTF" kind of file, and
 * IPE warns on the unknown one.
 */
static ssize_t kfdsync_btf_read(const char *name, void **buf)
{
	char path[MODULE_NAME_LEN + 24];
	struct path __maybe_unused root;
	struct file *file;
	loff_t size, pos = 0;
	ssize_t n = 0;

	*buf = NULL;
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", name);
#ifdef KFDSYNC_HAVE_SCOPED_INIT_FS
	/* 7.x: init_task's root is nullfs; userspace's init has its own. */
	scoped_with_init_fs()
		file = filp_open(path, O_RDONLY, 0);
#else
	task_lock(&init_task);
	get_fs_root(init_task.fs, &root);
	task_unlock(&init_task);
	file = file_open_root(&root, path, O_RDONLY, 0);
	path_put(&root);
#endif
	if (IS_ERR(file))
		return PTR_ERR(file);
	size = i_size_read(file_inode(file));
	if (size <= 0 || size > KFDSYNC_BTF_MAX) {
		n = -EFBIG;
		goto out;
	}
	*buf = vmalloc(size);
	if (!*buf) {
		n = -ENOMEM;
		goto out;
	}
	while (pos < size) {
		n = kernel_read(file, *buf + pos, size - pos, &pos);
		if (n <= 0)
			break;
	}
	if (pos != size) {
		vfree(*buf);
		*buf = NULL;
		n = n < 0 ? n : -EIO;
	}
out:
	fput(file);
	return n < 0 ? n : size;
}

/* The gate: which amdkfd ABI @mod's BTF has, into kfdsync_verdict. */
static void kfdsync_amdkfd_judge(struct module *mod)
{
	void *vmlinux = NULL, *btf = NULL;
	const char *what = "vmlinux";
	ssize_t vmlinux_size, size;
	u64 start = ktime_get_ns();

	lockdep_assert_held(&kfdsync_amdkfd_lock);

	vmlinux_size = kfdsync_btf_read(what, &vmlinux);
	size = vmlinux_size;
	if (size >= 0) {
		what = module_name(mod);
		size = kfdsync_btf_read(what, &btf);
	}
	if (size >= 0) {
		kfdsync_abi_check(vmlinux, vmlinux_size, btf, size,
				  &kfdsync_verdict);
	} else {
		memset(&kfdsync_verdict, 0, sizeof(kfdsync_verdict));
		kfdsync_verdict.result = KFDSYNC_AMDKFD_ABI_NO_BTF;
		kfdsync_verdict.abi = -1;
		if (size == -ENOENT)
			snprintf(kfdsync_verdict.reason,
				 sizeof(kfdsync_verdict.reason),
				 "%s has no BTF (/sys/kernel/btf/%s does not exist)",
				 what == module_name(mod) ? what : "the kernel",
				 what);
		else
			snprintf(kfdsync_verdict.reason,
				 sizeof(kfdsync_verdict.reason),
				 "cannot read /sys/kernel/btf/%s: error %zd", what,
				 size);
	}
	vfree(btf);
	vfree(vmlinux);
	kfdsync_verdict_ns = ktime_get_ns() - start;
}

/*
 * Whether @fn of ABI @abi is one text symbol of @mod and, if kfdsync probes
 * it, has no clone: fn.part.N, fn.isra.N, fn.constprop.N and the like are
 * copies of (parts of) fn that callers may call instead of fn's entry (a
 * probe there would miss them); fn.cold is fn's own unlikely code, reached
 * from fn.
 */
static bool kfdsync_kfd_symbol_ok(struct module *mod,
				  const struct kfdsync_abi_fn *fn)
{
	size_t len = strlen(fn->name);
	unsigned int exact = 0, clones = 0;
	const struct mod_kallsyms *ks;
	unsigned int i;

	preempt_disable();
	ks = rcu_dereference_sched(mod->kallsyms);
	for (i = 0; i < ks->num_symtab; i++) {
		const char *name = ks->strtab + ks->symtab[i].st_name;

		if (tolower(ks->typetab[i]) != 't' || strncmp(name, fn->name, len))
			continue;
		if (!name[len])
			exact++;
		else if (name[len] == '.' && strcmp(name + len, ".cold"))
			clones++;
	}
	preempt_enable();
	if (exact != 1) {
		kfdsync_set_relay(KFDSYNC_RELAY_INLINED,
				  "%u functions %s in amdgpu", exact, fn->name);
		return false;
	}
	if (fn->probed && clones) {
		kfdsync_set_relay(KFDSYNC_RELAY_INLINED,
				  "%s has %u clone%s in amdgpu", fn->name,
				  clones, clones == 1 ? "" : "s");
		return false;
	}
	return true;
}

/* Bytes before each function for call-depth-tracking thunks (x86). */
#ifdef CONFIG_FUNCTION_PADDING_BYTES
#define KFDSYNC_FN_PADDING	CONFIG_FUNCTION_PADDING_BYTES
#else
#define KFDSYNC_FN_PADDING	0
#endif

/*
 * Whether a branch to @dest enters @fn: at its entry, past its ENDBR64 (or
 * what sealing left of it), or in its own padding, where a thunk of call
 * depth tracking runs into it. Nothing else: not a neighbour's code,
 * however close.
 */
static bool kfdsync_code_enters(unsigned long dest, unsigned long fn)
{
	u32 first = kfdsync_ksym_insn((void *)fn);

	if (dest == fn)
		return true;
	if (dest == fn + 4)
		return first == KFDSYNC_ABI_ENDBR64 ||
		       first == KFDSYNC_ABI_SEALED_6_12 ||
		       first == KFDSYNC_ABI_SEALED_6_18;
	return dest < fn && dest + KFDSYNC_FN_PADDING >= fn;
}

/*
 * How many times the code [@start, @end) calls @fn (with @jump, also
 * jumps to it: a tail call), on x86-64: E8 (or E9) rel32, or EB rel8,
 * aimed at @fn as kfdsync_code_enters() says. Read bytewise: a false match
 * needs random bytes that happen to encode exactly that target.
 */
static unsigned int kfdsync_code_calls(unsigned long start, unsigned long end,
				       unsigned long fn, bool jump)
{
	unsigned int n = 0;
	unsigned long ip;
	u8 insn[5];
	s32 rel;

	for (ip = start; ip + sizeof(insn) <= end; ip++) {
		if (copy_from_kernel_nofault(insn, (void *)ip, sizeof(insn)))
			continue;
		if (jump && insn[0] == 0xeb) {
			n += kfdsync_code_enters(ip + 2 + (s8)insn[1], fn);
			continue;
		}
		if (insn[0] != 0xe8 && (!jump || insn[0] != 0xe9))
			continue;
		memcpy(&rel, insn + 1, sizeof(rel));
		n += kfdsync_code_enters(ip + sizeof(insn) + rel, fn);
	}
	return n;
}

/*
 * Whether amdkfd's @caller calls @callee's entry (or, with @jump, may also
 * jump there) at exactly @sites places, as many as amdkfd's sources have;
 * the relay reason if not.
 */
static bool kfdsync_kfd_reaches(const char *caller, const char *callee,
				bool jump, unsigned int sites,
				unsigned long *caller_start,
				unsigned long *caller_end)
{
	unsigned long start, end, fn;
	unsigned int n = 0;

	/* Read and probed, never called: found whatever their first insn. */
	start = (unsigned long)kfdsync_ksym_find(KFDSYNC_AMDGPU, caller, &end);
	fn = (unsigned long)kfdsync_ksym_find(KFDSYNC_AMDGPU, callee, NULL);
	if (!start || !fn) {
		kfdsync_set_relay(KFDSYNC_RELAY_MISSING, "amdkfd's %s not found",
				  start ? callee : caller);
		return false;
	}
	if (IS_ENABLED(CONFIG_X86_64))
		n = kfdsync_code_calls(start, end, fn, jump);
	if (n != sites) {
		/* The callee first: STATUS's detail keeps 63 characters. */
		kfdsync_set_relay(KFDSYNC_RELAY_INLINED,
				  "%s called %u times, not %u, by %s", callee, n,
				  sites, caller);
		return false;
	}
	if (caller_start)
		*caller_start = start;
	if (caller_end)
		*caller_end = end;
	return true;
}

/*
 * Find every function kfdsync calls, and check the code of amdgpu (@mod)
 * as far as kfdsync relies on it; false (and a reason) if something is
 * amiss.
 */
static bool kfdsync_kfd_resolve(struct module *mod, int abi_id)
{
	unsigned long set_event, set_event_end;
	void *fns[ARRAY_SIZE(kfdsync_kfd_calls)] = { NULL };
	unsigned int i;

	lockdep_assert_held(&kfdsync_amdkfd_lock);

	for (i = 0; i < kfdsync_abi_nr_fns; i++)
		if (kfdsync_abi_in(kfdsync_abi_fns[i].abis, abi_id) &&
		    !kfdsync_kfd_symbol_ok(mod, &kfdsync_abi_fns[i]))
			return false;
	/*
	 * The CPU hook tells a CPU set by its return address inside
	 * kfd_set_event(): a call, not a tail jump, the one of the sources
	 * (kfd_events.c: 6.1 line 686, 6.12 693, 6.18 662, 7.2 696, 7.3 624).
	 * The GPU hook needs set_event_from_interrupt()'s entry reached from
	 * each of the three places kfd_signal_event_interrupt() calls it (6.1
	 * lines 765, 788, 798; 6.12 772, 795, 805; 6.18 741, 774, 784; 7.2
	 * 776, 799, 809; 7.3 704, 727, 737): one copy inlined would let its
	 * signals pass unseen.
	 */
	if (!kfdsync_kfd_reaches("kfd_set_event", "set_event", false, 1,
				 &set_event, &set_event_end) ||
	    !kfdsync_kfd_reaches("kfd_signal_event_interrupt",
				 "set_event_from_interrupt", true, 3, NULL, NULL))
		return false;
	/*
	 * Found whatever their code starts with: a static call branches to
	 * them directly, so IBT does not ask for an ENDBR64 (which module
	 * load sealed in every one of them on Debian's 6.12 and later).
	 */
	for (i = 0; i < ARRAY_SIZE(kfdsync_kfd_calls); i++) {
		const struct kfdsync_kfd_call *call = &kfdsync_kfd_calls[i];

		if (!kfdsync_abi_in(call->abis, abi_id))
			continue;
		fns[i] = kfdsync_ksym_find(KFDSYNC_AMDGPU, call->name, NULL);
		if (!fns[i]) {
			kfdsync_set_relay(KFDSYNC_RELAY_MISSING,
					  "amdkfd's %s not found", call->name);
			return false;
		}
	}
	for (i = 0; i < ARRAY_SIZE(kfdsync_kfd_calls); i++)
		if (fns[i])
			kfdsync_kfd_point(&kfdsync_kfd_calls[i], fns[i]);
	kfdsync_kfd.set_event = set_event;
	kfdsync_kfd.set_event_end = set_event_end;
	kfdsync_kfd.abi = abi_id;
	memcpy(kfdsync_kfd.off, kfdsync_verdict.off, sizeof(kfdsync_kfd.off));
	return true;
}

/* A function of kfdsync's own, probed to see that kprobes work. */
static noinline void kfdsync_kprobe_canary(void)
{
	asm volatile ("");
}

static atomic_t kfdsync_canary_hits;

static int kfdsync_canary_pre(struct kprobe *kp, struct pt_regs *regs)
{
	atomic_inc(&kfdsync_canary_hits);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_canary_pre);

/*
 * The canary's kprobe, registered while the hooks are (kfdsync_amdkfd_lock;
 * read locklessly as a hint).
 */
static struct kprobe kfdsync_canary = {
	.pre_handler = kfdsync_canary_pre,
};

static bool kfdsync_canary_attached;

/* Whether the canary's probe fires right now. */
static bool kfdsync_canary_fires(void)
{
	int before = atomic_read(&kfdsync_canary_hits);

	kfdsync_kprobe_canary();
	return atomic_read(&kfdsync_canary_hits) != before;
}

static void kfdsync_canary_detach(void)
{
	lockdep_assert_held(&kfdsync_amdkfd_lock);

	if (!kfdsync_canary_attached)
		return;
	WRITE_ONCE(kfdsync_canary_attached, false);
	unregister_kprobe(&kfdsync_canary);
}

/*
 * Whether kprobes fire at all: root can disarm every kprobe
 * (/sys/kernel/debug/kprobes/enabled) or stop ftrace (kernel.ftrace_enabled),
 * and a kprobe registered then is accepted but never runs. The canary's
 * probe stays registered with the hooks, for kfdsync_amdkfd_kprobes_fire().
 */
static bool kfdsync_kprobes_work(void)
{
	lockdep_assert_held(&kfdsync_amdkfd_lock);

	memset(&kfdsync_canary, 0, sizeof(kfdsync_canary));
	kfdsync_canary.addr = (kprobe_opcode_t *)kfdsync_kprobe_canary;
	kfdsync_canary.pre_handler = kfdsync_canary_pre;
	if (register_kprobe(&kfdsync_canary))
		return false;
	WRITE_ONCE(kfdsync_canary_attached, true);
	if (kfdsync_canary_fires())
		return true;
	kfdsync_canary_detach();
	return false;
}

/**
 * kfdsync_amdkfd_kprobes_fire() - do kprobes fire right now?
 *
 * Root can disarm every kprobe or stop ftrace after the hooks attached;
 * they then stop silently, the free hook too, and a slot may outlive its
 * page. Where kfdsync reads a slot on its own (registration, fdinfo and
 * debugfs) it asks first: a probe of kfdsync's own must fire.
 *
 * Return: true if the hooks are attached and kprobes fire now.
 */
bool kfdsync_amdkfd_kprobes_fire(void)
{
	return READ_ONCE(kfdsync_canary_attached) && kfdsync_canary_fires();
}

static void kfdsync_hook_detach(struct kfdsync_hook *hook)
{
	lockdep_assert_held(&kfdsync_amdkfd_lock);

	if (!hook->attached)
		return;
	/* Waits for running handlers; fine on a probe marked gone. */
	unregister_kprobe(&hook->kp);
	hook->missed += hook->kp.nmissed;
	hook->attached = false;
}

static int kfdsync_hook_attach(struct kfdsync_hook *hook)
{
	int ret;

	lockdep_assert_held(&kfdsync_amdkfd_lock);

	/* A kprobe must not be registered again with its old address. */
	memset(&hook->kp, 0, sizeof(hook->kp));
	hook->kp.symbol_name = hook->symbol;
	hook->kp.pre_handler = hook->pre;
	/* Fault injection (module parameter fail_hook), for tests. */
	if (kfdsync_fail_hook && !strcmp(kfdsync_fail_hook, hook->name))
		ret = -ENOENT;
	else
		ret = register_kprobe(&hook->kp);
	if (ret) {
		kfdsync_set_relay(KFDSYNC_RELAY_MISSING, "hook %s (%s): %d",
				  hook->name, hook->symbol, ret);
		return ret;
	}
	hook->attached = true;
	/* An int3 probe's handler would run in NMI-like context. */
	if (!(hook->kp.flags & KPROBE_FLAG_FTRACE)) {
		kfdsync_hook_detach(hook);
		kfdsync_set_relay(KFDSYNC_RELAY_NOT_FTRACE,
				  "hook %s is not ftrace-based", hook->name);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void kfdsync_hooks_detach_all(void)
{
	unsigned int i;

	lockdep_assert_held(&kfdsync_amdkfd_lock);

	WRITE_ONCE(kfdsync_hooks_active, false);
	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++)
		kfdsync_hook_detach(&kfdsync_hooks[i]);
	kfdsync_canary_detach();
	WRITE_ONCE(kfdsync_hooks_mask, 0);
	/* No handler runs any more: forget amdkfd's functions. */
	for (i = 0; i < ARRAY_SIZE(kfdsync_kfd_calls); i++)
		if (kfdsync_kfd_target(&kfdsync_kfd_calls[i]))
			kfdsync_kfd_point(&kfdsync_kfd_calls[i], NULL);
	memset(&kfdsync_kfd, 0, sizeof(kfdsync_kfd));
}

/* amdgpu (@mod) is live: judge it, then attach every hook, or none. */
static void kfdsync_amdkfd_arrived(struct module *mod)
{
	const char *why;
	u32 mask = 0;
	unsigned int i;

	lockdep_assert_held(&kfdsync_amdkfd_lock);

	WRITE_ONCE(kfdsync_amdgpu_mod, mod);
	WRITE_ONCE(kfdsync_amdgpu_live, true);
	if (kfdsync_hooks_active)
		return;
	if (!kfdsync_hooks_enabled) {
		kfdsync_verdict_unchecked("hooks=N");
		kfdsync_set_relay(KFDSYNC_RELAY_FORCED, "hooks=N");
		return;
	}
	kfdsync_amdkfd_judge(mod);
	why = kfdsync_verdict.reason;
	if (kfdsync_verdict.result == KFDSYNC_AMDKFD_ABI_NO_BTF) {
		kfdsync_set_relay(KFDSYNC_RELAY_NO_BTF, "%s", why);
		goto fail;
	}
	if (kfdsync_verdict.result != KFDSYNC_AMDKFD_ABI_MATCH) {
		kfdsync_set_relay(KFDSYNC_RELAY_UNVERIFIED, "%s", why);
		goto fail;
	}
	why = kfdsync_relay_detail;
	if (kfdsync_assume_unverified) {
		kfdsync_set_relay(KFDSYNC_RELAY_UNVERIFIED, "assume_unverified=Y");
		goto fail;
	}
	if (!IS_ENABLED(CONFIG_X86_64)) {
		kfdsync_set_relay(KFDSYNC_RELAY_INLINED,
				  "hooks are for x86-64 only");
		goto fail;
	}
	if (!kfdsync_kfd_resolve(mod, kfdsync_verdict.abi))
		goto fail;
	if (!kfdsync_kprobes_work()) {
		kfdsync_set_relay(KFDSYNC_RELAY_KPROBES_OFF,
				  "kprobes do not fire (disarmed, or ftrace off)");
		goto fail;
	}
	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++) {
		if (!kfdsync_abi_in(kfdsync_hooks[i].abis, kfdsync_verdict.abi))
			continue;
		if (kfdsync_hook_attach(&kfdsync_hooks[i]))
			goto fail;
		mask |= kfdsync_hooks[i].bit;
	}
	WRITE_ONCE(kfdsync_hooks_mask, mask);
	kfdsync_set_relay(0, "%s", "");
	/* Pairs with kfdsync_amdkfd_enter(): the functions are set. */
	smp_store_release(&kfdsync_hooks_active, true);
	pr_info("amdkfd ABI %s: hooks attached: %#x\n",
		kfdsync_abis[kfdsync_verdict.abi].name, mask);
	return;

fail:
	/* The whole reason, once per load of amdgpu (the detail is cut). */
	pr_info("%s: no hooks, relay mode\n", why);
	kfdsync_hooks_detach_all();
}

static void kfdsync_amdkfd_gone(void)
{
	lockdep_assert_held(&kfdsync_amdkfd_lock);

	if (!kfdsync_amdgpu_live)
		return;
	WRITE_ONCE(kfdsync_amdgpu_live, false);
	kfdsync_hooks_detach_all();
	WRITE_ONCE(kfdsync_amdgpu_mod, NULL);
	kfdsync_set_relay(KFDSYNC_RELAY_NO_AMDGPU, "amdgpu not loaded");
	kfdsync_verdict_unchecked("amdgpu not loaded");
	kfdsync_ops->gone();
}

/*
 * Take amdgpu for a call into amdkfd from outside a hook (a hook runs
 * inside amdgpu's own code). NULL if the hooks are not active: then kfdsync
 * calls nothing of amdkfd's.
 */
static struct module *kfdsync_amdkfd_enter(void)
{
	struct module *amdgpu;

	/* Acquire: pairs with the release that published the functions. */
	if (!smp_load_acquire(&kfdsync_hooks_active))
		return NULL;
	/*
	 * amdgpu's exit runs before GOING is notified: hold it. The notifier
	 * clears kfdsync_amdgpu_mod at GOING, and the module is freed only
	 * after an RCU grace period that follows (free_module()), so a
	 * pointer read inside an RCU read section still points to the
	 * module; try_module_get() fails once it is going. (Not a lookup by
	 * name: kset_find_obj() walks every loaded module, once per event
	 * registered.)
	 */
	rcu_read_lock();
	amdgpu = READ_ONCE(kfdsync_amdgpu_mod);
	if (amdgpu && !try_module_get(amdgpu))
		amdgpu = NULL;
	rcu_read_unlock();
	/* Still active with amdgpu held: the functions stay valid. */
	if (amdgpu && !smp_load_acquire(&kfdsync_hooks_active)) {
		module_put(amdgpu);
		amdgpu = NULL;
	}
	return amdgpu;
}

/**
 * kfdsync_amdkfd_process_get() - amdkfd's process of an address space
 * @mm: the address space
 *
 * Only while the hooks are active (and from process context outside the
 * hooks); the reference keeps the process and its signal page.
 *
 * Return: a referenced process (drop with kfdsync_amdkfd_process_put()),
 * or NULL if @mm has none or the hooks are not active.
 */
void *kfdsync_amdkfd_process_get(const struct mm_struct *mm)
{
	struct module *amdgpu = kfdsync_amdkfd_enter();
	struct kfd_process *p;

	if (!amdgpu)
		return NULL;
	p = static_call(kfdsync_kfd_lookup_mm)(mm);
	if (!p)
		module_put(amdgpu);
	/* With a process, amdgpu stays held until the put. */
	return p;
}

/**
 * kfdsync_amdkfd_process_put() - drop kfdsync_amdkfd_process_get()'s reference
 * @kp: the process
 */
void kfdsync_amdkfd_process_put(void *kp)
{
	static_call(kfdsync_kfd_unref)(kp);
	/* Held since the get: amdgpu cannot have gone. */
	module_put(kfdsync_amdgpu_mod);
}

/**
 * kfdsync_amdkfd_process_uses() - does a process use a GPU?
 * @mm: the process's address space
 * @kp: the process kfdsync knows for @mm (not referenced by the caller)
 * @kdev: the device, from the reset hook
 *
 * For the reset hook only (amdgpu is inside the call that reports the
 * reset). Takes its own reference on the process of @mm, so a @kp that is
 * being freed is never touched.
 *
 * Return: whether @mm's amdkfd process is @kp and has a queue context on
 * @kdev.
 */
bool kfdsync_amdkfd_process_uses(const struct mm_struct *mm, const void *kp,
				 const void *kdev)
{
	struct kfd_process *p = static_call(kfdsync_kfd_lookup_mm)(mm);
	bool uses = false;

	if (!p)
		return false;
	/* The device's type is the ABI's: kfd_dev (6.1) or kfd_node. */
	if (p == kp && kfdsync_kfd.abi == KFDSYNC_ABI_ID_6_1)
		uses = static_call(kfdsync_kfd_pdd_of_dev)((struct kfd_dev *)kdev, p);
	else if (p == kp)
		uses = static_call(kfdsync_kfd_pdd_of_node)((struct kfd_node *)kdev, p);
	static_call(kfdsync_kfd_unref)(p);
	return uses;
}

/**
 * kfdsync_amdkfd_slot() - where amdkfd keeps slot @id of a process
 * @kp: the process, referenced (kfdsync_amdkfd_process_get(), or amdkfd's
 *	own reference in a hook)
 * @id: the event id, below %KFDSYNC_EVENT_ID_LIMIT
 *
 * Through amdkfd's own state: the process's signal page (struct
 * kfd_process.signal_page) and amdkfd's kernel mapping of it (struct
 * kfd_signal_page.kernel_address), at the offsets the gate read from
 * amdgpu's BTF. The same for the page amdkfd allocates (a GPU-less or old
 * APU system) and for the GPU buffer libhsakmt gives it on every discrete
 * GPU: no mapping of /dev/kfd is involved. amdkfd sets the page once, with
 * its first signal event (or the buffer, before it), and keeps it until it
 * frees the process, which the reference defers; it reads every slot below
 * %KFDSYNC_EVENT_ID_LIMIT itself (kfd_signal_event_interrupt()).
 *
 * Only while the hooks are active (amdgpu held by the caller).
 *
 * Return: the slot's kernel address, or NULL if the process has no signal
 * page yet.
 */
u64 *kfdsync_amdkfd_slot(const void *kp, u32 id)
{
	const void *page;
	u64 *slots;

	page = READ_ONCE(*(const void * const *)
			 ((const char *)kp + kfdsync_kfd.off[KFDSYNC_ABI_OFF_SIGNAL_PAGE]));
	if (!page)
		return NULL;
	/* NULL too while amdkfd is still filling in a page it published. */
	slots = READ_ONCE(*(u64 * const *)
			  ((const char *)page + kfdsync_kfd.off[KFDSYNC_ABI_OFF_KERNEL_ADDRESS]));
	return slots ? slots + id : NULL;
}

/**
 * kfdsync_amdkfd_set_event() - set an event of a process, as SET_EVENT does
 * @mm: address space of the event's process
 * @id: the event id
 * @check: only check that it can be done now
 *
 * Only while the hooks are active. The call is made in @mm (a worker
 * borrows it, as amdkfd's own workers do), so the cpu_set hook counts it
 * like any CPU set. May sleep.
 *
 * Return: 0 or amdkfd's -errno (-EINVAL: no such event, or not settable
 * from the CPU); -EOPNOTSUPP if the hooks are not active; -ESRCH if @mm
 * has no amdkfd process or is gone.
 */
int kfdsync_amdkfd_set_event(const struct mm_struct *mm, u32 id, bool check)
{
	struct mm_struct *borrowed = NULL;
	struct kfd_process *p;
	struct module *amdgpu;
	int ret;

	amdgpu = kfdsync_amdkfd_enter();
	if (!amdgpu)
		return -EOPNOTSUPP;
	p = static_call(kfdsync_kfd_lookup_mm)(mm);
	if (!p) {
		ret = -ESRCH;
		goto out_put;
	}
	if (check) {
		ret = 0;
		goto out_unref;
	}
	if (current->mm != mm) {
		ret = -ESRCH;
		if (!(current->flags & PF_KTHREAD) ||
		    !mmget_not_zero((struct mm_struct *)mm))
			goto out_unref;
		borrowed = (struct mm_struct *)mm;
		kthread_use_mm(borrowed);
	}
	ret = static_call(kfdsync_kfd_set_event)(p, id);
	if (borrowed) {
		kthread_unuse_mm(borrowed);
		/*
		 * Not mmput(): if the owner exited meanwhile this is the last
		 * reference, and a whole exit_mmap() (amdkfd's teardown of
		 * the process included) must not run on kfdsync's worker.
		 */
		mmput_async(borrowed);
	}
out_unref:
	static_call(kfdsync_kfd_unref)(p);
out_put:
	module_put(amdgpu);
	return ret;
}

static int kfdsync_module_notify(struct notifier_block *nb,
				 unsigned long action, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, KFDSYNC_AMDGPU))
		return NOTIFY_DONE;

	mutex_lock(&kfdsync_amdkfd_lock);
	switch (action) {
	case MODULE_STATE_LIVE:
		kfdsync_amdkfd_arrived(mod);
		break;
	case MODULE_STATE_GOING:
		/* Also sent when amdgpu's init fails after COMING. */
		kfdsync_amdkfd_gone();
		break;
	default:
		break;
	}
	mutex_unlock(&kfdsync_amdkfd_lock);
	return NOTIFY_DONE;
}

static struct notifier_block kfdsync_module_nb = {
	.notifier_call = kfdsync_module_notify,
};

/* Misses of @hook: earlier attachments' and the current one's. */
static u64 kfdsync_hook_missed(const struct kfdsync_hook *hook)
{
	return hook->missed + (hook->attached ? hook->kp.nmissed : 0);
}

/**
 * kfdsync_amdkfd_state() - what kfdsync uses of amdkfd right now
 * @state: out: the snapshot
 */
void kfdsync_amdkfd_state(struct kfdsync_amdkfd_state *state)
{
	unsigned int i;

	memset(state, 0, sizeof(*state));
	mutex_lock(&kfdsync_amdkfd_lock);
	state->present = kfdsync_amdgpu_live;
	state->active = kfdsync_hooks_active;
	state->hooks = kfdsync_hooks_mask;
	state->reason = kfdsync_relay_reason;
	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++)
		state->missed += kfdsync_hook_missed(&kfdsync_hooks[i]);
	strscpy(state->detail, kfdsync_relay_detail, sizeof(state->detail));
	mutex_unlock(&kfdsync_amdkfd_lock);
}

/**
 * kfdsync_amdkfd_abi() - the gate's verdict on the loaded amdgpu
 * @abi: out: the verdict, in the uAPI's terms
 */
void kfdsync_amdkfd_abi(struct kfdsync_amdkfd_abi *abi)
{
	const struct kfdsync_abi_verdict *v = &kfdsync_verdict;

	memset(abi, 0, sizeof(*abi));
	kfdsync_amdkfd_abi_names(abi->implemented, sizeof(abi->implemented));
	mutex_lock(&kfdsync_amdkfd_lock);
	abi->verdict = v->result;
	if (v->abi >= 0 && v->abi < KFDSYNC_ABI_COUNT)
		strscpy(abi->abi, kfdsync_abis[v->abi].name, sizeof(abi->abi));
	strscpy(abi->reason, v->reason, sizeof(abi->reason));
	mutex_unlock(&kfdsync_amdkfd_lock);
}

/**
 * kfdsync_amdkfd_abi_names() - the amdkfd ABIs kfdsync implements
 * @buf: out: their names, space-separated
 * @size: size of @buf
 */
void kfdsync_amdkfd_abi_names(char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < KFDSYNC_ABI_COUNT && len < size; i++)
		len += scnprintf(buf + len, size - len, "%s%s", i ? " " : "",
				 kfdsync_abis[i].name);
}

/**
 * kfdsync_amdkfd_active() - are the hooks the source of signals?
 *
 * Return: true while every hook is attached; a snapshot.
 */
bool kfdsync_amdkfd_active(void)
{
	return READ_ONCE(kfdsync_hooks_active);
}

/**
 * kfdsync_amdkfd_supported() - the hooks kfdsync attaches to this amdgpu
 *
 * Those of the ABI the gate matched, or judged closest; with no verdict
 * (no amdgpu, no BTF, hooks=N) every hook this module knows.
 *
 * Return: KFDSYNC_HOOK_* bits.
 */
u32 kfdsync_amdkfd_supported(void)
{
	unsigned int i;
	u32 mask = 0;
	int abi;

	mutex_lock(&kfdsync_amdkfd_lock);
	abi = kfdsync_verdict.abi;
	mutex_unlock(&kfdsync_amdkfd_lock);
	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++)
		if (abi < 0 || abi >= KFDSYNC_ABI_COUNT ||
		    kfdsync_abi_in(kfdsync_hooks[i].abis, abi))
			mask |= kfdsync_hooks[i].bit;
	return mask;
}

/* KFDSYNC_AMDKFD_ABI_* in words, for people; the last for anything else. */
static const char *const kfdsync_abi_verdicts[] = {
	"not checked", "matches", "matches none, closest", "unreadable", "?",
};

static int kfdsync_hooks_debugfs_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	mutex_lock(&kfdsync_amdkfd_lock);
	seq_printf(m, "# amdkfd %s, source %s%s%s\n",
		   kfdsync_amdgpu_live ? "present" : "absent",
		   kfdsync_hooks_active ? "hooks" : "relay",
		   kfdsync_hooks_active ? "" : ": ", kfdsync_relay_detail);
	seq_printf(m, "# amdkfd ABI: %s%s%s%s%s (judged in %llu us)\n",
		   kfdsync_abi_verdicts[min_t(u32, kfdsync_verdict.result,
					      ARRAY_SIZE(kfdsync_abi_verdicts) - 1)],
		   kfdsync_verdict.abi >= 0 ? " " : "",
		   kfdsync_verdict.abi >= 0 ?
		   kfdsync_abis[kfdsync_verdict.abi].name : "",
		   kfdsync_verdict.reason[0] ? ": " : "",
		   kfdsync_verdict.reason, kfdsync_verdict_ns / NSEC_PER_USEC);
	seq_puts(m, "# name         symbol                                    state     hits       missed\n");
	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++) {
		struct kfdsync_hook *hook = &kfdsync_hooks[i];

		seq_printf(m, "%-12s %-41s %-9s %-10lld %llu\n", hook->name,
			   hook->symbol,
			   hook->attached ? "attached" : "detached",
			   (long long)atomic64_read(&hook->hits),
			   kfdsync_hook_missed(hook));
	}
	/* Where each static call branches now, and that code's first bytes. */
	seq_puts(m, "# call             function                      target\n");
	for (i = 0; i < ARRAY_SIZE(kfdsync_kfd_calls); i++) {
		const struct kfdsync_kfd_call *call = &kfdsync_kfd_calls[i];
		void *fn = kfdsync_kfd_target(call);
		u32 insn;

		seq_printf(m, "%-18s %-29s ", call->call, call->name);
		if (!fn) {
			seq_puts(m, "returns 0\n");
			continue;
		}
		insn = kfdsync_ksym_insn(fn);
		seq_printf(m, "%pS, code %*phN\n", fn, (int)sizeof(insn), &insn);
	}
	mutex_unlock(&kfdsync_amdkfd_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsync_hooks_debugfs);

/**
 * kfdsync_amdkfd_init() - follow amdgpu and attach the hooks when it is live
 * @ops: the callbacks of the hooks (must stay valid until exit)
 * @enable: attach hooks at all; false forces relay mode
 * @assume_unverified: attach no hook even when amdgpu passes the gate (tests)
 * @fail_hook: the name of a hook whose attach is made to fail (tests), or
 *	       NULL
 * @debugfs_root: kfdsync's debugfs directory, for the "hooks" file
 *
 * Return: 0, or -errno if the module notifier cannot be registered.
 * Hooks that cannot be attached are not an error: relay mode.
 */
int kfdsync_amdkfd_init(const struct kfdsync_amdkfd_ops *ops, bool enable,
			bool assume_unverified, const char *fail_hook,
			struct dentry *debugfs_root)
{
	struct module *amdgpu;
	int ret;

	kfdsync_ops = ops;
	kfdsync_hooks_enabled = enable;
	kfdsync_assume_unverified = assume_unverified;
	kfdsync_fail_hook = fail_hook;

	/* Notifier first: amdgpu loading from now on cannot be missed. */
	ret = register_module_notifier(&kfdsync_module_nb);
	if (ret)
		return ret;

	mutex_lock(&kfdsync_amdkfd_lock);
	kfdsync_set_relay(KFDSYNC_RELAY_NO_AMDGPU, "amdgpu not loaded");
	kfdsync_verdict_unchecked("amdgpu not loaded");
	amdgpu = kfdsync_ksym_module_get(KFDSYNC_AMDGPU);
	if (amdgpu) {
		kfdsync_amdkfd_arrived(amdgpu);
		module_put(amdgpu);
	} else {
		pr_info("amdgpu not loaded, hooks attach when it is\n");
	}
	mutex_unlock(&kfdsync_amdkfd_lock);

	debugfs_create_file("hooks", 0444, debugfs_root, NULL,
			    &kfdsync_hooks_debugfs_fops);
	return 0;
}

/**
 * kfdsync_amdkfd_exit() - stop following amdgpu, detach every hook
 *
 * On return no handler runs and none will.
 */
void kfdsync_amdkfd_exit(void)
{
	/* Waits for a running callback; none starts after it returns. */
	unregister_module_notifier(&kfdsync_module_nb);

	mutex_lock(&kfdsync_amdkfd_lock);
	kfdsync_amdkfd_gone();
	mutex_unlock(&kfdsync_amdkfd_lock);
}
