// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: what each user holds.
 *
 * Contexts, timelines, registered events, pending fences and pending
 * imports are counted
 * per user (the effective uid that opened the device), and each has a
 * per-user limit, so that one user who exhausts them leaves every other
 * user, root included, untouched. Pinned pages are charged to the user's
 * RLIMIT_MEMLOCK instead (kfdsync_pin.c).
 */

#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "kfdsync_user.h"

static DEFINE_SPINLOCK(kfdsync_users_lock);
static DEFINE_HASHTABLE(kfdsync_users, 6);

/**
 * kfdsync_user_get() - the current user's entry
 *
 * Return: a new reference, or NULL (no memory). Process context.
 */
struct kfdsync_user *kfdsync_user_get(void)
{
	kuid_t uid = current_euid();
	struct kfdsync_user *user, *fresh;
	unsigned long flags;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return NULL;
	fresh->uid = uid;
	refcount_set(&fresh->ref, 1);

	spin_lock_irqsave(&kfdsync_users_lock, flags);
	hash_for_each_possible(kfdsync_users, user, node, __kuid_val(uid)) {
		if (uid_eq(user->uid, uid)) {
			refcount_inc(&user->ref);
			spin_unlock_irqrestore(&kfdsync_users_lock, flags);
			kfree(fresh);
			return user;
		}
	}
	hash_add(kfdsync_users, &fresh->node, __kuid_val(uid));
	spin_unlock_irqrestore(&kfdsync_users_lock, flags);
	return fresh;
}

/**
 * kfdsync_user_put() - drop a reference
 * @user: the entry; the last reference frees it (nothing is held then)
 *
 * Callable from any context.
 */
void kfdsync_user_put(struct kfdsync_user *user)
{
	unsigned long flags;
	bool last;

	spin_lock_irqsave(&kfdsync_users_lock, flags);
	last = refcount_dec_and_test(&user->ref);
	if (last)
		hash_del(&user->node);
	spin_unlock_irqrestore(&kfdsync_users_lock, flags);
	if (last)
		kfree(user);
}

/**
 * kfdsync_user_charge() - take one more of a resource
 * @user: the user
 * @res: the resource
 * @limit: the user's limit of it
 *
 * Return: true, or false at @limit (nothing taken). Any context.
 */
bool kfdsync_user_charge(struct kfdsync_user *user, enum kfdsync_user_res res,
			 unsigned int limit)
{
	int cur = atomic_read(&user->count[res]);

	do {
		if (cur >= limit)
			return false;
	} while (!atomic_try_cmpxchg(&user->count[res], &cur, cur + 1));
	return true;
}

/**
 * kfdsync_user_uncharge() - give one back
 * @user: the user
 * @res: the resource
 */
void kfdsync_user_uncharge(struct kfdsync_user *user,
			   enum kfdsync_user_res res)
{
	atomic_dec(&user->count[res]);
}
