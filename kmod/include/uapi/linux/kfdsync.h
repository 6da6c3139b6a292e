/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * kfdsync: AMD KFD events as dma_fence / sync_file.
 *
 * This is the single definition of the /dev/kfdsync interface; the kernel
 * module and libkfdsync both build against it.
 *
 * Conventions: fixed-size __u32/__u64 fields only, no enums or bitfields,
 * every struct has an explicit @flags field (unknown bits are rejected with
 * -EINVAL) and explicit padding (must be zero), structs are sized to a
 * multiple of 8 bytes so that 32-bit and 64-bit callers share one layout.
 * A changed struct gets a new ioctl number, never a version field.
 */

#ifndef _UAPI_LINUX_KFDSYNC_H
#define _UAPI_LINUX_KFDSYNC_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * DOC: ABI version
 *
 * KFDSYNC_ABI_VERSION is reported by KFDSYNC_IOCTL_INFO. It is bumped only
 * for incompatible changes of existing ioctls; new ioctls are discovered by
 * trying them (-ENOTTY means "not supported by this module").
 */
#define KFDSYNC_ABI_VERSION		1

/**
 * DOC: ioctl numbers
 *
 * kfdsync uses the ioctl type 'J', numbers 0x00 - 0x3F. 'J' has no entry in
 * the 6.1 kernel's Documentation/userspace-api/ioctl/ioctl-number.rst and no
 * user in the 6.1 and 6.12 uAPI headers.
 */
#define KFDSYNC_IOCTL_BASE		'J'

/**
 * DOC: hooks
 *
 * The amdkfd functions kfdsync can attach to (kprobes on amdgpu.ko), as
 * bits of &kfdsync_info.hooks and &kfdsync_info.hooks_supported:
 *
 * KFDSYNC_HOOK_GPU_INTERRUPT:
 *	kfd_signal_event_interrupt(): a GPU interrupt signalled an event.
 * KFDSYNC_HOOK_CPU_SET:
 *	kfd_set_event(): a process set an event (AMDKFD_IOC_SET_EVENT).
 * KFDSYNC_HOOK_HW_EXCEPTION:
 *	kfd_signal_hw_exception_event(): hardware exception of a process.
 * KFDSYNC_HOOK_VM_FAULT:
 *	kfd_signal_vm_fault_event(): GPU memory fault of a process.
 * KFDSYNC_HOOK_RESET:
 *	kfd_signal_reset_event(): GPU reset.
 * KFDSYNC_HOOK_POISON:
 *	kfd_signal_poison_consumed_event(): RAS poison consumed by a process.
 */
#define KFDSYNC_HOOK_GPU_INTERRUPT	0x01U
#define KFDSYNC_HOOK_CPU_SET		0x02U
#define KFDSYNC_HOOK_HW_EXCEPTION	0x04U
#define KFDSYNC_HOOK_VM_FAULT		0x08U
#define KFDSYNC_HOOK_RESET		0x10U
#define KFDSYNC_HOOK_POISON		0x20U

/**
 * DOC: info flags
 *
 * Bits of &kfdsync_info.info_flags:
 *
 * KFDSYNC_INFO_AMDKFD_PRESENT:
 *	amdgpu.ko, which carries amdkfd, is loaded (or loading). Set even
 *	with hooks=N: it tells whether /dev/kfd can exist, not whether kfdsync
 *	uses it.
 * KFDSYNC_INFO_RELAY_FORCED:
 *	The module parameter hooks=N forces relay mode: kfdsync attaches no
 *	hooks, even when amdgpu is loaded, and userspace must relay signals.
 */
#define KFDSYNC_INFO_AMDKFD_PRESENT	0x01U
#define KFDSYNC_INFO_RELAY_FORCED	0x02U

/*
 * Size of &kfdsync_info.release: a Linux release string is at most 64
 * characters (__NEW_UTS_LEN), plus the terminating NUL, rounded up to 8.
 */
#define KFDSYNC_RELEASE_LEN		72

/**
 * struct kfdsync_info - what the module is and what it attached to
 * @flags:		In: must be 0.
 * @pad:		In: must be 0.
 * @abi_version:	Out: %KFDSYNC_ABI_VERSION of the module.
 * @kernel_version:	Out: LINUX_VERSION_CODE the module was built for,
 *			KERNEL_VERSION(major, minor, min(sublevel, 255)).
 * @hooks:		Out: KFDSYNC_HOOK_* bits attached right now. Hooks
 *			come and go with amdgpu.ko; a hook that could not be
 *			attached is simply not set.
 * @hooks_supported:	Out: KFDSYNC_HOOK_* bits this module knows.
 * @info_flags:		Out: KFDSYNC_INFO_* bits.
 * @max_contexts:	Out: limit of open contexts, system-wide (module
 *			parameter max_contexts).
 * @max_events:		Out: limit of events one context may register.
 * @max_fences:		Out: limit of unsignalled fences one context may
 *			have exported at a time.
 * @watchdog_ms:	Out: default watchdog of an exported fence, in
 *			milliseconds: a fence still unsignalled after this
 *			long is signalled with -ETIMEDOUT.
 * @watchdog_max_ms:	Out: upper bound of a per-fence watchdog override,
 *			in milliseconds.
 * @release:		Out: release of the running kernel (the release
 *			uname(2) reports outside any UTS namespace), NUL
 *			terminated.
 *
 * @max_events, @max_fences, @watchdog_ms and @watchdog_max_ms are the values
 * of the context the ioctl is called on: a context takes them from the module
 * parameters when it is opened and keeps them for its lifetime.
 *
 * @release is an inline array rather than a pointer and a size: it is short
 * and bounded by the kernel, and a fixed array keeps the ioctl a single copy
 * with one layout for 32-bit and 64-bit callers.
 */
struct kfdsync_info {
	__u32 flags;
	__u32 pad;
	__u32 abi_version;
	__u32 kernel_version;
	__u32 hooks;
	__u32 hooks_supported;
	__u32 info_flags;
	__u32 max_contexts;
	__u32 max_events;
	__u32 max_fences;
	__u32 watchdog_ms;
	__u32 watchdog_max_ms;
	char release[KFDSYNC_RELEASE_LEN];
};

/**
 * DOC: KFDSYNC_IOCTL_INFO - describe the module and its hooks
 *
 * Takes a &struct kfdsync_info with @flags and @pad zero and fills in every
 * other field. Any process that can open /dev/kfdsync may call it.
 *
 * Return: 0 on success, or -1 with errno set to:
 *
 * - EFAULT: the argument is not readable and writable memory.
 * - EINVAL: &kfdsync_info.flags or &kfdsync_info.pad is not zero.
 * - ENOTTY: the request is not an ioctl of this module (another type,
 *   number, direction or size): what every kfdsync ioctl returns for
 *   requests it does not know.
 */
#define KFDSYNC_IOCTL_INFO \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x00, struct kfdsync_info)

#endif /* _UAPI_LINUX_KFDSYNC_H */
