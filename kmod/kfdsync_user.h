/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: what each user holds, so that one user cannot starve the others.
 */

#ifndef KFDSYNC_USER_H
#define KFDSYNC_USER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/uidgid.h>

/* What is counted per user; the limits are module parameters. */
enum kfdsync_user_res {
	KFDSYNC_USER_CONTEXTS,
	KFDSYNC_USER_TIMELINES,
	KFDSYNC_USER_EVENTS,
	KFDSYNC_USER_FENCES,
	KFDSYNC_USER_IMPORTS,
	KFDSYNC_USER_NR,
};

/**
 * struct kfdsync_user - one user's kfdsync resources
 * @node:	Entry in the user table (RCU).
 * @uid:	The user (effective uid of the opener).
 * @ref:	References: every context and timeline of the user.
 * @count:	Resources held, by &enum kfdsync_user_res.
 *
 * @node and @ref are protected by the user table's lock.
 */
struct kfdsync_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_t count[KFDSYNC_USER_NR];
};

struct kfdsync_user *kfdsync_user_get(void);
void kfdsync_user_put(struct kfdsync_user *user);
bool kfdsync_user_charge(struct kfdsync_user *user, enum kfdsync_user_res res,
			 unsigned int limit);
void kfdsync_user_uncharge(struct kfdsync_user *user,
			   enum kfdsync_user_res res);

#endif /* KFDSYNC_USER_H */
