// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: hint hooks on amdkfd.
 *
 * amdkfd lives in amdgpu.ko and exports none of the functions kfdsync needs
 * to observe, so kfdsync puts kprobes on them. amdgpu may be loaded before
 * kfdsync, after it, or come and go while kfdsync is loaded, so:
 *
 * - at init, kfdsync registers a module notifier *first* and only then looks
 *   for amdgpu; whatever amdgpu does from then on, the notifier sees it;
 * - the notifier attaches the hooks when amdgpu becomes live and detaches
 *   them when it goes;
 * - attaching is idempotent and every state change happens under
 *   kfdsync_hooks_lock, so the init path and the notifier may both try to
 *   attach (amdgpu loading while kfdsync initialises) without harm;
 * - at exit, kfdsync unregisters the notifier first, which waits for a
 *   running callback, and detaches whatever is still attached afterwards.
 *
 * A kprobe does not pin amdgpu: when amdgpu unloads, the kprobe core marks
 * our probes gone before the text is freed, and our GOING callback
 * unregisters them. On GOING, kfdsync also ends every pending fence with
 * -EIO: amdkfd and its events are gone.
 *
 * What the handlers do (they run with preemption disabled, in a kworker or
 * a process; spinlocks and RCU only, no sleeping, no allocation):
 *
 * - gpu_interrupt, a kretprobe on kfd_signal_event_interrupt(pasid, ...):
 *   at entry, before amdkfd acknowledges any slot, count the set slots of
 *   the interrupted process's registered events; at return, notice the
 *   slots amdkfd acknowledged (kfdsync_event.c);
 * - cpu_set, a kretprobe on kfd_set_event(p, id): record current's mm and
 *   the id at entry; if amdkfd returns 0, the event of that mm and id
 *   signalled;
 * - hw_exception, vm_fault, poison (a pasid) and reset (every process):
 *   end the fences of the affected contexts with -EIO / -EFAULT.
 *
 * A pasid is matched to a context without knowing amdkfd's structures: the
 * process amdkfd finds by the pasid (kfd_lookup_process_by_pasid()) must be
 * the one it finds by the context's mm (kfd_lookup_process_by_mm()); both
 * take a reference, released with kfd_unref_process(). kfdsync finds these
 * three global, unexported functions when amdgpu arrives, by registering a
 * kprobe on each and reading its address, and forgets them when it goes,
 * after the hooks that call them are detached.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <linux/kfdsync.h>

#include "kfdsync_internal.h"

/* The module that carries amdkfd. */
#define KFDSYNC_AMDGPU		"amdgpu"

/* Concurrent calls a kretprobe follows; more are missed (counted). */
#define KFDSYNC_HOOK_MAXACTIVE	64

/**
 * struct kfdsync_hook - one kprobe or kretprobe on an amdkfd function
 * @name:	Short name, for debugfs.
 * @symbol:	"module:function", as kprobes resolve it.
 * @bit:	KFDSYNC_HOOK_* bit of the hook.
 * @pre:	Handler of a plain kprobe, or NULL for a kretprobe.
 * @entry:	Entry handler of a kretprobe.
 * @ret:	Return handler of a kretprobe.
 * @data_size:	Per-call data of a kretprobe.
 * @kp:		The kprobe; only valid while @attached.
 * @krp:	The kretprobe; only valid while @attached.
 * @attached:	Whether @kp or @krp is registered.
 * @hits:	Times the handler ran since kfdsync was loaded.
 *
 * @kp, @krp and @attached are protected by kfdsync_hooks_lock; @hits is
 * atomic.
 */
struct kfdsync_hook {
	const char *name;
	const char *symbol;
	u32 bit;
	kprobe_pre_handler_t pre;
	kretprobe_handler_t entry;
	kretprobe_handler_t ret;
	size_t data_size;
	struct kprobe kp;
	struct kretprobe krp;
	bool attached;
	atomic64_t hits;
};

enum {
	KFDSYNC_HOOK_IDX_GPU,
	KFDSYNC_HOOK_IDX_CPU,
	KFDSYNC_HOOK_IDX_HW_EXCEPTION,
	KFDSYNC_HOOK_IDX_VM_FAULT,
	KFDSYNC_HOOK_IDX_RESET,
	KFDSYNC_HOOK_IDX_POISON,
	KFDSYNC_HOOK_COUNT,
};

