// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: AMD KFD events as dma_fence / sync_file.
 */

/**
 * DOC: Overview
 *
 * kfdsync bridges amdkfd events (the completion signals of ROCm/HSA work,
 * handled by amdkfd inside amdgpu.ko) to the kernel's explicit
 * synchronisation objects, so that a compute producer can hand its
 * completion to a display or graphics consumer as a sync_file.
 *
 * The module is one misc device, /dev/kfdsync. Every open() creates a
 * context (&struct kfdsync_ctx) bound to the calling process: its thread
 * group and its address space (mm). A context only ever acts for that
 * process, on that process's own events and memory, and everything it may
 * create is bounded by limits that are module parameters. The number of
 * open contexts is itself limited (max_contexts). Closing the file ends the
 * context.
 *
 * kfdsync learns that an event may have fired from hooks: kprobes on
 * amdkfd's functions that signal events (GPU interrupt, CPU set) and report
 * errors (hardware exception, VM fault, GPU reset, poison). A hook is only a
 * hint; the truth is always read from the event's signal slot. The hooks are
 * attached whenever amdgpu is loaded and detached when it goes (see
 * kfdsync_hooks.c). Where hooks cannot be used, or with the module parameter
 * hooks=N, userspace relays signals instead ("relay mode").
 *
 * A context registers signal events of its own process
 * (KFDSYNC_IOCTL_EVENT_REGISTER, kfdsync_event.c): kfdsync finds the event's
 * signal slot in the caller's own address space and keeps a reference to
 * its page. Each registered event has an age, the signals kfdsync saw since
 * the registration, and its own dma_fence context. "The next signal of
 * event E after age A" is exported as a sync_file or as an eventfd wake-up
 * (kfdsync_fence.c); a fence whose signal already happened is born
 * signalled, so exporting after submitting work is race-free. Every fence
 * ends: on the signal, or with -ETIMEDOUT (its watchdog), -ECANCELED (event
 * unregistered, context closed, owner's address space gone), -EIO (hardware
 * exception, poison, GPU reset, amdgpu unloaded) or -EFAULT (GPU memory
 * fault). Every fence holds a reference to the module.
 *
 * The other direction is an import (KFDSYNC_IOCTL_IMPORT_SYNC_FILE,
 * kfdsync_import.c): when any fence ends, kfdsync writes a value into the
 * caller's pinned memory (a GPU queue waiting on it proceeds), sets one of
 * the caller's amdkfd events, and/or passes the fence's error on to a
 * registered event.
 *
 * Userspace talks to the module with ioctls defined in
 * include/uapi/linux/kfdsync.h. There is one handler per ioctl,
 * kfdsync_ioctl_<verb>(), called from a single dispatcher; each handler
 * rejects unknown flags and non-zero padding first, then looks up what it
 * needs, then works. Unknown requests return -ENOTTY.
 *
 * An open file holds a reference to the module (the misc device's fops
 * owner), and so does every fence, so kfdsync cannot be unloaded while any
 * context or any of its fences exists.
 *
 * <debugfs>/kfdsync/contexts lists the open contexts and their source,
 * <debugfs>/kfdsync/events the registered events with their ages, slots and
 * pending fences, <debugfs>/kfdsync/hooks each hook, whether it is attached,
 * and how often it fired.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-fence.h>
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/version.h>

#include <linux/kfdsync.h>

#include "kfdsync_internal.h"

/*
 * Module parameters.
 *
 * hooks cannot change at runtime (0444). The limits may be changed through
 * sysfs (0644): each write is checked against the parameter's bounds, and a
 * context takes its per-context limits when it is opened, so a change only
 * applies to contexts opened afterwards (max_contexts: to later opens).
 */

static bool kfdsync_param_hooks = true;
module_param_named(hooks, kfdsync_param_hooks, bool, 0444);
MODULE_PARM_DESC(hooks,
		 "Attach kprobes to amdkfd; N forces relay mode (default Y)");

/**
 * struct kfdsync_param_range - an unsigned int parameter with bounds
 * @val: the value
 * @min: smallest accepted value
 * @max: largest accepted value
 */
struct kfdsync_param_range {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

static int kfdsync_param_range_set(const char *buf,
				   const struct kernel_param *kp)
{
	const struct kfdsync_param_range *range = kp->arg;
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 0, &val);
	if (ret)
		return ret;
	if (val < range->min || val > range->max)
		return -ERANGE;
	WRITE_ONCE(*range->val, val);
	return 0;
}

