/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: the signal slots of amdkfd processes, and who watches them.
 *
 * A slot is one event's 8 bytes in an amdkfd process's signal page. The
 * slot layer counts the signals of every slot kfdsync watches - GPU writes
 * that amdkfd acknowledges, CPU sets - and tells the subscribers of the
 * slot (the registered events of kfdsync's contexts, kfdsync_event.c).
 * It sits on kfdsync_amdkfd.h and knows nothing of fences.
 */

#ifndef KFDSYNC_SLOT_H
#define KFDSYNC_SLOT_H

#include <linux/list.h>
#include <linux/types.h>

struct dentry;
struct kfdsync_slot;
struct kfdsync_slot_sub;
struct mm_struct;

/**
 * struct kfdsync_slot_sub_ops - what a subscriber is told
 * @signal:	One more signal of the slot. Under the slot's lock.
 * @end:	The slot ended with -errno @error: amdkfd destroyed the event
 *		(-ECANCELED), freed the process or went away (-EIO), or the
 *		process took an exception (-EIO, -EFAULT). Under the slot's
 *		lock; called at most once per error, maybe after the first.
 *
 * @done collects what the subscriber finishes under the lock (fences); the
 * slot layer hands it to kfdsync_slot_done() after unlocking.
 */
struct kfdsync_slot_sub_ops {
	void (*signal)(struct kfdsync_slot_sub *sub, struct list_head *done);
	void (*end)(struct kfdsync_slot_sub *sub, int error,
		    struct list_head *done);
};

/**
 * struct kfdsync_slot_sub - one subscription to a slot
 * @node:	Entry in the slot's subscribers, under the slot's lock.
 * @slot:	The slot; set while subscribed.
 * @ops:	The callbacks.
 */
struct kfdsync_slot_sub {
	struct list_head node;
	struct kfdsync_slot *slot;
	const struct kfdsync_slot_sub_ops *ops;
};

int kfdsync_slot_subscribe(struct kfdsync_slot_sub *sub, u32 id);
void kfdsync_slot_unsubscribe(struct kfdsync_slot_sub *sub);
bool kfdsync_slot_watchable(void);
bool kfdsync_slot_peek(struct kfdsync_slot_sub *sub, u64 *value);

/* The hooks' reports (struct kfdsync_amdkfd_ops). */
void kfdsync_slot_gpu_ack(const void *kp, u32 id);
void kfdsync_slot_gpu_unwritten(const void *kp, u32 id);
void kfdsync_slot_cpu_set(const struct mm_struct *mm, u32 id);
void kfdsync_slot_event_destroy(const void *kp, u32 id);
void kfdsync_slot_process_free(const void *kp);
void kfdsync_slot_process_error(const void *kp, int error);
void kfdsync_slot_device_reset(const void *kdev);
void kfdsync_slot_all_end(int error);

void kfdsync_slot_debugfs_init(struct dentry *root);
int kfdsync_slot_init(void (*done)(struct list_head *done));
void kfdsync_slot_exit(void);

#endif /* KFDSYNC_SLOT_H */