static struct kfdsync_hook kfdsync_hooks[KFDSYNC_HOOK_COUNT];

static void kfdsync_hook_hit(unsigned int idx)
{
	atomic64_inc(&kfdsync_hooks[idx].hits);
}

/**
 * struct kfdsync_gpu_call - one call of kfd_signal_event_interrupt()
 * @pasid:	The interrupt's pasid.
 * @id:		The event id amdkfd handled alone, or 0 for a scan of all.
 */
struct kfdsync_gpu_call {
	u32 pasid;
	u32 id;
};

/* As amdkfd: with enough valid bits, the payload is the whole event id. */
static u32 kfdsync_gpu_full_id(u32 partial_id, u32 valid_bits)
{
	if (valid_bits > 31 || (1U << valid_bits) >= KFDSYNC_EVENT_ID_LIMIT)
		return partial_id < KFDSYNC_EVENT_ID_LIMIT ? partial_id : 0;
	return 0;
}

/* kfd_signal_event_interrupt(u32 pasid, u32 partial_id, u32 valid_bits) */
static int kfdsync_hook_gpu_entry(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	struct kfdsync_gpu_call *call = (void *)ri->data;
	u32 id = kfdsync_gpu_full_id(regs_get_kernel_argument(regs, 1),
				     regs_get_kernel_argument(regs, 2));

	kfdsync_hook_hit(KFDSYNC_HOOK_IDX_GPU);
	call->pasid = regs_get_kernel_argument(regs, 0);
	call->id = kfdsync_events_interrupt(call->pasid, id, true);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_gpu_entry);

static int kfdsync_hook_gpu_ret(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct kfdsync_gpu_call *call = (void *)ri->data;

	kfdsync_events_interrupt(call->pasid, call->id, false);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_gpu_ret);

/**
 * struct kfdsync_cpu_set_call - one call of kfd_set_event()
 * @mm:	Address space of the caller (the event's owner).
 * @id:	The event id.
 */
struct kfdsync_cpu_set_call {
	const struct mm_struct *mm;
	u32 id;
};

/* int kfd_set_event(struct kfd_process *p, u32 event_id), p == current's */
static int kfdsync_hook_cpu_entry(struct kretprobe_instance *ri,
				  struct pt_regs *regs)
{
	struct kfdsync_cpu_set_call *call = (void *)ri->data;

	kfdsync_hook_hit(KFDSYNC_HOOK_IDX_CPU);
	call->mm = current->mm;
	call->id = regs_get_kernel_argument(regs, 1);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_cpu_entry);

static int kfdsync_hook_cpu_ret(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct kfdsync_cpu_set_call *call = (void *)ri->data;

	if (call->mm && !regs_return_value(regs))
		kfdsync_events_cpu_set(call->mm, call->id);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_cpu_ret);

/* kfd_signal_hw_exception_event(u32 pasid) */
static int kfdsync_hook_hw_exception(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(KFDSYNC_HOOK_IDX_HW_EXCEPTION);
	kfdsync_events_fail(regs_get_kernel_argument(regs, 0), false, -EIO);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_hw_exception);

/* kfd_signal_vm_fault_event(struct kfd_dev *dev, u32 pasid, ...) */
static int kfdsync_hook_vm_fault(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(KFDSYNC_HOOK_IDX_VM_FAULT);
	kfdsync_events_fail(regs_get_kernel_argument(regs, 1), false, -EFAULT);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_vm_fault);

/* kfd_signal_reset_event(struct kfd_dev *dev): every process */
static int kfdsync_hook_reset(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(KFDSYNC_HOOK_IDX_RESET);
	kfdsync_events_fail(0, true, -EIO);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_reset);

/* kfd_signal_poison_consumed_event(struct kfd_dev *dev, u32 pasid) */
static int kfdsync_hook_poison(struct kprobe *kp, struct pt_regs *regs)
{
	kfdsync_hook_hit(KFDSYNC_HOOK_IDX_POISON);
	kfdsync_events_fail(regs_get_kernel_argument(regs, 1), false, -EIO);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_poison);

#define KFDSYNC_KPROBE(_name, _fn, _bit, _pre) {		\
	.name = _name,						\
	.symbol = KFDSYNC_AMDGPU ":" _fn,			\
	.bit = _bit,						\
	.pre = _pre,						\
	.hits = ATOMIC64_INIT(0),				\
}

