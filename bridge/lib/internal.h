/* SPDX-License-Identifier: MIT */
/* libkfdsync internals; not installed. */
#ifndef KFDSYNC_LIB_INTERNAL_H
#define KFDSYNC_LIB_INTERNAL_H

#include <errno.h>
#include <sys/ioctl.h>

#define KFDSYNC_EXPORT __attribute__((visibility("default")))

/* ioctl(2) retried on EINTR/EAGAIN; 0/positive or -errno. */
static inline int kfdsync_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	return ret < 0 ? -errno : ret;
}

#endif
