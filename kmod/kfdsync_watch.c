// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: watched conditions, the shape of HSA signals.
 *
 * An interrupt-capable HSA signal (ROCr's amd_signal_t) is a signed 64-bit
 * value in the owner's ordinary memory paired with an amdkfd signal event
 * whose slot is the signal's mailbox: whoever changes the value (ROCr's
 * hsa_signal_store_*() on the CPU, a GPU completion) signals the event
 * afterwards. KFDSYNC_IOCTL_EXPORT_CONDITION exports "the value satisfies a
 * condition" as a fence: the registered event is the hint (kfdsync_event.c
 * advances its age), the value is the truth.
 *
 * A watch pins the value's page at export, in the owner's context
 * (kfdsync_pin.c: anonymous or shmem memory, FOLL_WRITE | FOLL_LONGTERM so
 * that kfdsync reads the page the process writes, charged to the user's
 * RLIMIT_MEMLOCK), and reads the value through a temporary kernel mapping,
 * which never faults and works in the atomic contexts the hooks run in.
 * The condition is checked under the event's lock at export (a fence born
 * signalled if it already holds) and at every advance of the age. As a
 * writer changes the value before it signals the event, and both the check
 * at export and the advance hold the event's lock, a change is never lost
 * between the two.
 *
 * The watch belongs to its fence (&kfdsync_fence.watch) and is read only
 * while the fence is pending; it is freed, and the page unpinned, when the
 * fence ends or is born signalled, at the latest when the fence is freed.
 */

#include <linux/err.h>
#include <linux/slab.h>

#include "kfdsync_watch.h"

/**
 * kfdsync_watch_new() - a watch of a value in the caller's memory
 * @addr: the value's address in current's address space, 8-byte aligned
 * @condition: KFDSYNC_CONDITION_*
 * @compare: the value the condition compares with
 *
 * Return: the watch (free with kfdsync_watch_free()), or ERR_PTR(-ENOMEM),
 * -EFAULT (not mapped writable anonymous or shmem memory), -EINTR.
 */
struct kfdsync_watch *kfdsync_watch_new(u64 addr, u32 condition, s64 compare)
{
	struct kfdsync_watch *watch;
	int ret;

	watch = kzalloc(sizeof(*watch), GFP_KERNEL_ACCOUNT);
	if (!watch)
		return ERR_PTR(-ENOMEM);
	ret = kfdsync_pin_user(&watch->pin, addr, sizeof(u64));
	if (ret) {
		kfree(watch);
		return ERR_PTR(ret);
	}
	watch->condition = condition;
	watch->compare = compare;
	return watch;
}