static int kfdsync_param_range_get(char *buf, const struct kernel_param *kp)
{
	const struct kfdsync_param_range *range = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*range->val));
}

static const struct kernel_param_ops kfdsync_param_range_ops = {
	.set = kfdsync_param_range_set,
	.get = kfdsync_param_range_get,
};

static unsigned int kfdsync_max_contexts = 1024;
static struct kfdsync_param_range kfdsync_max_contexts_range = {
	.val = &kfdsync_max_contexts, .min = 1, .max = 65536,
};
module_param_cb(max_contexts, &kfdsync_param_range_ops,
		&kfdsync_max_contexts_range, 0644);
MODULE_PARM_DESC(max_contexts,
		 "Open contexts, system-wide (1-65536, default 1024)");

static unsigned int kfdsync_max_events = 4096;
static struct kfdsync_param_range kfdsync_max_events_range = {
	.val = &kfdsync_max_events, .min = 1, .max = 65536,
};
module_param_cb(max_events, &kfdsync_param_range_ops,
		&kfdsync_max_events_range, 0644);
MODULE_PARM_DESC(max_events,
		 "Events one context may register (1-65536, default 4096)");

static unsigned int kfdsync_max_fences = 1024;
static struct kfdsync_param_range kfdsync_max_fences_range = {
	.val = &kfdsync_max_fences, .min = 1, .max = 65536,
};
module_param_cb(max_fences, &kfdsync_param_range_ops,
		&kfdsync_max_fences_range, 0644);
MODULE_PARM_DESC(max_fences,
		 "Unsignalled fences per context (1-65536, default 1024)");

static unsigned int kfdsync_max_imports = 1024;
static struct kfdsync_param_range kfdsync_max_imports_range = {
	.val = &kfdsync_max_imports, .min = 1, .max = 65536,
};
module_param_cb(max_imports, &kfdsync_param_range_ops,
		&kfdsync_max_imports_range, 0644);
MODULE_PARM_DESC(max_imports,
		 "Pending sync_file imports per context, each pinning one page (1-65536, default 1024)");

static unsigned int kfdsync_watchdog_ms = 10000;
static struct kfdsync_param_range kfdsync_watchdog_ms_range = {
	.val = &kfdsync_watchdog_ms, .min = 10, .max = 3600000,
};
module_param_cb(watchdog_ms, &kfdsync_param_range_ops,
		&kfdsync_watchdog_ms_range, 0644);
MODULE_PARM_DESC(watchdog_ms,
		 "Default fence watchdog in ms, capped by watchdog_max_ms (10-3600000, default 10000)");

static unsigned int kfdsync_watchdog_max_ms = 60000;
static struct kfdsync_param_range kfdsync_watchdog_max_ms_range = {
	.val = &kfdsync_watchdog_max_ms, .min = 10, .max = 3600000,
};
module_param_cb(watchdog_max_ms, &kfdsync_param_range_ops,
		&kfdsync_watchdog_max_ms_range, 0644);
MODULE_PARM_DESC(watchdog_max_ms,
		 "Largest per-fence watchdog in ms (10-3600000, default 60000)");

/**
 * kfdsync_watchdog_default_ms() - the default fence watchdog, now
 *
 * Return: watchdog_ms, capped by watchdog_max_ms.
 */
unsigned int kfdsync_watchdog_default_ms(void)
{
	return min(READ_ONCE(kfdsync_watchdog_ms),
		   READ_ONCE(kfdsync_watchdog_max_ms));
}

/* The open contexts; kfdsync_ctx_lock protects the list, count and ids. */
static DEFINE_MUTEX(kfdsync_ctx_lock);
static LIST_HEAD(kfdsync_ctx_list);
static unsigned int kfdsync_ctx_count;
static u64 kfdsync_ctx_next_id;

static struct dentry *kfdsync_debugfs;

/**
 * kfdsync_ctx_release() - free a context; kref release function
 * @ref: &kfdsync_ctx.ref of the context
 *
 * Called by kfdsync_ctx_put() for the last reference. The context is no
 * longer on the context list.
 */
