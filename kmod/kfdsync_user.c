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
 * namespace with a range of subordinate uids (a container) could otherwise
 * switch between them and take the per-user limit once per uid. So, as the
 * kernel's ucounts charge a namespace's owner in its parent, a process in a
 * user namespace is charged twice: to its own uid, and to an owner found
 * from the namespace closest to the initial one on its way up (its
 * outermost user namespace below the initial one), each within the
 * per-user limit:
 *
 * - that namespace's owner (a rootless container: the user who made it),
 *   unless the owner is the process's uid itself;
 * - if root owns it (containers of LXD/Incus, Docker's userns-remap,
 *   systemd-nspawn -U, Kubernetes pods with user namespaces), a
 *   pseudo-owner keyed by that namespace: each such container is one user,
 *   and root's own share is not touched.
 *
 * Pinned memory is charged the same way (KFDSYNC_USER_PINNED, in pages,
 * against the pinner's RLIMIT_MEMLOCK; kfdsync_pin.c), so subordinate uids
 * do not multiply it either.
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

/* What an entry is keyed by: a uid, or (pseudo-owners) a user namespace. */
struct kfdsync_user_key {
	kuid_t uid;
	struct user_namespace *ns;
};

static unsigned long kfdsync_user_hash(const struct kfdsync_user_key *key)
{
	return key->ns ? (unsigned long)key->ns : __kuid_val(key->uid);
}

/*
 * The owner charged along with @uid of namespace @ns: the owner of @ns's
 * outermost ancestor below the initial namespace, or that namespace itself
 * if root owns it. Return: false if there is none (@ns is the initial
 * namespace, or its owner is @uid).
 */
static bool kfdsync_user_ns_owner(struct user_namespace *ns, kuid_t uid,
				  struct kfdsync_user_key *owner)
{
	if (ns == &init_user_ns)
		return false;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	if (uid_eq(ns->owner, GLOBAL_ROOT_UID)) {
		owner->uid = INVALID_UID;
		owner->ns = ns;
		return true;
	}
	if (uid_eq(ns->owner, uid))
		return false;
	owner->uid = ns->owner;
	owner->ns = NULL;
	return true;
}

/* The entry for @key charged along with @owner; the table's lock held. */
static struct kfdsync_user *
kfdsync_user_find(const struct kfdsync_user_key *key,
		  const struct kfdsync_user *owner)
{
	struct kfdsync_user *user;

	lockdep_assert_held(&kfdsync_users_lock);

	hash_for_each_possible(kfdsync_users, user, node,
			       kfdsync_user_hash(key))
		if (user->ns == key->ns && uid_eq(user->uid, key->uid) &&
		    user->owner == owner)
			return user;
	return NULL;
}

/*
 * The entry for @key charged along with @owner, created if needed, with a
 * new reference. The caller's reference to @owner is consumed.
 */
static struct kfdsync_user *
kfdsync_user_lookup(const struct kfdsync_user_key *key,
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
	fresh->uid = key->uid;
	fresh->ns = key->ns;
	fresh->owner = owner;
	refcount_set(&fresh->ref, 1);

	spin_lock_irqsave(&kfdsync_users_lock, flags);
	user = kfdsync_user_find(key, owner);
	if (user) {
		refcount_inc(&user->ref);
		spin_unlock_irqrestore(&kfdsync_users_lock, flags);
		kfree(fresh);
		/* The entry holds its own reference to the same owner. */
		if (owner)
			kfdsync_user_put(owner);
		return user;
	}
	if (fresh->ns)
		get_user_ns(fresh->ns);
	hash_add(kfdsync_users, &fresh->node, kfdsync_user_hash(key));
	spin_unlock_irqrestore(&kfdsync_users_lock, flags);
	return fresh;
}

/**
 * kfdsync_user_get() - the current user's entry
 *
 * The effective uid, with the owner of its user namespace (a uid or a
 * root-owned namespace's pseudo-owner) if it is to be charged too.
 *
 * Return: a new reference, or NULL (no memory). Process context.
 */
struct kfdsync_user *kfdsync_user_get(void)
{
	struct kfdsync_user_key key = { .uid = current_euid() }, owner_key;
	struct kfdsync_user *owner = NULL;

	if (kfdsync_user_ns_owner(current_user_ns(), key.uid, &owner_key)) {
		owner = kfdsync_user_lookup(&owner_key, NULL);
		if (!owner)
			return NULL;
	}
	return kfdsync_user_lookup(&key, owner);
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
	if (user->ns)
		put_user_ns(user->ns);
	kfree(user);
	if (owner)
		kfdsync_user_put(owner);
}

/* @n more of @count, unless that goes beyond @limit. */
static bool kfdsync_user_take(atomic_t *count, unsigned int n,
			      unsigned int limit)
{
	int cur = atomic_read(count);

	do {
		if (n > limit || (unsigned int)cur > limit - n)
			return false;
	} while (!atomic_try_cmpxchg(count, &cur, cur + n));
	return true;
}

/**
 * kfdsync_user_charge_many() - take @n more of a resource
 * @user: the user
 * @res: the resource
 * @n: how many
 * @limit: the per-user limit of it, for the user and for its owner
 *
 * Return: true, or false beyond @limit of the user or of its owner
 * (nothing taken). Any context.
 */
bool kfdsync_user_charge_many(struct kfdsync_user *user,
			      enum kfdsync_user_res res, unsigned int n,
			      unsigned int limit)
{
	if (!kfdsync_user_take(&user->count[res], n, limit))
		return false;
	if (user->owner &&
	    !kfdsync_user_take(&user->owner->count[res], n, limit)) {
		atomic_sub(n, &user->count[res]);
		return false;
	}
	return true;
}

/**
 * kfdsync_user_uncharge_many() - give @n back
 * @user: the user
 * @res: the resource
 * @n: how many
 */
void kfdsync_user_uncharge_many(struct kfdsync_user *user,
				enum kfdsync_user_res res, unsigned int n)
{
	atomic_sub(n, &user->count[res]);
	if (user->owner)
		atomic_sub(n, &user->owner->count[res]);
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
	return kfdsync_user_charge_many(user, res, 1, limit);
}

/**
 * kfdsync_user_uncharge() - give one back
 * @user: the user
 * @res: the resource
 */
void kfdsync_user_uncharge(struct kfdsync_user *user,
			   enum kfdsync_user_res res)
{
	kfdsync_user_uncharge_many(user, res, 1);
}

/**
 * kfdsync_user_usage() - what the current user holds
 * @usage: out: the counts of the caller's entry (the one its opens would
 *	   be charged to), by &enum kfdsync_user_res; zeros if it holds
 *	   nothing
 */
void kfdsync_user_usage(u32 usage[KFDSYNC_USER_NR])
{
	struct kfdsync_user_key key = { .uid = current_euid() }, owner_key;
	struct kfdsync_user *user, *owner = NULL;
	unsigned long flags;
	bool has_owner;
	unsigned int i;

	has_owner = kfdsync_user_ns_owner(current_user_ns(), key.uid,
					  &owner_key);
	spin_lock_irqsave(&kfdsync_users_lock, flags);
	if (has_owner)
		owner = kfdsync_user_find(&owner_key, NULL);
	user = !has_owner || owner ? kfdsync_user_find(&key, owner) : NULL;
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
