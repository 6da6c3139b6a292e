/* SPDX-License-Identifier: MIT */
/* libkfdsync internals; not installed. */
#ifndef KFDSYNC_LIB_INTERNAL_H
#define KFDSYNC_LIB_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <time.h>

#define KFDSYNC_EXPORT __attribute__((visibility("default")))

struct kfdsync_import_relay;
struct kfdsync_relays;

/*
 * struct kfdsync_loop - what kfdsync_ctx_get_poll_fd() and
 * kfdsync_ctx_dispatch() work on (loop.c)
 *
 * @lock protects everything here.
 */
struct kfdsync_loop {
	pthread_mutex_t lock;
	int epoll_fd;		/* the poll fd, -1 until asked for (or dispatch form) */
	int notify_fd;		/* eventfd in it: a failure waits to be reported */
	int failure;		/* first failure not reported yet (-errno), or 0 */
	pid_t pid;		/* the process that made the fds */
};

/* Tags of the poll fd's members (epoll data): kind in the top byte. */
#define KFDSYNC_LOOP_NOTIFY	(1ULL << 56)
#define KFDSYNC_LOOP_TIMER	(2ULL << 56)
#define KFDSYNC_LOOP_IMPORT	(3ULL << 56)
#define KFDSYNC_LOOP_KIND	(0xffULL << 56)

/* A context: one open of /dev/kfdsync. */
struct kfdsync_ctx {
	int fd;
	uint32_t flags;		/* KFDSYNC_CTX_* given to kfdsync_ctx_new_flags() */
	/* Protects the lazy start of @import_relay. */
	pthread_mutex_t lock;
	/* import.c's relayed imports (and, threads form, its thread), or NULL. */
	struct kfdsync_import_relay *import_relay;
	/* relay.c's export relay (relay mode); own lock. */
	struct kfdsync_relays *relays;
	struct kfdsync_loop loop;
	/* The module answers REGISTER with the event's source (1), not (0), unknown (-1). */
	int register_reply;
	/*
	 * Events relay.c relays now: 0 with the hooks, and then no relay code
	 * runs for an event (event.c checks it, relay.c counts).
	 */
	atomic_uint relayed;
	/*
	 * hsa.c's, set with the context's first hint: make them inert
	 * (kfdsync_ctx_free(), before the close). A pointer, so that ctx.c
	 * does not call up into hsa.c.
	 */
	void (*forget_hints)(struct kfdsync_ctx *ctx);
};

/* Is @ctx in the dispatch form (KFDSYNC_CTX_DISPATCH)? */
static inline bool kfdsync_ctx_dispatching(const struct kfdsync_ctx *ctx)
{
	return ctx->flags & KFDSYNC_CTX_DISPATCH;
}

void kfdsync_import_relay_stop(struct kfdsync_ctx *ctx);
/* import.c, dispatch form: the import whose eventfd @efd became readable. */
int kfdsync_import_relay_done(struct kfdsync_ctx *ctx, int efd);

/* ioctl(2) retried on EINTR/EAGAIN; 0/positive or -errno. */
static inline int kfdsync_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	return ret < 0 ? -errno : ret;
}

/*
 * kfdsync_ioctl() on /dev/kfdsync: a request the module does not know
 * (ENOTTY, an older module) is the library's one "not supported" errno,
 * EOPNOTSUPP (kfdsync.h, "Errors").
 */
