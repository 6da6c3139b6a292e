/* SPDX-License-Identifier: MIT */
/* libkfdsync internals; not installed. */
#ifndef KFDSYNC_LIB_INTERNAL_H
#define KFDSYNC_LIB_INTERNAL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>

#define KFDSYNC_EXPORT __attribute__((visibility("default")))

struct kfdsync_import_relay;

/* A context: one open of /dev/kfdsync. */
struct kfdsync_ctx {
	int fd;
	/* Protects the lazily started threads below. */
	pthread_mutex_t lock;
	/* import.c's relay thread, or NULL. */
	struct kfdsync_import_relay *import_relay;
};

void kfdsync_import_relay_stop(struct kfdsync_ctx *ctx);

/* ioctl(2) retried on EINTR/EAGAIN; 0/positive or -errno. */
static inline int kfdsync_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	return ret < 0 ? -errno : ret;
}

/* open(2) of a kfdsync device, close-on-exec, retried on EINTR; fd or -errno. */
static inline int kfdsync_open_device(const char *path)
{
	int fd;

	do {
		fd = open(path, O_RDWR | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

/* CLOCK_MONOTONIC now, in nanoseconds (what the kernel's deadlines use). */
static inline int64_t kfdsync_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
