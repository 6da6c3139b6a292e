/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kfdsync: the ioctls of /dev/kfdsync.
 */

#ifndef KFDSYNC_IOCTL_H
#define KFDSYNC_IOCTL_H

struct file;

long kfdsync_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif /* KFDSYNC_IOCTL_H */
