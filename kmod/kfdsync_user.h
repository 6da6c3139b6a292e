/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: what each user holds, so that one user cannot starve the others.
 */

#ifndef KFDSYNC_USER_H
#define KFDSYNC_USER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/uidgid.h>

struct user_namespace;

/* What is counted per user; the limits are module parameters. */
enum kfdsync_user_res {
	KFDSYNC_USER_CONTEXTS,
	KFDSYNC_USER_TIMELINES,
	KFDSYNC_USER_EVENTS,
	KFDSYNC_USER_FENCES,
	KFDSYNC_USER_IMPORTS,
	KFDSYNC_USER_PINNED,	/* pages, against RLIMIT_MEMLOCK */
	KFDSYNC_USER_NR,
};

/**
 * struct kfdsync_user - one user's kfdsync resources
 * @node:	Entry in the user table.
 * @uid:	The user (effective uid of the opener); INVALID_UID for a
 *		pseudo-owner.
 * @ns:		A pseudo-owner's key (reference held): a root-owned user
 *		namespace, the outermost of its opener's below the initial
 *		one; else NULL.
 * @owner:	The user charged along with this one (reference held): the
 *		owner of the user namespace the opener was in (its outermost
 *		one below the initial namespace) or, if root owns that, its
 *		pseudo-owner; or NULL.
 * @ref:	References: every context and timeline of the user, and
 *		every entry whose @owner this is.
 * @count:	Resources held, by &enum kfdsync_user_res.
 *
 * An entry is one (@uid or @ns, @owner) pair. @node and @ref are protected
 * by the user table's lock; @uid, @ns and @owner are constant.
 */
struct kfdsync_user {
	struct hlist_node node;
	kuid_t uid;
	struct user_namespace *ns;
	struct kfdsync_user *owner;
	refcount_t ref;
	atomic_t count[KFDSYNC_USER_NR];
};

struct kfdsync_user *kfdsync_user_get(void);
void kfdsync_user_put(struct kfdsync_user *user);
bool kfdsync_user_charge(struct kfdsync_user *user, enum kfdsync_user_res res,
			 unsigned int limit);
void kfdsync_user_uncharge(struct kfdsync_user *user,
			   enum kfdsync_user_res res);
bool kfdsync_user_charge_many(struct kfdsync_user *user,
			      enum kfdsync_user_res res, unsigned int n,
			      unsigned int limit);
void kfdsync_user_uncharge_many(struct kfdsync_user *user,
				enum kfdsync_user_res res, unsigned int n);
void kfdsync_user_usage(u32 usage[KFDSYNC_USER_NR]);
bool kfdsync_user_beyond_global(void);

#endif /* KFDSYNC_USER_H */
