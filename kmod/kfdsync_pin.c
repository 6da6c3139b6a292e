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
 *   MAP_SHARED anonymous, memfd, SysV/POSIX shared memory, private hugetlb
 *   mappings): a page of any other file would be written behind its
 *   filesystem's back;
 * - what stays in memory is charged to the user's RLIMIT_MEMLOCK (as
 *   io_uring charges its buffers: the user's locked_vm, which also
 *   mlock-free pins of perf and BPF count), unless the pinner has
 *   CAP_IPC_LOCK (checked without an audit record: it is asked at every
 *   pin);
 * - and charged a second time, within the same RLIMIT_MEMLOCK, to the
 *   pinner's kfdsync user (kfdsync_user.c, KFDSYNC_USER_PINNED), which is
 *   charged along with its namespace's owner: the subordinate uids of a
 *   container each have a locked_vm of their own, but all of them together
 *   pin no more through kfdsync than one RLIMIT_MEMLOCK (the largest any
 *   of them has; a container's processes cannot raise their hard limit).
 *
 * A pin holds the whole folio of its page in memory: a word of a
 * transparent huge page or of a hugetlb page pins 2 MiB (or more), not
 * 4 KiB. So the charge is the folio's size, made once per user and folio
 * however many of the user's pins share it (&struct kfdsync_pinned, in a
 * table by folio and user), and given back with the last of them.
 *
 * The word is accessed through kmap_local_page(): never faults, any
 * context.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "kfdsync_pin.h"
#include "kfdsync_user.h"

/**
 * struct kfdsync_pinned - one user's pins of one folio, and their charge
 * @node:	Entry in kfdsync_pinned_table.
 * @folio:	The folio, a key only (the pins keep it).
 * @user:	The user charged (reference held).
 * @kuser:	The kfdsync user charged too (reference held).
 * @pages:	Pages charged to @user's locked_vm and to @kuser's (and its
 *		owner's) KFDSYNC_USER_PINNED: the folio's.
 * @pins:	The user's pins of the folio.
 *
 * @node and @pins are protected by kfdsync_pinned_lock; the rest is
 * constant.
 */
struct kfdsync_pinned {
	struct hlist_node node;
	const struct folio *folio;
	struct user_struct *user;
	struct kfdsync_user *kuser;
	unsigned long pages;
	unsigned int pins;
};

/* Taken with interrupts off: pins are released from softirqs too. */
static DEFINE_SPINLOCK(kfdsync_pinned_lock);
static DEFINE_HASHTABLE(kfdsync_pinned_table, 8);

/* Charge @pages to @user's RLIMIT_MEMLOCK; -ENOMEM beyond it. */
static int kfdsync_pin_charge(struct user_struct *user, unsigned long pages,
			      unsigned long limit)
{
	long cur = atomic_long_read(&user->locked_vm);

	do {
		if (cur + pages > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, cur + pages));
	return 0;
}

/* The users' entry for @folio; kfdsync_pinned_lock held. */
static struct kfdsync_pinned *
kfdsync_pinned_find(const struct folio *folio, const struct user_struct *user,
		    const struct kfdsync_user *kuser)
{
	struct kfdsync_pinned *p;

	lockdep_assert_held(&kfdsync_pinned_lock);

	hash_for_each_possible(kfdsync_pinned_table, p, node,
			       (unsigned long)folio)
		if (p->folio == folio && p->user == user && p->kuser == kuser)
			return p;
	return NULL;
}

/*
 * Charge @pages to @user's locked_vm and to @kuser's (and its owner's)
 * pinned pages, each within @limit; -ENOMEM beyond it.
 */
