/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: a watched condition on a pinned 64-bit value (an HSA signal).
 */

#ifndef KFDSYNC_WATCH_H
#define KFDSYNC_WATCH_H

#include <linux/slab.h>
#include <linux/types.h>

#include <linux/kfdsync.h>

#include "kfdsync_pin.h"

/**
 * struct kfdsync_watch - a watched value and its condition
 * @pin:	The value (signed 64-bit), pinned.
 * @condition:	KFDSYNC_CONDITION_*.
 * @compare:	The value the condition compares with.
 *
 * Constant after creation.
 */
struct kfdsync_watch {
	struct kfdsync_pin pin;
	u32 condition;
	s64 compare;
};

struct kfdsync_watch *kfdsync_watch_new(u64 addr, u32 condition, s64 compare);

/**
 * kfdsync_watch_holds() - whether the condition holds now
 * @watch: the watch
 *
 * Return: true if the value satisfies it. Any context.
 */
static inline bool kfdsync_watch_holds(const struct kfdsync_watch *watch)
{
	s64 value = (s64)kfdsync_pin_read64(&watch->pin);

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

/**
 * kfdsync_watch_free() - unpin a watch's value and free it
 * @watch: the watch
 *
 * Callable from any context but hard interrupts.
 */
static inline void kfdsync_watch_free(struct kfdsync_watch *watch)
{
	kfdsync_pin_release(&watch->pin, false);
	kfree(watch);
}

#endif /* KFDSYNC_WATCH_H */
