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
 * unregisters them.
 *
 * The handlers only count hits for now. They run with preemption disabled,
 * possibly in interrupt context: no sleeping, no locks beyond atomics.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include <linux/kfdsync.h>

#include "kfdsync_internal.h"

/* The module that carries amdkfd. */
#define KFDSYNC_AMDGPU		"amdgpu"

/**
 * struct kfdsync_hook - one kprobe on an amdkfd function
 * @name:	Short name, for debugfs.
 * @symbol:	"module:function", as kprobes resolve it.
 * @bit:	KFDSYNC_HOOK_* bit of the hook.
 * @kp:		The kprobe; only valid while @attached.
 * @attached:	Whether @kp is registered.
 * @hits:	Times the handler ran since kfdsync was loaded.
 *
 * @kp and @attached are protected by kfdsync_hooks_lock; @hits is atomic.
 */
struct kfdsync_hook {
	const char *name;
	const char *symbol;
	u32 bit;
	struct kprobe kp;
	bool attached;
	atomic64_t hits;
};

#define KFDSYNC_HOOK(_name, _fn, _bit) {			\
	.name = _name,						\
	.symbol = KFDSYNC_AMDGPU ":" _fn,			\
	.bit = _bit,						\
	.hits = ATOMIC64_INIT(0),				\
}

static struct kfdsync_hook kfdsync_hooks[] = {
	KFDSYNC_HOOK("gpu_interrupt", "kfd_signal_event_interrupt",
		     KFDSYNC_HOOK_GPU_INTERRUPT),
	KFDSYNC_HOOK("cpu_set", "kfd_set_event", KFDSYNC_HOOK_CPU_SET),
	KFDSYNC_HOOK("hw_exception", "kfd_signal_hw_exception_event",
		     KFDSYNC_HOOK_HW_EXCEPTION),
	KFDSYNC_HOOK("vm_fault", "kfd_signal_vm_fault_event",
		     KFDSYNC_HOOK_VM_FAULT),
	KFDSYNC_HOOK("reset", "kfd_signal_reset_event", KFDSYNC_HOOK_RESET),
	KFDSYNC_HOOK("poison", "kfd_signal_poison_consumed_event",
		     KFDSYNC_HOOK_POISON),
};

/* Serialises attach and detach: init, exit and the module notifier. */
static DEFINE_MUTEX(kfdsync_hooks_lock);

/* Whether to attach at all (module parameter hooks); set once at init. */
static bool kfdsync_hooks_enabled;

/* amdgpu is loaded; written under kfdsync_hooks_lock, read locklessly. */
static bool kfdsync_amdkfd_live;

/* KFDSYNC_HOOK_* bits attached; written under kfdsync_hooks_lock. */
static u32 kfdsync_hooks_mask;

static int kfdsync_hook_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kfdsync_hook *hook = container_of(kp, struct kfdsync_hook, kp);

	atomic64_inc(&hook->hits);
	return 0;
}

NOKPROBE_SYMBOL(kfdsync_hook_pre);

static void kfdsync_hook_attach(struct kfdsync_hook *hook)
{
	int ret;

	lockdep_assert_held(&kfdsync_hooks_lock);

	if (hook->attached)
		return;

	/* A kprobe must not be registered again with its old address. */
	memset(&hook->kp, 0, sizeof(hook->kp));
	hook->kp.symbol_name = hook->symbol;
	hook->kp.pre_handler = kfdsync_hook_pre;

	ret = register_kprobe(&hook->kp);
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
	unregister_kprobe(&hook->kp);
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
 * Is amdgpu loaded? Look for its kobject in /sys/module (our own module's
 * kset), which exists from just after amdgpu is COMING until it is freed, and
 * check that it is not GOING. Our kobject reference keeps the struct module
 * from being freed meanwhile: freeing a module waits for its kobject.
 */
static bool kfdsync_amdgpu_loaded(void)
{
	struct kset *modules = THIS_MODULE->mkobj.kobj.kset;
	struct kobject *kobj;
	struct module *mod;
	bool loaded = false;

	kobj = kset_find_obj(modules, KFDSYNC_AMDGPU);
	if (!kobj)
		return false;
	mod = container_of(kobj, struct module_kobject, kobj)->mod;
	if (mod && try_module_get(mod)) {
		loaded = true;
		module_put(mod);
	}
	kobject_put(kobj);
	return loaded;
}

static void kfdsync_amdkfd_arrived(void)
{
	lockdep_assert_held(&kfdsync_hooks_lock);

	WRITE_ONCE(kfdsync_amdkfd_live, true);
	if (kfdsync_hooks_enabled)
		kfdsync_hooks_attach_all();
}

static void kfdsync_amdkfd_gone(void)
{
	lockdep_assert_held(&kfdsync_hooks_lock);

	WRITE_ONCE(kfdsync_amdkfd_live, false);
	kfdsync_hooks_detach_all();
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
