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
 * The module is one misc device, /dev/kfdsync, plus the CPU timelines of
 * /dev/kfdsync_timeline (kfdsync_timeline.c). Every open() of /dev/kfdsync
 * creates a context (&struct kfdsync_ctx, kfdsync_ctx.c) bound to the
 * calling process: its thread group and its address space (mm). A context
 * only ever acts for that process, on that process's own events and
 * memory, and everything it may create is bounded: per context, and per
 * user (kfdsync_user.c), so that one user cannot starve another.
 *
 * kfdsync learns of signals from hooks: kprobes on the amdkfd functions
 * that acknowledge GPU signals and set events from the CPU, that destroy
 * events and free processes, and that report errors (hardware exception,
 * VM fault, GPU reset, poison), placed only on kernel releases whose amdkfd
 * kfdsync verified, all or none (kfdsync_amdkfd.c). A GPU signal is counted
 * from the event's signal slot itself, exactly once per write amdkfd
 * acknowledges (kfdsync_slot.c). Where hooks cannot be used, or with the
 * module parameter hooks=N, userspace relays signals instead ("relay
 * mode").
 *
 * A context registers signal events of its own process
 * (KFDSYNC_IOCTL_EVENT_REGISTER, kfdsync_event.c). Each registered event
 * has an age, the signals counted since the registration, and its own
 * dma_fence context. "The next signal of event E after age A" is exported
 * as a sync_file or as an eventfd wake-up (kfdsync_fence.c); a fence whose
 * signal already happened is born signalled, so exporting after submitting
 * work is race-free. Every fence ends: on the signal, or with -ETIMEDOUT
 * (its watchdog), -ECANCELED (event unregistered or destroyed, context
 * closed, owner's address space gone), -EIO (hardware exception, poison,
 * GPU reset, amdkfd freeing the process, amdgpu unloaded) or -EFAULT (GPU
 * memory fault); fences of one event end in order. Every fence holds a
 * reference to the module.
 *
 * The other direction is an import (KFDSYNC_IOCTL_IMPORT_SYNC_FILE,
 * kfdsync_import.c): when any fence ends, kfdsync writes a value into the
 * caller's pinned memory (a GPU queue waiting on it proceeds), sets one of
 * the caller's amdkfd events, and/or passes the fence's error on to a
 * registered event.
 *
 * Userspace talks to the module with ioctls defined in
 * include/uapi/linux/kfdsync.h, through one table-driven dispatcher
 * (kfdsync_ioctl.c). Unknown requests return -ENOTTY.
 *
 * Calls go one way: kfdsync_ioctl.c and the file operations here on top;
 * kfdsync_import.c, kfdsync_timeline.c; kfdsync_ctx.c; kfdsync_event.c;
 * kfdsync_fence.c and kfdsync_slot.c; and at the bottom the leaves
 * kfdsync_amdkfd.c, kfdsync_watch.c, kfdsync_pin.c, kfdsync_watchdog.c,
 * kfdsync_user.c, kfdsync_params.c (see README.md's map).
 *
 * An open file holds a reference to the module (the misc device's fops
 * owner), and so does every fence, so kfdsync cannot be unloaded while any
 * context or any of its fences exists.
 *
 * <debugfs>/kfdsync/contexts lists the open contexts, <debugfs>/kfdsync/events
 * the registered events with their sources, ages, slots and pending fences,
 * <debugfs>/kfdsync/hooks each hook, whether it is attached, how often it
 * fired and missed, <debugfs>/kfdsync/timelines the CPU timelines. debugfs
 * is for people; /proc/PID/fdinfo/FD of a context or timeline has the
 * same facts as "kfdsync-" keys, an ABI (include/uapi/linux/kfdsync.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include <linux/kfdsync.h>

#include "kfdsync_amdkfd.h"
#include "kfdsync_ctx.h"
#include "kfdsync_fence.h"
#include "kfdsync_import.h"
#include "kfdsync_ioctl.h"
#include "kfdsync_params.h"
#include "kfdsync_slot.h"
#include "kfdsync_timeline.h"
#include "kfdsync_watchdog.h"

#define CREATE_TRACE_POINTS
#include "kfdsync_trace.h"

static struct dentry *kfdsync_debugfs;

/*
 * open() errors: -EINVAL from a task without an address space (kernel
 * thread), -ENOMEM, -EMFILE when the user has max_user_contexts contexts
 * open, -ENFILE at max_contexts system-wide.
 */
static int kfdsync_open(struct inode *inode, struct file *file)
{
	struct kfdsync_limits limits;
	struct kfdsync_ctx *ctx;
	int ret;

	/* A context is bound to an address space: kernel threads have none. */
	if (!current->mm)
		return -EINVAL;

	ret = nonseekable_open(inode, file);
	if (ret)
		return ret;

	kfdsync_params_ctx(&limits);
	ctx = kfdsync_ctx_create(&limits, kfdsync_param_max_contexts(),
				 kfdsync_param_max_user_contexts());
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

/* /proc/PID/fdinfo/FD: the context's "kfdsync-" keys (uAPI header). */
static void kfdsync_show_fdinfo(struct seq_file *m, struct file *file)
{
	kfdsync_ctx_show_fdinfo(m, file->private_data);
}

static const struct file_operations kfdsync_fops = {
	.owner = THIS_MODULE,
	.open = kfdsync_open,
	.release = kfdsync_release,
	.unlocked_ioctl = kfdsync_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = kfdsync_show_fdinfo,
};

/* Kernel default mode 0600; the udev rule opens it up like DRM nodes. */
static struct miscdevice kfdsync_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KBUILD_MODNAME,
	.fops = &kfdsync_fops,
};

/* amdgpu is going: every amdkfd event is gone, whatever counted it. */
static void kfdsync_amdkfd_gone(void)
{
	kfdsync_slot_all_end(-EIO);
	kfdsync_ctxs_amdkfd_gone();
}

static const struct kfdsync_amdkfd_ops kfdsync_amdkfd_ops = {
	.gpu_ack = kfdsync_slot_gpu_ack,
	.gpu_unwritten = kfdsync_slot_gpu_unwritten,
	.cpu_set = kfdsync_slot_cpu_set,
	.event_destroy = kfdsync_slot_event_destroy,
	.process_free = kfdsync_slot_process_free,
	.process_error = kfdsync_slot_process_error,
	.device_reset = kfdsync_slot_device_reset,
	.gone = kfdsync_amdkfd_gone,
};

static int __init kfdsync_init(void)
{
	struct kfdsync_amdkfd_state st;
	int ret;

	/* debugfs is optional: its failures are not ours to handle. */
	kfdsync_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	kfdsync_ctx_debugfs_init(kfdsync_debugfs);

	ret = kfdsync_slot_init(kfdsync_fence_put_done);
	if (ret)
		goto err_debugfs_remove;
	ret = kfdsync_watchdog_wq_init();
	if (ret)
		goto err_slot_exit;
	ret = kfdsync_import_init();
	if (ret)
		goto err_watchdog_exit;
	ret = kfdsync_amdkfd_init(&kfdsync_amdkfd_ops, kfdsync_param_hooks(),
				  kfdsync_param_assume_unverified(),
				  kfdsync_param_fail_hook(), kfdsync_debugfs);
	if (ret)
		goto err_import_exit;

	/* The devices last: everything they use is ready. */
	ret = kfdsync_timeline_init(kfdsync_debugfs);
	if (ret)
		goto err_amdkfd_exit;
	ret = misc_register(&kfdsync_misc);
	if (ret)
		goto err_timeline_exit;

	kfdsync_amdkfd_state(&st);
	pr_info("ABI %u, /dev/%s ready, %s%s%s\n", KFDSYNC_ABI_VERSION,
		kfdsync_misc.name, st.active ? "hooks" : "relay mode",
		st.active ? "" : ": ", st.active ? "" : st.detail);
	return 0;

err_timeline_exit:
	kfdsync_timeline_exit();
err_amdkfd_exit:
	kfdsync_amdkfd_exit();
err_import_exit:
	kfdsync_import_exit();
err_watchdog_exit:
	kfdsync_watchdog_wq_exit();
err_slot_exit:
	kfdsync_slot_exit();
err_debugfs_remove:
	debugfs_remove_recursive(kfdsync_debugfs);
	return ret;
}

static void __exit kfdsync_exit(void)
{
	misc_deregister(&kfdsync_misc);
	kfdsync_timeline_exit();
	kfdsync_amdkfd_exit();
	kfdsync_import_exit();
	kfdsync_watchdog_wq_exit();
	debugfs_remove_recursive(kfdsync_debugfs);
	kfdsync_slot_exit();
	kfdsync_ctx_exit();
	/* Every fence is gone (each held a module reference): free them. */
	kfdsync_fence_exit();
}

module_init(kfdsync_init);
module_exit(kfdsync_exit);

MODULE_DESCRIPTION("AMD KFD events as dma_fence / sync_file");
MODULE_LICENSE("GPL");
MODULE_VERSION(KFDSYNC_VERSION);
