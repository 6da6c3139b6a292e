/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: CPU timelines, sw_sync-compatible (/dev/kfdsync_timeline).
 */

#ifndef KFDSYNC_TIMELINE_H
#define KFDSYNC_TIMELINE_H

struct dentry;

int kfdsync_timeline_init(struct dentry *debugfs_root);
void kfdsync_timeline_exit(void);

#endif /* KFDSYNC_TIMELINE_H */