void kfdsync_ctx_release(struct kref *ref)
{
	struct kfdsync_ctx *ctx = container_of(ref, struct kfdsync_ctx, ref);

	mmdrop(ctx->mm);
	put_pid(ctx->tgid);
	/* The hooks may still be walking past it. */
	kfree_rcu(ctx, rcu);
}

static struct kfdsync_ctx *kfdsync_ctx_create(void)
{
	struct kfdsync_ctx *ctx;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return ERR_PTR(-ENOMEM);

	kref_init(&ctx->ref);
	ctx->tgid = get_task_pid(current, PIDTYPE_TGID);
	ctx->mm = current->mm;
	mmgrab(ctx->mm);
	get_task_comm(ctx->comm, current);
	ctx->max_events = READ_ONCE(kfdsync_max_events);
	ctx->max_fences = READ_ONCE(kfdsync_max_fences);
	ctx->max_imports = READ_ONCE(kfdsync_max_imports);
	ctx->watchdog_max_ms = READ_ONCE(kfdsync_watchdog_max_ms);
	ctx->watchdog_ms = min(READ_ONCE(kfdsync_watchdog_ms),
			       ctx->watchdog_max_ms);
	INIT_LIST_HEAD(&ctx->node);

	ret = kfdsync_ctx_events_init(ctx);
	if (ret) {
		kfdsync_ctx_put(ctx);
		return ERR_PTR(ret);
	}

	mutex_lock(&kfdsync_ctx_lock);
	if (kfdsync_ctx_count >= READ_ONCE(kfdsync_max_contexts)) {
		mutex_unlock(&kfdsync_ctx_lock);
		kfdsync_ctx_events_fini(ctx);
		kfdsync_ctx_put(ctx);
		return ERR_PTR(-ENFILE);
	}
	ctx->id = kfdsync_ctx_next_id++;
	list_add_tail(&ctx->node, &kfdsync_ctx_list);
	kfdsync_ctx_count++;
	mutex_unlock(&kfdsync_ctx_lock);

	return ctx;
}

static void kfdsync_ctx_destroy(struct kfdsync_ctx *ctx)
{
	mutex_lock(&kfdsync_ctx_lock);
	list_del(&ctx->node);
	kfdsync_ctx_count--;
	mutex_unlock(&kfdsync_ctx_lock);

	/* Cancels every pending import and fence of the context. */
	kfdsync_ctx_imports_fini(ctx);
	kfdsync_ctx_events_fini(ctx);
	kfdsync_ctx_put(ctx);
}

/*
 * open() errors: -EINVAL from a task without an address space (kernel
 * thread), -ENOMEM, -ENFILE when max_contexts contexts are open.
 */
static int kfdsync_open(struct inode *inode, struct file *file)
{
	struct kfdsync_ctx *ctx;
	int ret;

	/* A context is bound to an address space: kernel threads have none. */
	if (!current->mm)
		return -EINVAL;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;

	ctx = kfdsync_ctx_create();
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);

	file->private_data = ctx;
	return 0;
}

static int kfdsync_release(struct inode *inode, struct file *file)
{
	kfdsync_ctx_destroy(file->private_data);
	return 0;
}