#define KFDSYNC_KRETPROBE(_name, _fn, _bit, _entry, _ret, _size) {	\
	.name = _name,						\
	.symbol = KFDSYNC_AMDGPU ":" _fn,			\
	.bit = _bit,						\
	.entry = _entry,					\
	.ret = _ret,						\
	.data_size = _size,					\
	.hits = ATOMIC64_INIT(0),				\
}

static struct kfdsync_hook kfdsync_hooks[KFDSYNC_HOOK_COUNT] = {
	[KFDSYNC_HOOK_IDX_GPU] =
		KFDSYNC_KRETPROBE("gpu_interrupt", "kfd_signal_event_interrupt",
				  KFDSYNC_HOOK_GPU_INTERRUPT,
				  kfdsync_hook_gpu_entry, kfdsync_hook_gpu_ret,
				  sizeof(struct kfdsync_gpu_call)),
	[KFDSYNC_HOOK_IDX_CPU] =
		KFDSYNC_KRETPROBE("cpu_set", "kfd_set_event",
				  KFDSYNC_HOOK_CPU_SET,
				  kfdsync_hook_cpu_entry, kfdsync_hook_cpu_ret,
				  sizeof(struct kfdsync_cpu_set_call)),
	[KFDSYNC_HOOK_IDX_HW_EXCEPTION] =
		KFDSYNC_KPROBE("hw_exception", "kfd_signal_hw_exception_event",
			       KFDSYNC_HOOK_HW_EXCEPTION,
			       kfdsync_hook_hw_exception),
	[KFDSYNC_HOOK_IDX_VM_FAULT] =
		KFDSYNC_KPROBE("vm_fault", "kfd_signal_vm_fault_event",
			       KFDSYNC_HOOK_VM_FAULT, kfdsync_hook_vm_fault),
	[KFDSYNC_HOOK_IDX_RESET] =
		KFDSYNC_KPROBE("reset", "kfd_signal_reset_event",
			       KFDSYNC_HOOK_RESET, kfdsync_hook_reset),
	[KFDSYNC_HOOK_IDX_POISON] =
		KFDSYNC_KPROBE("poison", "kfd_signal_poison_consumed_event",
			       KFDSYNC_HOOK_POISON, kfdsync_hook_poison),
};

/* Serialises attach and detach: init, exit and the module notifier. */
static DEFINE_MUTEX(kfdsync_hooks_lock);

/* Whether to attach at all (module parameter hooks); set once at init. */
static bool kfdsync_hooks_enabled;

/* amdgpu is loaded; written under kfdsync_hooks_lock, read locklessly. */
static bool kfdsync_amdkfd_live;

/* KFDSYNC_HOOK_* bits attached; written under kfdsync_hooks_lock. */
static u32 kfdsync_hooks_mask;

/**
 * struct kfdsync_kfd_fns - amdkfd's process lookup functions
 * @by_pasid:	kfd_lookup_process_by_pasid(), takes a reference.
 * @by_mm:	kfd_lookup_process_by_mm(), takes a reference.
 * @unref:	kfd_unref_process().
 * @set_event:	kfd_set_event(), or NULL if not found (then kfdsync cannot
 *		set events for imports; everything else works).
 *
 * Set (under kfdsync_hooks_lock) before the hooks attach, cleared after
 * they detach: the handlers read them without a lock.
 */
struct kfdsync_kfd_fns {
	void *(*by_pasid)(u32 pasid);
	void *(*by_mm)(const struct mm_struct *mm);
	void (*unref)(void *p);
	int (*set_event)(void *p, u32 id);
};

static struct kfdsync_kfd_fns kfdsync_kfd;

/* The start of @name given an address inside it (kprobes may skip ENDBR). */
static unsigned long kfdsync_kfd_func_start(unsigned long addr,
					    const char *name)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t len = strlen(name);
	unsigned long off;

	sprint_symbol(buf, addr);
	if (strncmp(buf, name, len) || buf[len] != '+')
		return 0;
	if (sscanf(buf + len, "+%lx/", &off) != 1 || off > addr)
		return 0;
	return addr - off;
}

