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
 * A watch pins the value's page at export, in the owner's context, with
 * pin_user_pages_fast(FOLL_LONGTERM) (ordinary memory only: device
 * mappings cannot be pinned), and reads the value through a temporary
 * kernel mapping of that page (kmap_local_page()), which never faults and
 * works in the atomic contexts the hooks run in. The condition is checked
 * under the event's lock at export (a fence born signalled if it already
 * holds) and at every advance of the age. As a writer changes the value
 * before it signals the event, and both the check at export and the
 * advance hold the event's lock, a change is never lost between the two.
 *
 * The watch belongs to its fence (&kfdsync_fence.watch) and is read only
 * while the fence is pending; it is freed, and the page unpinned, when the
 * fence ends (kfdsync_fence_put_done()) or is born signalled, at the latest
 * when the fence is freed.
 */

#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <linux/kfdsync.h>

#include "kfdsync_internal.h"

/**
 * struct kfdsync_watch - a watched 64-bit value and its condition
 * @page:	The value's page (pinned, FOLL_LONGTERM).
 * @offset:	Offset of the value in @page (8-byte aligned).
 * @condition:	KFDSYNC_CONDITION_*.
 * @compare:	The value the condition compares with.
 *
 * Constant after creation; read under the fence's event lock.
 */
struct kfdsync_watch {
	struct page *page;
	unsigned int offset;
	u32 condition;
	s64 compare;
};

/*
 * Pin the page of the value at @addr in current's address space (the
 * caller's own) and make a watch of it.
 */
static struct kfdsync_watch *kfdsync_watch_new(u64 addr, u32 condition,
					       s64 compare)
{
	struct kfdsync_watch *watch;
	int ret;

	watch = kzalloc(sizeof(*watch), GFP_KERNEL_ACCOUNT);
	if (!watch)
		return ERR_PTR(-ENOMEM);

	ret = pin_user_pages_fast((unsigned long)addr, 1, FOLL_LONGTERM,
				  &watch->page);
	if (ret != 1) {
		kfree(watch);
		/* Unmapped, or a mapping that cannot be pinned. */
		return ERR_PTR(ret == -ENOMEM || ret == -EINTR ? ret : -EFAULT);
	}
	watch->offset = offset_in_page(addr);
	watch->condition = condition;
	watch->compare = compare;
	return watch;
}

/**
 * kfdsync_watch_free() - unpin a watch's page and free it
 * @watch: the watch
 *
 * Callable from any context but hard interrupts.
 */
void kfdsync_watch_free(struct kfdsync_watch *watch)
{
	unpin_user_page(watch->page);
	kfree(watch);
}

/**
 * kfdsync_watch_holds() - whether a watch's condition holds now
 * @watch: the watch
 *
 * Reads the value through a temporary kernel mapping of the pinned page:
 * never faults, callable from any context.
 *
 * Return: true if the value satisfies the condition.
 */
bool kfdsync_watch_holds(const struct kfdsync_watch *watch)
{
	const s64 *p;
	s64 value;

	p = kmap_local_page(watch->page) + watch->offset;
	value = READ_ONCE(*p);
	kunmap_local(p);

	switch (watch->condition) {
	case KFDSYNC_CONDITION_EQ:
		return value == watch->compare;
	case KFDSYNC_CONDITION_NE:
		return value != watch->compare;
	case KFDSYNC_CONDITION_LT:
		return value < watch->compare;
	case KFDSYNC_CONDITION_GTE:
		return value >= watch->compare;
	}
	return false;	/* unreachable: checked at export */
}

/* The watched condition as a new sync_file fd of the caller. */
static int kfdsync_export_condition_sync_file(struct kfdsync_ctx *ctx,
					      struct kfdsync_export_condition *args,
					      void __user *uarg,
					      struct kfdsync_watch *watch)
{
	struct dma_fence *fence;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		kfdsync_watch_free(watch);
		return fd;
	}

	/* Consumes the watch. */
	fence = kfdsync_fence_create_watch(ctx, args->event_id, watch,
					   args->deadline_ns, NULL);
	if (IS_ERR(fence)) {
		put_unused_fd(fd);
		return PTR_ERR(fence);
	}

	args->fd = fd;
	return kfdsync_sync_file_install(fd, fence, NULL, uarg, args,
					 sizeof(*args));
}

/* The watched condition signalling the caller's eventfd args->fd. */
static int kfdsync_export_condition_eventfd(struct kfdsync_ctx *ctx,
					    struct kfdsync_export_condition *args,
					    struct kfdsync_watch *watch)
{
	struct eventfd_ctx *eventfd;
	struct dma_fence *fence;

	eventfd = eventfd_ctx_fdget(args->fd);
	if (IS_ERR(eventfd)) {
		kfdsync_watch_free(watch);
		return PTR_ERR(eventfd);
	}

	/* Consumes the watch; on success the fence owns the eventfd too. */
	fence = kfdsync_fence_create_watch(ctx, args->event_id, watch,
					   args->deadline_ns, eventfd);
	if (IS_ERR(fence)) {
		eventfd_ctx_put(eventfd);
		return PTR_ERR(fence);
	}
	dma_fence_put(fence);
	return 0;
}

/**
 * kfdsync_ioctl_export_condition() - KFDSYNC_IOCTL_EXPORT_CONDITION
 * @ctx: the context the ioctl was called on
 * @uarg: &struct kfdsync_export_condition in user memory
 *
 * Return: 0, or -errno as documented for KFDSYNC_IOCTL_EXPORT_CONDITION.
 */
int kfdsync_ioctl_export_condition(struct kfdsync_ctx *ctx,
				   void __user *uarg)
{
	struct kfdsync_export_condition args;
	struct kfdsync_watch *watch;

	if (copy_from_user(&args, uarg, sizeof(args)))
		return -EFAULT;
	if (args.flags & ~KFDSYNC_CONDITION_EVENTFD)
		return -EINVAL;
	if (args.condition > KFDSYNC_CONDITION_GTE)
		return -EINVAL;
	if (args.value_addr != (unsigned long)args.value_addr ||
	    !IS_ALIGNED(args.value_addr, sizeof(u64)))
		return -EINVAL;
	if (!kfdsync_ctx_is_caller(ctx))
		return -EPERM;

	watch = kfdsync_watch_new(args.value_addr, args.condition,
				  args.compare_value);
	if (IS_ERR(watch))
		return PTR_ERR(watch);

	if (args.flags & KFDSYNC_CONDITION_EVENTFD)
		return kfdsync_export_condition_eventfd(ctx, &args, watch);
	return kfdsync_export_condition_sync_file(ctx, &args, uarg, watch);
}