static int kfdsync_ioctl_info(struct kfdsync_ctx *ctx, void __user *uarg)
{
	struct kfdsync_info info;

	if (copy_from_user(&info, uarg, sizeof(info)))
		return -EFAULT;
	if (info.flags || info.pad)
		return -EINVAL;

	memset(&info, 0, sizeof(info));
	info.abi_version = KFDSYNC_ABI_VERSION;
	/* The version of the headers the module was built against. */
	info.kernel_version = KERNEL_VERSION(LINUX_VERSION_MAJOR,
					     LINUX_VERSION_PATCHLEVEL,
					     LINUX_VERSION_SUBLEVEL);
	info.hooks = kfdsync_hooks_attached();
	info.hooks_supported = kfdsync_hooks_supported();
	if (kfdsync_hooks_amdkfd_present())
		info.info_flags |= KFDSYNC_INFO_AMDKFD_PRESENT;
	if (!kfdsync_param_hooks)
		info.info_flags |= KFDSYNC_INFO_RELAY_FORCED;
	info.max_contexts = READ_ONCE(kfdsync_max_contexts);
	info.max_events = ctx->max_events;
	info.max_fences = ctx->max_fences;
	info.watchdog_ms = ctx->watchdog_ms;
	info.watchdog_max_ms = ctx->watchdog_max_ms;
	strscpy(info.release, init_utsname()->release, sizeof(info.release));

	if (copy_to_user(uarg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

static int kfdsync_ioctl_event_register(struct kfdsync_ctx *ctx,
					void __user *uarg)
{
	struct kfdsync_event_register args;
	int ret;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;
	if (!kfdsync_ctx_is_caller(ctx))
		return -EPERM;

	ret = kfdsync_event_register(ctx, args.event_id, args.slot_addr);
	if (ret)
		return ret;

	args.age = 0;
	if (copy_to_user(uarg, &args, sizeof(args))) {
		kfdsync_event_unregister(ctx, args.event_id);
		return -EFAULT;
	}
	return 0;
}

static int kfdsync_ioctl_event_unregister(struct kfdsync_ctx *ctx,
					  void __user *uarg)
{
	struct kfdsync_event_unregister args;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;
	if (!kfdsync_ctx_is_caller(ctx))
		return -EPERM;

	return kfdsync_event_unregister(ctx, args.event_id);
}

static int kfdsync_ioctl_event_query(struct kfdsync_ctx *ctx,
				     void __user *uarg)
{
	struct kfdsync_event_query args;
	int error, ret;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;
	if (!kfdsync_ctx_is_caller(ctx))
		return -EPERM;

	ret = kfdsync_event_query(ctx, args.event_id, &args.age, &error,
				  &args.pending);
	if (ret)
		return ret;
	args.error = error;
	args.source = kfdsync_source();
	args.pad = 0;

	if (copy_to_user(uarg, &args, sizeof(args)))
		return -EFAULT;
	return 0;
}

static int kfdsync_ioctl_export_sync_file(struct kfdsync_ctx *ctx,
					  void __user *uarg)
{
	struct kfdsync_export args;
	struct dma_fence *fence;
	int fd;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags || args.pad)
		return -EINVAL;
	if (!kfdsync_ctx_is_caller(ctx))
		return -EPERM;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;

	fence = kfdsync_fence_create(ctx, args.event_id, args.age,
				     args.deadline_ns, NULL);
	if (IS_ERR(fence)) {
		put_unused_fd(fd);
		return PTR_ERR(fence);
	}

	args.fd = fd;
	return kfdsync_sync_file_install(fd, fence, NULL, uarg, &args,
					 sizeof(args));
}

static int kfdsync_ioctl_export_eventfd(struct kfdsync_ctx *ctx,
					void __user *uarg)
{
	struct kfdsync_export args;
	struct eventfd_ctx *eventfd;
	struct dma_fence *fence;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags || args.pad)
		return -EINVAL;
	if (!kfdsync_ctx_is_caller(ctx))
		return -EPERM;

	eventfd = eventfd_ctx_fdget(args.fd);
	if (IS_ERR(eventfd))
		return PTR_ERR(eventfd);

	/* On success the fence owns the eventfd reference. */
	fence = kfdsync_fence_create(ctx, args.event_id, args.age,
				     args.deadline_ns, eventfd);
	if (IS_ERR(fence)) {
		eventfd_ctx_put(eventfd);
		return PTR_ERR(fence);
	}
	dma_fence_put(fence);
	return 0;
}

static int kfdsync_ioctl_relay_signal(struct kfdsync_ctx *ctx,
				      void __user *uarg)
{
	struct kfdsync_relay_signal args;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags)
		return -EINVAL;
	if (!kfdsync_ctx_is_caller(ctx))
		return -EPERM;

	return kfdsync_event_relay(ctx, args.event_id);
}

static int kfdsync_ioctl_import_sync_file(struct kfdsync_ctx *ctx,
					  void __user *uarg)
{
	struct kfdsync_import args;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	/* Checks the arguments, then the caller, like the other handlers. */
	return kfdsync_import(ctx, &args);
}

