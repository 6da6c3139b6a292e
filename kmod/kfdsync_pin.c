// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: one pinned word of a process's ordinary memory.
 *
 * Imports write a word of the importer's memory when a fence ends, and
 * condition fences read a word (an HSA signal's value) at every hint, both
 * from any context. The page is pinned at the ioctl, in the caller's own
 * address space, with FOLL_WRITE | FOLL_LONGTERM, so that:
 *
 * - kfdsync reads and writes the page the process itself uses: a fresh
 *   anonymous page (the shared zero page) or a private file page is made
 *   the process's own copy at pin time, and a pinned anonymous page stays
 *   the process's across fork();
 * - only anonymous and shmem memory is accepted (private anonymous,
 *   MAP_SHARED anonymous, memfd, SysV/POSIX shared memory): a page of any
 *   other file would be written behind its filesystem's back;
 * - the pin is charged to the user's RLIMIT_MEMLOCK (as io_uring charges
 *   its buffers: the user's locked_vm, which also mlock-free pins of perf
 *   and BPF count), unless the pinner has CAP_IPC_LOCK.
 *
 * The word is accessed through kmap_local_page(): never faults, any
 * context.
 */

#include <linux/capability.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/uaccess.h>

#include "kfdsync_pin.h"

/* Charge one page to @user's RLIMIT_MEMLOCK; -ENOMEM beyond it. */
static int kfdsync_pin_charge(struct user_struct *user)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	long cur = atomic_long_read(&user->locked_vm);

	do {
		if (cur + 1 > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, cur + 1));
	return 0;
}

/* Anonymous or shmem memory of the caller at @addr: 0, or -EFAULT. */
static int kfdsync_pin_check_vma(unsigned long addr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	int ret = -EFAULT;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, addr);
	if (vma && !(vma->vm_flags & (VM_IO | VM_PFNMAP)) &&
	    (vma_is_anonymous(vma) ||
	     (vma->vm_file && (!(vma->vm_flags & VM_SHARED) ||
			       shmem_mapping(vma->vm_file->f_mapping)))))
		ret = 0;
	mmap_read_unlock(mm);
	return ret;
}

/**
 * kfdsync_pin_user() - pin a word of the caller's ordinary memory
 * @pin: out: the pin
 * @addr: the word's address in current's address space, aligned to @size
 * @size: 4 or 8
 *
 * Return: 0; -EFAULT if @addr is not mapped writable anonymous or shmem
 * memory; -ENOMEM if the user's RLIMIT_MEMLOCK is exhausted (or out of
 * memory); -EINTR.
 */
int kfdsync_pin_user(struct kfdsync_pin *pin, u64 addr, size_t size)
{
	unsigned long uaddr = (unsigned long)addr;
	struct page *page;
	int ret;

	if (uaddr != addr || !IS_ALIGNED(uaddr, size))
		return -EFAULT;
	ret = kfdsync_pin_check_vma(uaddr);
	if (ret)
		return ret;

	pin->user = NULL;
	if (!capable(CAP_IPC_LOCK)) {
		pin->user = get_current_user();
		ret = kfdsync_pin_charge(pin->user);
		if (ret) {
			free_uid(pin->user);
			return ret;
		}
	}

	ret = pin_user_pages_fast(uaddr, 1, FOLL_WRITE | FOLL_LONGTERM, &page);
	if (ret != 1) {
		ret = ret == -ENOMEM || ret == -EINTR ? ret : -EFAULT;
		goto err_uncharge;
	}
	/* The mapping may have changed since the check: check the page. */
	if (!PageAnon(page) &&
	    !(page->mapping && shmem_mapping(page->mapping))) {
		unpin_user_page(page);
		ret = -EFAULT;
		goto err_uncharge;
	}
	pin->page = page;
	pin->offset = offset_in_page(uaddr);
	return 0;

err_uncharge:
	if (pin->user) {
		atomic_long_dec(&pin->user->locked_vm);
		free_uid(pin->user);
	}
	return ret;
}

/**
 * kfdsync_pin_release() - unpin and uncharge
 * @pin: the pin
 * @dirty: the page was written
 *
 * Callable from any context but hard interrupts.
 */
void kfdsync_pin_release(struct kfdsync_pin *pin, bool dirty)
{
	if (dirty)
		unpin_user_pages_dirty_lock(&pin->page, 1, true);
	else
		unpin_user_page(pin->page);
	if (pin->user) {
		atomic_long_dec(&pin->user->locked_vm);
		free_uid(pin->user);
	}
}

/**
 * kfdsync_pin_read64() - read the pinned 64-bit word
 * @pin: the pin
 *
 * Return: its value. Any context.
 */
u64 kfdsync_pin_read64(const struct kfdsync_pin *pin)
{
	const u64 *p = kmap_local_page(pin->page) + pin->offset;
	u64 value = READ_ONCE(*p);

	kunmap_local(p);
	return value;
}

/**
 * kfdsync_pin_write() - store into or subtract from the pinned word
 * @pin: the pin
 * @value: the value
 * @word32: the word is 32 bits (@value fits)
 * @sub: subtract @value atomically instead of storing it
 *
 * One aligned access. Any context.
 */
void kfdsync_pin_write(const struct kfdsync_pin *pin, u64 value, bool word32,
		       bool sub)
{
	void *base = kmap_local_page(pin->page);
	void *target = base + pin->offset;

	if (word32) {
		if (sub)
			atomic_sub((int)value, target);
		else
			WRITE_ONCE(*(u32 *)target, (u32)value);
	} else {
		if (sub)
			atomic64_sub((s64)value, target);
		else
			WRITE_ONCE(*(u64 *)target, value);
	}
	kunmap_local(base);
}