static void *kfdsync_kfd_lookup(const char *name)
{
	char qualified[KSYM_NAME_LEN];
	struct kprobe kp = { .symbol_name = qualified };
	unsigned long start;

	snprintf(qualified, sizeof(qualified), "%s:%s", KFDSYNC_AMDGPU, name);
	if (register_kprobe(&kp))
		return NULL;
	start = kfdsync_kfd_func_start((unsigned long)kp.addr, name);
	unregister_kprobe(&kp);
	if (!start)
		return NULL;

#ifdef CONFIG_X86_KERNEL_IBT
	/* An indirect call needs an intact ENDBR64 when IBT is enforced. */
	if (cpu_feature_enabled(X86_FEATURE_IBT)) {
		u32 insn;

		if (copy_from_kernel_nofault(&insn, (void *)start,
					     sizeof(insn)) ||
		    insn != 0xfa1e0ff3)
			return NULL;
	}
#endif
	return (void *)start;
}

static void kfdsync_kfd_resolve(void)
{
	struct kfdsync_kfd_fns fns;

	lockdep_assert_held(&kfdsync_hooks_lock);

	fns.by_pasid = kfdsync_kfd_lookup("kfd_lookup_process_by_pasid");
	fns.by_mm = kfdsync_kfd_lookup("kfd_lookup_process_by_mm");
	fns.unref = kfdsync_kfd_lookup("kfd_unref_process");
	if (!fns.by_pasid || !fns.by_mm || !fns.unref) {
		pr_info("amdkfd process lookup not found: exceptions are not matched to processes\n");
		memset(&fns, 0, sizeof(fns));
	} else {
		fns.set_event = kfdsync_kfd_lookup("kfd_set_event");
		if (!fns.set_event)
			pr_info("amdkfd's kfd_set_event() not found: imports cannot set events\n");
	}
	kfdsync_kfd = fns;
}

/**
 * kfdsync_hooks_same_process() - is @pasid the process of @mm?
 * @pasid: an amdkfd pasid, from a hook's arguments
 * @mm: a context's address space
 * @unknown: the answer when amdkfd's lookup functions are not available
 *
 * Only for hook handlers (amdgpu is loaded while they run). Never sleeps.
 *
 * Return: whether amdkfd's process for @pasid is its process for @mm (false
 * if either has none), or @unknown.
 */
bool kfdsync_hooks_same_process(u32 pasid, const struct mm_struct *mm,
				bool unknown)
{
	void *by_pasid, *by_mm;
	bool same;

	if (!kfdsync_kfd.by_pasid)
		return unknown;
	by_pasid = kfdsync_kfd.by_pasid(pasid);
	if (!by_pasid)
		return false;
	by_mm = kfdsync_kfd.by_mm(mm);
	same = by_mm == by_pasid;
	if (by_mm)
		kfdsync_kfd.unref(by_mm);
	kfdsync_kfd.unref(by_pasid);
	return same;
}

static void kfdsync_hook_attach(struct kfdsync_hook *hook)
{
	int ret;

	lockdep_assert_held(&kfdsync_hooks_lock);

	if (hook->attached)
		return;

	/* A kprobe must not be registered again with its old address. */
	memset(&hook->kp, 0, sizeof(hook->kp));
	memset(&hook->krp, 0, sizeof(hook->krp));
	if (hook->pre) {
		hook->kp.symbol_name = hook->symbol;
		hook->kp.pre_handler = hook->pre;
		ret = register_kprobe(&hook->kp);
	} else {
		hook->krp.kp.symbol_name = hook->symbol;
		hook->krp.entry_handler = hook->entry;
		hook->krp.handler = hook->ret;
		hook->krp.data_size = hook->data_size;
		hook->krp.maxactive = KFDSYNC_HOOK_MAXACTIVE;
		ret = register_kretprobe(&hook->krp);
	}
	if (ret) {
		pr_info("hook %s (%s) not attached: %d\n",
			hook->name, hook->symbol, ret);
		return;
	}
	hook->attached = true;
	WRITE_ONCE(kfdsync_hooks_mask, kfdsync_hooks_mask | hook->bit);
}

static void kfdsync_hook_detach(struct kfdsync_hook *hook)
{
	lockdep_assert_held(&kfdsync_hooks_lock);

	if (!hook->attached)
		return;

	/* Waits for running handlers; fine on a probe marked gone. */
	if (hook->pre)
		unregister_kprobe(&hook->kp);
	else
		unregister_kretprobe(&hook->krp);
	hook->attached = false;
	WRITE_ONCE(kfdsync_hooks_mask, kfdsync_hooks_mask & ~hook->bit);
}

