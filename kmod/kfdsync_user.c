// SPDX-License-Identifier: GPL-2.0
/*
 * kfdsync: what each user holds.
 *
 * Contexts, timelines, registered events, pending fences and pending
 * imports are counted per user (the effective uid that opened the device),
 * and each has a per-user limit, so that one user who exhausts them leaves
 * every other user, root included, untouched. Pinned pages are charged to
 * the user's RLIMIT_MEMLOCK instead (kfdsync_pin.c).
 *
 * A user namespace does not multiply a person's share. Whoever owns a user
 * namespace with a range of subordinate uids (a rootless container) could
 * otherwise switch between them and take the per-user limit once per uid.
 * So, as the kernel's ucounts charge a namespace's owner in its parent, a
 * process in a user namespace is charged twice: to its own uid, and to the
 * owner of its outermost user namespace below the initial one, each within
 * the per-user limit. Namespaces that root created are not charged to root
 * (root's containers are root's choice, and must not use up root's share).
 *
 * The system-wide limits (max_contexts, max_timelines) bind every caller
 * but those with CAP_SYS_ADMIN in the initial user namespace, as the
 * kernel's file-max does: however the other users fill them, the
 * administrator can still open the devices.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "kfdsync_user.h"

static DEFINE_SPINLOCK(kfdsync_users_lock);
static DEFINE_HASHTABLE(kfdsync_users, 6);

/*
 * The user charged along with @uid of namespace @ns: the owner of @ns's
 * outermost ancestor below the initial namespace, unless that is @uid
 * itself or root. Return: false if there is none.
 */
static bool kfdsync_user_ns_owner(const struct user_namespace *ns, kuid_t uid,
				  kuid_t *owner)
{
	if (ns == &init_user_ns)
		return false;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	if (uid_eq(ns->owner, uid) || uid_eq(ns->owner, GLOBAL_ROOT_UID))
		return false;
	*owner = ns->owner;
	return true;
}

/* The entry (@uid, @owner); the table's lock held. */
static struct kfdsync_user *kfdsync_user_find(kuid_t uid, bool has_owner,
					      kuid_t owner)
{
	struct kfdsync_user *user;

	lockdep_assert_held(&kfdsync_users_lock);

	hash_for_each_possible(kfdsync_users, user, node, __kuid_val(uid))
		if (uid_eq(user->uid, uid) &&
		    (has_owner ? user->owner && uid_eq(user->owner->uid, owner) :
				 !user->owner))
			return user;
	return NULL;
}

/*
 * The entry (@uid, @owner), created if needed, with a new reference. The
 * caller's reference to @owner is consumed.
 */
static struct kfdsync_user *kfdsync_user_lookup(kuid_t uid,
						struct kfdsync_user *owner)
{
	struct kfdsync_user *user, *fresh;
	unsigned long flags;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh) {
		if (owner)
			kfdsync_user_put(owner);
		return NULL;
	}
	fresh->uid = uid;
	fresh->owner = owner;
	refcount_set(&fresh->ref, 1);

	spin_lock_irqsave(&kfdsync_users_lock, flags);
	user = kfdsync_user_find(uid, !!owner, owner ? owner->uid : uid);
	if (user) {
		refcount_inc(&user->ref);
		spin_unlock_irqrestore(&kfdsync_users_lock, flags);
		kfree(fresh);
		/* The entry holds its own reference to the same owner. */
		if (owner)
			kfdsync_user_put(owner);
		return user;
	}
	hash_add(kfdsync_users, &fresh->node, __kuid_val(uid));
	spin_unlock_irqrestore(&kfdsync_users_lock, flags);
	return fresh;
}

/**
 * kfdsync_user_get() - the current user's entry
 *
 * The effective uid, with the owner of its user namespace if it is to be
 * charged too.
 *
 * Return: a new reference, or NULL (no memory). Process context.
 */
struct kfdsync_user *kfdsync_user_get(void)
{
	kuid_t uid = current_euid(), owner_uid;
	struct kfdsync_user *owner = NULL;

	if (kfdsync_user_ns_owner(current_user_ns(), uid, &owner_uid)) {
		owner = kfdsync_user_lookup(owner_uid, NULL);
		if (!owner)
			return NULL;
	}
	return kfdsync_user_lookup(uid, owner);
}

/**
 * kfdsync_user_put() - drop a reference
 * @user: the entry; the last reference frees it (nothing is held then)
 *
 * Callable from any context.
 */
void kfdsync_user_put(struct kfdsync_user *user)
{
	struct kfdsync_user *owner;
	unsigned long flags;
	bool last;

	spin_lock_irqsave(&kfdsync_users_lock, flags);
	last = refcount_dec_and_test(&user->ref);
	if (last)
		hash_del(&user->node);
	spin_unlock_irqrestore(&kfdsync_users_lock, flags);
	if (!last)
		return;
	owner = user->owner;
	kfree(user);
	if (owner)
		kfdsync_user_put(owner);
}

/* One more of @count, unless it is at @limit. */
static bool kfdsync_user_take(atomic_t *count, unsigned int limit)
{
	int cur = atomic_read(count);

	do {
		if (cur >= limit)
			return false;
	} while (!atomic_try_cmpxchg(count, &cur, cur + 1));
	return true;
}

/**
 * kfdsync_user_charge() - take one more of a resource
 * @user: the user
 * @res: the resource
 * @limit: the per-user limit of it, for the user and for its owner
 *
 * Return: true, or false at @limit of the user or of its owner (nothing
 * taken). Any context.
 */
bool kfdsync_user_charge(struct kfdsync_user *user, enum kfdsync_user_res res,
			 unsigned int limit)
{
	if (!kfdsync_user_take(&user->count[res], limit))
		return false;
	if (user->owner && !kfdsync_user_take(&user->owner->count[res], limit)) {
		atomic_dec(&user->count[res]);
		return false;
	}
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
	if (user->owner)
		atomic_dec(&user->owner->count[res]);
}

/**
 * kfdsync_user_usage() - what the current user holds
 * @usage: out: the counts of the caller's entry (the one its opens would
 *	   be charged to), by &enum kfdsync_user_res; zeros if it holds
 *	   nothing
 */
void kfdsync_user_usage(u32 usage[KFDSYNC_USER_NR])
{
	kuid_t uid = current_euid(), owner = uid;
	bool has_owner = kfdsync_user_ns_owner(current_user_ns(), uid, &owner);
	struct kfdsync_user *user;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&kfdsync_users_lock, flags);
	user = kfdsync_user_find(uid, has_owner, owner);
	for (i = 0; i < KFDSYNC_USER_NR; i++)
		usage[i] = user ? atomic_read(&user->count[i]) : 0;
	spin_unlock_irqrestore(&kfdsync_users_lock, flags);
}

/**
 * kfdsync_user_beyond_global() - may the caller go beyond max_contexts and
 * max_timelines?
 *
 * Only with CAP_SYS_ADMIN in the initial user namespace; checked without
 * an audit record (users at the limit would flood the audit log).
 *
 * Return: true if so.
 */
bool kfdsync_user_beyond_global(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}