static int kfdsync_pin_charge_both(struct user_struct *user,
				   struct kfdsync_user *kuser,
				   unsigned long pages, unsigned long limit)
{
	int ret = kfdsync_pin_charge(user, pages, limit);

	if (ret)
		return ret;
	if (pages > INT_MAX ||
	    !kfdsync_user_charge_many(kuser, KFDSYNC_USER_PINNED, pages,
				      min_t(unsigned long, limit, INT_MAX))) {
		atomic_long_sub(pages, &user->locked_vm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Charge the current user for a pin of @page's folio: nothing if it holds
 * that folio pinned already, else the folio's pages.
 */
static int kfdsync_pin_account(struct kfdsync_pin *pin, struct page *page)
{
	struct folio *folio = page_folio(page);
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct kfdsync_pinned *p, *fresh;
	struct kfdsync_user *kuser;
	struct user_struct *user;
	unsigned long flags;
	int ret = 0;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	kuser = kfdsync_user_get();
	if (!kuser) {
		kfree(fresh);
		return -ENOMEM;
	}
	user = get_current_user();

	spin_lock_irqsave(&kfdsync_pinned_lock, flags);
	p = kfdsync_pinned_find(folio, user, kuser);
	if (p) {
		p->pins++;
	} else {
		fresh->pages = folio_nr_pages(folio);
		ret = kfdsync_pin_charge_both(user, kuser, fresh->pages, limit);
		if (!ret) {
			fresh->folio = folio;
			fresh->user = user;
			fresh->kuser = kuser;
			fresh->pins = 1;
			hash_add(kfdsync_pinned_table, &fresh->node,
				 (unsigned long)folio);
			p = fresh;
			fresh = NULL;
			/* the entry's now */
			user = NULL;
			kuser = NULL;
		}
	}
	spin_unlock_irqrestore(&kfdsync_pinned_lock, flags);
	kfree(fresh);
	if (user)
		free_uid(user);
	if (kuser)
		kfdsync_user_put(kuser);
	pin->charge = p;
	return ret;
}

/* Give back the charge of one pin. Any context but hard interrupts. */
static void kfdsync_pin_unaccount(struct kfdsync_pinned *p)
{
	unsigned long flags;
	bool last;

	spin_lock_irqsave(&kfdsync_pinned_lock, flags);
	last = !--p->pins;
	if (last)
		hash_del(&p->node);
	spin_unlock_irqrestore(&kfdsync_pinned_lock, flags);
	if (!last)
		return;
	atomic_long_sub(p->pages, &p->user->locked_vm);
	kfdsync_user_uncharge_many(p->kuser, KFDSYNC_USER_PINNED, p->pages);
	kfdsync_user_put(p->kuser);
	free_uid(p->user);
	kfree(p);
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
 * memory; -ENOMEM if the folio would exceed the user's RLIMIT_MEMLOCK, or
 * what its kfdsync user or that user's owner has pinned would (or out of
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

	ret = pin_user_pages_fast(uaddr, 1, FOLL_WRITE | FOLL_LONGTERM, &page);
	if (ret != 1)
		return ret == -ENOMEM || ret == -EINTR ? ret : -EFAULT;
	/* The mapping may have changed since the check: check the page. */
	if (!PageAnon(page) &&
	    !(page->mapping && shmem_mapping(page->mapping))) {
		unpin_user_page(page);
		return -EFAULT;
	}
	pin->charge = NULL;
	if (!ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK)) {
		ret = kfdsync_pin_account(pin, page);
		if (ret) {
			unpin_user_page(page);
			return ret;
		}
	}
	pin->page = page;
	pin->offset = offset_in_page(uaddr);
	return 0;
}

/**
 * kfdsync_pin_release() - unpin and uncharge
 * @pin: the pin
 * @dirty: the page was written
 *
 * Callable from any context but hard interrupts; with @dirty, process
 * context only: it may sleep on the folio's lock.
 */
void kfdsync_pin_release(struct kfdsync_pin *pin, bool dirty)
{
	if (pin->charge)
		kfdsync_pin_unaccount(pin->charge);
	if (dirty)
		unpin_user_pages_dirty_lock(&pin->page, 1, true);
	else
		unpin_user_page(pin->page);
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