static void kfdsync_hooks_attach_all(void)
{
	u32 before = kfdsync_hooks_mask;
	unsigned int i;

	lockdep_assert_held(&kfdsync_hooks_lock);

	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++)
		kfdsync_hook_attach(&kfdsync_hooks[i]);
	if (kfdsync_hooks_mask != before)
		pr_info("amdkfd hooks attached: %#x of %#x\n",
			kfdsync_hooks_mask, kfdsync_hooks_supported());
}

static void kfdsync_hooks_detach_all(void)
{
	unsigned int i;

	lockdep_assert_held(&kfdsync_hooks_lock);

	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++)
		kfdsync_hook_detach(&kfdsync_hooks[i]);
}

/*
 * amdgpu, with a reference that keeps it from unloading, or NULL when it is
 * not loaded. Looks for its kobject in /sys/module (our own module's kset),
 * which exists from just after amdgpu is COMING until it is freed;
 * try_module_get() fails once it is GOING. Our kobject reference keeps the
 * struct module from being freed meanwhile: freeing a module waits for its
 * kobject.
 */
static struct module *kfdsync_amdgpu_get(void)
{
	struct kset *modules = THIS_MODULE->mkobj.kobj.kset;
	struct kobject *kobj;
	struct module *mod;

	kobj = kset_find_obj(modules, KFDSYNC_AMDGPU);
	if (!kobj)
		return NULL;
	mod = container_of(kobj, struct module_kobject, kobj)->mod;
	if (mod && !try_module_get(mod))
		mod = NULL;
	kobject_put(kobj);
	return mod;
}

static bool kfdsync_amdgpu_loaded(void)
{
	struct module *mod = kfdsync_amdgpu_get();

	module_put(mod);
	return mod;
}

/**
 * kfdsync_hooks_set_event() - set an amdkfd event, as AMDKFD_IOC_SET_EVENT
 * @mm: address space of the event's process
 * @id: the event id
 * @check: only check that it can be done now
 *
 * Only while the hooks are the source: then the CPU set is also counted by
 * kfdsync (the hook ignores this call, made from a worker without an mm,
 * and kfdsync_events_cpu_set() is called here instead). May sleep.
 *
 * Return: 0 or amdkfd's -errno (-EINVAL: no such event, or not settable
 * from the CPU); -EOPNOTSUPP if the hooks are not the source or amdkfd's
 * function was not found; -ESRCH if @mm has no amdkfd process.
 */
int kfdsync_hooks_set_event(const struct mm_struct *mm, u32 id, bool check)
{
	struct module *amdgpu;
	void *p;
	int ret = -EOPNOTSUPP;

	mutex_lock(&kfdsync_hooks_lock);
	if (!kfdsync_kfd.set_event || kfdsync_source() != KFDSYNC_SOURCE_HOOKS)
		goto out_unlock;
	/* amdgpu's exit runs before GOING is notified: hold it. */
	amdgpu = kfdsync_amdgpu_get();
	if (!amdgpu)
		goto out_unlock;

	p = kfdsync_kfd.by_mm(mm);
	if (p) {
		ret = check ? 0 : kfdsync_kfd.set_event(p, id);
		kfdsync_kfd.unref(p);
	} else {
		ret = -ESRCH;
	}
	module_put(amdgpu);
out_unlock:
	mutex_unlock(&kfdsync_hooks_lock);

	if (!check && !ret)
		kfdsync_events_cpu_set(mm, id);
	return ret;
}

static void kfdsync_amdkfd_arrived(void)
{
	lockdep_assert_held(&kfdsync_hooks_lock);

	WRITE_ONCE(kfdsync_amdkfd_live, true);
	if (kfdsync_hooks_enabled) {
		if (!kfdsync_kfd.by_pasid)
			kfdsync_kfd_resolve();
		kfdsync_hooks_attach_all();
	}
}

static void kfdsync_amdkfd_gone(void)
{
	lockdep_assert_held(&kfdsync_hooks_lock);

	WRITE_ONCE(kfdsync_amdkfd_live, false);
	kfdsync_hooks_detach_all();
	/* No handler runs any more: forget amdkfd's functions. */
	memset(&kfdsync_kfd, 0, sizeof(kfdsync_kfd));
	/* amdkfd's events are gone with it. */
	kfdsync_events_fail(0, true, -EIO);
}

