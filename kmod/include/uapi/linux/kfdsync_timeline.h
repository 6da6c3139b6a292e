/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * kfdsync CPU timelines: the sw_sync interface on /dev/kfdsync_timeline.
 *
 * Every open() of /dev/kfdsync_timeline is one timeline: a 32-bit counter
 * that starts at 0 and one dma_fence context. Fences are created for values
 * of the counter and returned as sync_file fds; advancing the counter
 * signals every fence whose value it reaches.
 *
 * Compatibility with sw_sync: the kernel's sw_sync (<debugfs>/sync/sw_sync,
 * CONFIG_SW_SYNC) keeps its interface in drivers/dma-buf/sw_sync.c, and
 * tools copy it from there (tools/testing/selftests/sync/sw_sync.h, IGT's
 * lib/sw_sync.c). The structs and ioctl numbers below are identical to
 * those, byte for byte:
 *
 *	struct sw_sync_create_fence_data    == struct kfdsync_tl_create_fence
 *	SW_SYNC_IOC_CREATE_FENCE ('W', 0)  == KFDSYNC_TL_IOC_CREATE_FENCE
 *	SW_SYNC_IOC_INC          ('W', 1)  == KFDSYNC_TL_IOC_INC
 *	struct sw_sync_get_deadline         == struct kfdsync_tl_get_deadline
 *	SW_SYNC_GET_DEADLINE     ('W', 2)  == KFDSYNC_TL_IOC_GET_DEADLINE
 *
 * so a program written for sw_sync works unchanged when it opens
 * /dev/kfdsync_timeline instead of <debugfs>/sync/sw_sync. The names differ
 * so that this header and a copy of sw_sync's definitions can be included
 * together. See kmod/README.md, "CPU timelines", for the full semantics and
 * every errno.
 */

#ifndef _UAPI_LINUX_KFDSYNC_TIMELINE_H
#define _UAPI_LINUX_KFDSYNC_TIMELINE_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * DOC: fdinfo
 *
 * /proc/PID/fdinfo/FD of an open timeline, "key:\tvalue" lines; ABI like
 * /dev/kfdsync's (<linux/kfdsync.h>, "fdinfo"): keys are only ever added.
 *
 * kfdsync-timeline:
 *	the timeline's id, unique while the module is loaded
 * kfdsync-fence-context:
 *	its dma_fence context
 * kfdsync-value:
 *	its current value
 * kfdsync-pending:
 *	pending fences
 * kfdsync-max-fences, kfdsync-watchdog-ms:
 *	the limits it took at open
 * kfdsync-name:
 *	the fences' timeline name, "kfdsync-timeline:<tgid>:<comm>", with
 *	space, tab, newline and backslash as octal escapes ("\040")
 */

/** KFDSYNC_TL_DEVICE - path of the timeline device node */
#define KFDSYNC_TL_DEVICE		"/dev/kfdsync_timeline"

/** KFDSYNC_TL_IOC_MAGIC - ioctl type, sw_sync's */
#define KFDSYNC_TL_IOC_MAGIC		'W'

/**
 * struct kfdsync_tl_create_fence - argument of KFDSYNC_TL_IOC_CREATE_FENCE
 * @value:	In: the timeline value the fence stands for.
 * @name:	In: name of the sync_file (what SYNC_IOC_FILE_INFO reports as
 *		its name), NUL-terminated; may be empty.
 * @fence:	Out: the new sync_file fd (O_CLOEXEC). The caller closes it.
 *
 * Layout of sw_sync's struct sw_sync_create_fence_data (40 bytes).
 */
struct kfdsync_tl_create_fence {
	__u32 value;
	char name[32];
	__s32 fence;
};

/**
 * struct kfdsync_tl_get_deadline - argument of KFDSYNC_TL_IOC_GET_DEADLINE
 * @deadline_ns:	Out: earliest deadline set on the fence, absolute
 *			CLOCK_MONOTONIC nanoseconds. In: must be 0.
 * @pad:		Must be 0.
 * @fence_fd:		In: a sync_file fd holding one timeline fence.
 *
 * Layout of sw_sync's struct sw_sync_get_deadline (16 bytes).
 */
struct kfdsync_tl_get_deadline {
	__u64 deadline_ns;
	__u32 pad;
	__s32 fence_fd;
};

/* Create a fence for a value; see struct kfdsync_tl_create_fence. */
#define KFDSYNC_TL_IOC_CREATE_FENCE \
	_IOWR(KFDSYNC_TL_IOC_MAGIC, 0, struct kfdsync_tl_create_fence)

/* Advance the timeline by the __u32 pointed to. */
#define KFDSYNC_TL_IOC_INC		_IOW(KFDSYNC_TL_IOC_MAGIC, 1, __u32)

/* Read a fence's deadline hint (kernels 6.4+; -ENOTTY before). */
#define KFDSYNC_TL_IOC_GET_DEADLINE \
	_IOWR(KFDSYNC_TL_IOC_MAGIC, 2, struct kfdsync_tl_get_deadline)

#endif /* _UAPI_LINUX_KFDSYNC_TIMELINE_H */
