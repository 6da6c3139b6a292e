/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: one pinned word of a process's ordinary memory.
 */

#ifndef KFDSYNC_PIN_H
#define KFDSYNC_PIN_H

#include <linux/types.h>

struct page;
struct kfdsync_pinned;

/**
 * struct kfdsync_pin - a pinned page and the word in it
 * @page:	The page (FOLL_PIN | FOLL_LONGTERM); its whole folio is
 *		pinned.
 * @offset:	Offset of the word in @page.
 * @charge:	What the folio is charged to the user (shared by the user's
 *		pins of that folio), or NULL when the pinner had
 *		CAP_IPC_LOCK.
 */
struct kfdsync_pin {
	struct page *page;
	unsigned int offset;
	struct kfdsync_pinned *charge;
};

int kfdsync_pin_user(struct kfdsync_pin *pin, u64 addr, size_t size);
void kfdsync_pin_release(struct kfdsync_pin *pin, bool dirty);
u64 kfdsync_pin_read64(const struct kfdsync_pin *pin);
void kfdsync_pin_write(const struct kfdsync_pin *pin, u64 value, bool word32,
		       bool sub);

#endif /* KFDSYNC_PIN_H */