static int kfdsync_module_notify(struct notifier_block *nb,
				 unsigned long action, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, KFDSYNC_AMDGPU))
		return NOTIFY_DONE;

	switch (action) {
	case MODULE_STATE_LIVE:
		mutex_lock(&kfdsync_hooks_lock);
		kfdsync_amdkfd_arrived();
		mutex_unlock(&kfdsync_hooks_lock);
		break;
	case MODULE_STATE_GOING:
		/* Also sent when amdgpu's init fails after COMING. */
		mutex_lock(&kfdsync_hooks_lock);
		kfdsync_amdkfd_gone();
		mutex_unlock(&kfdsync_hooks_lock);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block kfdsync_module_nb = {
	.notifier_call = kfdsync_module_notify,
};

static int kfdsync_hooks_debugfs_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	mutex_lock(&kfdsync_hooks_lock);
	seq_printf(m, "# amdkfd %s, mode %s\n",
		   kfdsync_amdkfd_live ? "present" : "absent",
		   kfdsync_hooks_enabled ? "hooks" : "relay (hooks=N)");
	seq_puts(m, "# name            symbol                                    state     hits\n");
	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++) {
		struct kfdsync_hook *hook = &kfdsync_hooks[i];

		seq_printf(m, "%-17s %-41s %-9s %lld\n", hook->name,
			   hook->symbol,
			   hook->attached ? "attached" : "detached",
			   (long long)atomic64_read(&hook->hits));
	}
	mutex_unlock(&kfdsync_hooks_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsync_hooks_debugfs);

/**
 * kfdsync_hooks_attached() - hooks attached right now
 *
 * Return: KFDSYNC_HOOK_* bits; a snapshot, may change at any time.
 */
u32 kfdsync_hooks_attached(void)
{
	return READ_ONCE(kfdsync_hooks_mask);
}

/**
 * kfdsync_hooks_supported() - hooks this module knows
 *
 * Return: KFDSYNC_HOOK_* bits.
 */
u32 kfdsync_hooks_supported(void)
{
	u32 mask = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kfdsync_hooks); i++)
		mask |= kfdsync_hooks[i].bit;
	return mask;
}

/**
 * kfdsync_hooks_amdkfd_present() - whether amdgpu (with amdkfd) is loaded
 *
 * Return: true while amdgpu is loaded or loading; a snapshot, may change at
 * any time.
 */
bool kfdsync_hooks_amdkfd_present(void)
{
	return READ_ONCE(kfdsync_amdkfd_live);
}

/**
 * kfdsync_hooks_init() - start following amdgpu and attach the hooks
 * @enable: attach hooks; false forces relay mode (amdgpu's presence is
 *	    still tracked, nothing is attached)
 * @debugfs_root: kfdsync's debugfs directory, for the "hooks" file
 *
 * Return: 0, or -errno if the module notifier cannot be registered. Hooks
 * that cannot be attached are not an error.
 */
int kfdsync_hooks_init(bool enable, struct dentry *debugfs_root)
{
	int ret;

	kfdsync_hooks_enabled = enable;

	/* Notifier first: amdgpu loading from now on cannot be missed. */
	ret = register_module_notifier(&kfdsync_module_nb);
	if (ret)
		return ret;

	mutex_lock(&kfdsync_hooks_lock);
	if (kfdsync_amdgpu_loaded())
		kfdsync_amdkfd_arrived();
	else
		pr_info("amdgpu not loaded, hooks attach when it is\n");
	mutex_unlock(&kfdsync_hooks_lock);

	debugfs_create_file("hooks", 0444, debugfs_root, NULL,
			    &kfdsync_hooks_debugfs_fops);
	return 0;
}

/**
 * kfdsync_hooks_exit() - stop following amdgpu and detach every hook
 *
 * On return no handler runs and none will.
 */
void kfdsync_hooks_exit(void)
{
	/* Waits for a running callback; none starts after it returns. */
	unregister_module_notifier(&kfdsync_module_nb);

	mutex_lock(&kfdsync_hooks_lock);
	kfdsync_amdkfd_gone();
	mutex_unlock(&kfdsync_hooks_lock);
}
