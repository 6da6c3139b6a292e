/* SPDX-License-Identifier: MIT */
/* libkfdsync internals; not installed. */
#ifndef KFDSYNC_LIB_INTERNAL_H
#define KFDSYNC_LIB_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>

#define KFDSYNC_EXPORT __attribute__((visibility("default")))

struct kfdsync_import_relay;
struct kfdsync_relays;

/* A context: one open of /dev/kfdsync. */
struct kfdsync_ctx {
	int fd;
	/* Protects the lazy start of @import_relay. */
	pthread_mutex_t lock;
	/* import.c's relay thread, or NULL. */
	struct kfdsync_import_relay *import_relay;
	/* relay.c's export relay threads (relay mode); own lock. */
	struct kfdsync_relays *relays;
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

/*
 * relay.c: the export relay of a context (relay mode): a few threads with
 * event ages, one per relayed event without. A thread stops with its last
 * event; kfdsync_relays_free() stops and joins the rest.
 */
int kfdsync_relays_new(struct kfdsync_relays **out);
void kfdsync_relays_free(struct kfdsync_relays *rs);
int kfdsync_relays_enable(struct kfdsync_relays *rs, bool enabled);
int kfdsync_relay_start(struct kfdsync_relays *rs, int ctx_fd, uint32_t event_id,
			uint64_t slot_addr);
void kfdsync_relay_stop(struct kfdsync_relays *rs, uint32_t event_id);
/*
 * event.c: kfdsync_event_add(), with the relay left out when @relay is
 * false (for events other threads wait on, such as ROCr's signal events).
 */
int kfdsync_event_add_relay(struct kfdsync_ctx *ctx, uint32_t event_id,
			    uint64_t slot_addr, uint64_t *age, bool relay);

/* hsa.c: make every hint of @ctx inert (kfdsync_ctx_free(), before the close). */
void kfdsync_hsa_hints_forget(struct kfdsync_ctx *ctx);

#endif
