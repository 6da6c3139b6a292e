/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: sync_file imports, a fence's end acted on for its importer.
 */

#ifndef KFDSYNC_IMPORT_H
#define KFDSYNC_IMPORT_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

struct kfdsync_events;
struct kfdsync_import;
struct kfdsync_user;
struct mm_struct;

/**
 * struct kfdsync_imports - the pending imports of one context
 * @lock:	Protects @list, @n, @running and @dead (process context only).
 * @list:	Pending imports: not done, whether their fence ended or not.
 * @n:		Imports on @list whose worker has not started.
 * @running:	Imports whose worker runs: off @list, not done yet.
 * @idle:	Woken when the last running import is done.
 * @dead:	No new imports: the context closed or its address space
 *		went away.
 * @max:	Limit of @n (max_imports).
 * @user_max:	The user's limit of pending imports.
 * @user:	The context's user, charged for pending imports.
 * @mm:		The importer's address space (for setting its events).
 * @events:	The context's events (for FAIL_EVENT).
 *
 * Embedded in the context; @max to @events are constant.
 */
struct kfdsync_imports {
	/* Protects @list, @n and @dead. */
	spinlock_t lock;
	struct list_head list;
	u32 n;
	u32 running;
	wait_queue_head_t idle;
	bool dead;
	u32 max;
	u32 user_max;
	struct kfdsync_user *user;
	struct mm_struct *mm;
	struct kfdsync_events *events;
};

void kfdsync_imports_init(struct kfdsync_imports *imp);
void kfdsync_imports_kill(struct kfdsync_imports *imp);
void kfdsync_imports_fini(struct kfdsync_imports *imp);
int kfdsync_import_check(const void *data);
int kfdsync_import(struct kfdsync_imports *imp,
		   const struct kfdsync_import *args);
int kfdsync_import_init(void);
void kfdsync_import_exit(void);

#endif /* KFDSYNC_IMPORT_H */