static long kfdsync_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct kfdsync_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KFDSYNC_IOCTL_INFO:
		return kfdsync_ioctl_info(ctx, uarg);
	case KFDSYNC_IOCTL_EVENT_REGISTER:
		return kfdsync_ioctl_event_register(ctx, uarg);
	case KFDSYNC_IOCTL_EVENT_UNREGISTER:
		return kfdsync_ioctl_event_unregister(ctx, uarg);
	case KFDSYNC_IOCTL_EVENT_QUERY:
		return kfdsync_ioctl_event_query(ctx, uarg);
	case KFDSYNC_IOCTL_EXPORT_SYNC_FILE:
		return kfdsync_ioctl_export_sync_file(ctx, uarg);
	case KFDSYNC_IOCTL_EXPORT_EVENTFD:
		return kfdsync_ioctl_export_eventfd(ctx, uarg);
	case KFDSYNC_IOCTL_RELAY_SIGNAL:
		return kfdsync_ioctl_relay_signal(ctx, uarg);
	case KFDSYNC_IOCTL_IMPORT_SYNC_FILE:
		return kfdsync_ioctl_import_sync_file(ctx, uarg);
	case KFDSYNC_IOCTL_EXPORT_CONDITION:
		return kfdsync_ioctl_export_condition(ctx, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations kfdsync_fops = {
	.owner = THIS_MODULE,
	.open = kfdsync_open,
	.release = kfdsync_release,
	.unlocked_ioctl = kfdsync_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* Kernel default mode 0600; the udev rule opens it up like DRM nodes. */
static struct miscdevice kfdsync_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KBUILD_MODNAME,
	.fops = &kfdsync_fops,
};

static int kfdsync_contexts_show(struct seq_file *m, void *unused)
{
	struct kfdsync_ctx *ctx;

	mutex_lock(&kfdsync_ctx_lock);
	seq_printf(m, "# %u of %u contexts\n", kfdsync_ctx_count,
		   READ_ONCE(kfdsync_max_contexts));
	seq_puts(m, "# id       tgid     comm             source events pending max_events max_fences watchdog_ms watchdog_max_ms imports max_imports\n");
	list_for_each_entry(ctx, &kfdsync_ctx_list, node)
		seq_printf(m, "%-8llu %-8d %-16s %-6s %-6u %-7d %-10u %-10u %-11u %-15u %-7u %u\n",
			   ctx->id, pid_nr(ctx->tgid), ctx->comm,
			   kfdsync_source() == KFDSYNC_SOURCE_HOOKS ?
			   "hooks" : "relay", READ_ONCE(ctx->n_events),
			   atomic_read(&ctx->n_pending), ctx->max_events,
			   ctx->max_fences, ctx->watchdog_ms,
			   ctx->watchdog_max_ms, READ_ONCE(ctx->n_imports),
			   ctx->max_imports);
	mutex_unlock(&kfdsync_ctx_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kfdsync_contexts);

static int __init kfdsync_init(void)
{
	int ret;

	/* debugfs is optional: its failures are not ours to handle. */
	kfdsync_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("contexts", 0444, kfdsync_debugfs, NULL,
			    &kfdsync_contexts_fops);
	kfdsync_events_debugfs_init(kfdsync_debugfs);

	ret = kfdsync_import_init();
	if (ret)
		goto err_debugfs_remove;

	ret = kfdsync_hooks_init(kfdsync_param_hooks, kfdsync_debugfs);
	if (ret)
		goto err_import_exit;

	ret = misc_register(&kfdsync_misc);
	if (ret)
		goto err_hooks_exit;

	ret = kfdsync_timeline_init(kfdsync_debugfs);
	if (ret)
		goto err_misc_deregister;

	pr_info("ABI %u, /dev/%s ready, hooks %#x, %s\n",
		KFDSYNC_ABI_VERSION, kfdsync_misc.name,
		kfdsync_hooks_attached(),
		kfdsync_param_hooks ? "hook mode" : "relay mode forced");
	return 0;

err_misc_deregister:
	misc_deregister(&kfdsync_misc);
err_hooks_exit:
	kfdsync_hooks_exit();
err_import_exit:
	kfdsync_import_exit();
err_debugfs_remove:
	debugfs_remove_recursive(kfdsync_debugfs);
	return ret;
}

static void __exit kfdsync_exit(void)
{
	kfdsync_timeline_exit();
	misc_deregister(&kfdsync_misc);
	kfdsync_hooks_exit();
	kfdsync_import_exit();
	debugfs_remove_recursive(kfdsync_debugfs);
	/* Every fence is gone (each held a module reference): free them. */
	kfdsync_fence_exit();
}

module_init(kfdsync_init);
module_exit(kfdsync_exit);

MODULE_DESCRIPTION("AMD KFD events as dma_fence / sync_file");
MODULE_LICENSE("GPL");