static inline int kfdsync_ctx_ioctl(int fd, unsigned long req, void *arg)
{
	int ret = kfdsync_ioctl(fd, req, arg);

	return ret == -ENOTTY ? -EOPNOTSUPP : ret;
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
 * relay.c: the export relay of a context (relay mode). Threads form: a few
 * threads with event ages, one per relayed event without; a thread stops
 * with its last event, kfdsync_relays_free() stops and joins the rest.
 * Dispatch form (relay_dispatch.c): no thread; kfdsync_relays_dispatch()
 * asks amdkfd without waiting, from the caller's thread.
 */
int kfdsync_relays_new(struct kfdsync_ctx *ctx, struct kfdsync_relays **out);
void kfdsync_relays_free(struct kfdsync_relays *rs);
int kfdsync_relays_enable(struct kfdsync_relays *rs, bool enabled);
int kfdsync_relay_start(struct kfdsync_relays *rs, uint32_t event_id);
void kfdsync_relay_stop(struct kfdsync_relays *rs, uint32_t event_id);
/* Dispatch form: a fence of @event_id that may pend until @deadline_ns was exported. */
void kfdsync_relay_exported(struct kfdsync_relays *rs, uint32_t event_id, int64_t deadline_ns);
/* Dispatch form: report what amdkfd delivered to @event_id so far (before its age is read). */
void kfdsync_relay_catch_up(struct kfdsync_relays *rs, uint32_t event_id);
/* Dispatch form: the poll interval's tick; the number of signals reported. */
int kfdsync_relays_dispatch(struct kfdsync_relays *rs);
int kfdsync_relays_set_interval(struct kfdsync_relays *rs, int64_t interval_ns);
/* What amdkfd offers the relay: 1 event ages, 0 none, -errno /dev/kfd unusable. */
int kfdsync_relays_ages(struct kfdsync_relays *rs);
/* Set amdkfd event @event_id of this process, on the relay's /dev/kfd fd; 0 or -errno. */
int kfdsync_relays_set_event(struct kfdsync_relays *rs, uint32_t event_id);

/*
 * kfd.c: amdkfd's event ioctls, on a /dev/kfd fd of this process; 0 or
 * -errno. _create() makes an auto-reset signal event, not signalled.
 */
int kfdsync_kfd_event_create(int kfd_fd, uint32_t *event_id);
int kfdsync_kfd_event_set(int kfd_fd, uint32_t event_id);
int kfdsync_kfd_event_destroy(int kfd_fd, uint32_t event_id);

/*
 * loop.c: the poll fd. kfdsync_ctx_fail() records a failure of the relay
 * (any thread): the poll fd becomes readable, kfdsync_ctx_dispatch()
 * returns it once.
 */
void kfdsync_ctx_fail(struct kfdsync_ctx *ctx, int error);
/* Add or remove a member of the poll fd (made first if needed); 0 or -errno. */
int kfdsync_loop_add(struct kfdsync_ctx *ctx, int fd, uint64_t tag);
void kfdsync_loop_del(struct kfdsync_ctx *ctx, int fd);
void kfdsync_loop_init(struct kfdsync_loop *loop);
/* The poll fd for dispatch.c: -1 if not made yet, or in a child of fork(2). */
int kfdsync_loop_epoll_fd(struct kfdsync_ctx *ctx);
/* The failure not reported yet (-errno, then forgotten), or 0; the notify drained. */
int kfdsync_loop_take_failure(struct kfdsync_ctx *ctx);
void kfdsync_loop_fini(struct kfdsync_loop *loop);

/*
 * event.c: kfdsync_event_add(), with the relay left out when @relay is
 * false (for events other threads wait on, such as ROCr's signal events).
 */
int kfdsync_event_add_relay(struct kfdsync_ctx *ctx, uint32_t event_id,
			    uint64_t slot_addr, uint64_t *age, bool relay);

/*
 * hsa.c: the hint plumbing, public in <kfdsync_hsa.h> (which needs ROCr's
 * headers, so the library declares it here too).
 */
struct kfdsync_hsa_signal;
int kfdsync_hsa_signal_hint_new(struct kfdsync_ctx *ctx,
				const struct kfdsync_hsa_signal *sig,
				int64_t watchdog_ns, uint64_t *hint);
bool kfdsync_hsa_signal_hint_handler(int64_t value, void *hint);
void kfdsync_hsa_signal_hint_cancel(uint64_t hint);


#endif
