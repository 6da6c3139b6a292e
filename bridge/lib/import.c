// SPDX-License-Identifier: MIT
/*
 * sync_file imports: a fence's end writes memory, sets a KFD event, or fails
 * a registered event (KFDSYNC_IOCTL_IMPORT_SYNC_FILE).
 *
 * Where the module cannot set amdkfd events itself (relay mode: it answers
 * SET_EVENT with EOPNOTSUPP), the library does that part: the kernel import
 * does everything else and signals an eventfd when done, and the library
 * then sets it (AMDKFD_IOC_SET_EVENT, lib/kfd.c). The event is thus set after the memory
 * write, as in the kernel path. Who watches the eventfds depends on the
 * context's form: the threads form has an import relay thread, asleep in
 * poll(2) on them and a wake-up eventfd, that starts on the first relayed
 * import; the dispatch form adds each to the context's poll fd, and
 * kfdsync_ctx_dispatch() sets the event (kfdsync_import_relay_done()).
 * Either stops in kfdsync_ctx_free(), before the context's fd is closed:
 * closing it cancels the kernel imports still pending, whose events are then
 * never set, exactly as a cancelled in-kernel import.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"

/* One relayed import: its completion eventfd and the event to set. */
struct relay_item {
	int eventfd;
	uint32_t event_id;
};

/**
 * struct kfdsync_import_relay - a context's relayed imports
 * @thread:	the thread (threads form)
 * @wake:	eventfd that wakes the thread: new items or stop; -1 in the
 *		dispatch form
 * @lock:	protects everything below
 * @items:	pending relayed imports
 * @n_items:	length of @items
 * @cap:	allocated length of @items
 * @stop:	the thread should return
 * @pid:	the process the thread runs in
 * @dispatch:	the dispatch form: no thread, the items are in the poll fd
 * @ctx:	the context, for kfdsync_ctx_fail()
 */
struct kfdsync_import_relay {
	pthread_t thread;
	int wake;
	pthread_mutex_t lock;
	struct relay_item *items;
	size_t n_items;
	size_t cap;
	bool stop;
	pid_t pid;
	bool dispatch;
	struct kfdsync_ctx *ctx;
};

/* Set amdkfd event @event_id of this process (lib/kfd.c). */
static void relay_set_event(struct kfdsync_import_relay *relay, uint32_t event_id)
{
	/* Nothing to report to: an unknown id fails as in the kernel path. */
	(void)kfdsync_relays_set_event(relay->ctx->relays, event_id);
}

static void *relay_main(void *arg)
{
	struct kfdsync_import_relay *relay = arg;
	struct pollfd *fds = NULL;
	size_t n = 0, cap = 0, i;

	for (;;) {
		pthread_mutex_lock(&relay->lock);
		if (relay->stop) {
			pthread_mutex_unlock(&relay->lock);
			break;
		}
		n = relay->n_items + 1;
		if (n > cap) {
			struct pollfd *bigger = realloc(fds, n * sizeof(*fds));

			if (!bigger) {
				/* Retry after the next wake-up. */
				n = cap ? 1 : 0;
			} else {
				fds = bigger;
				cap = n;
			}
		}
		for (i = 0; i + 1 < n; i++)
			fds[i + 1] = (struct pollfd){
				.fd = relay->items[i].eventfd, .events = POLLIN };
		pthread_mutex_unlock(&relay->lock);

		if (!n) {
			/* No memory even for the wake-up fd: block on it. */
			uint64_t v;

			if (read(relay->wake, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
			continue;
		}
		fds[0] = (struct pollfd){ .fd = relay->wake, .events = POLLIN };
		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR || errno == ENOMEM)
				continue;
			/* Not seen: the events of the imports pending are never set. */
			kfdsync_ctx_fail(relay->ctx, -errno);
			break;
		}
		if (fds[0].revents) {
			uint64_t v;

			(void)!read(relay->wake, &v, sizeof(v));
		}

		pthread_mutex_lock(&relay->lock);
		for (i = 1; i < n; i++) {
			size_t j;

			if (!fds[i].revents)
				continue;
			/* Items only leave here: fds[i] is still listed. */
			for (j = 0; j < relay->n_items; j++)
				if (relay->items[j].eventfd == fds[i].fd)
					break;
			if (j == relay->n_items)
				continue;
			relay_set_event(relay, relay->items[j].event_id);
			close(relay->items[j].eventfd);
			relay->items[j] = relay->items[--relay->n_items];
		}
		pthread_mutex_unlock(&relay->lock);
	}
	free(fds);
	return NULL;
}

static void relay_wake(struct kfdsync_import_relay *relay)
{
	uint64_t one = 1;

	(void)!write(relay->wake, &one, sizeof(one));
}

/*
 * The context's import relay, made on first need: in the threads form its
 * thread started. 0 or -errno.
 */
static int relay_start(struct kfdsync_ctx *ctx)
{
	struct kfdsync_import_relay *relay;
	sigset_t all, old;
	int ret;

	if (ctx->import_relay)
		return 0;
	relay = calloc(1, sizeof(*relay));
	if (!relay)
		return -ENOMEM;
	relay->ctx = ctx;
	relay->pid = getpid();
	relay->wake = -1;
	pthread_mutex_init(&relay->lock, NULL);
	relay->dispatch = kfdsync_ctx_dispatching(ctx);
	if (relay->dispatch) {
		ctx->import_relay = relay;
		return 0;
	}
	relay->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (relay->wake < 0) {
		ret = -errno;
		pthread_mutex_destroy(&relay->lock);
		free(relay);
		return ret;
	}
	/* The application's signal handlers never run on our threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&relay->thread, NULL, relay_main, relay);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_mutex_destroy(&relay->lock);
		close(relay->wake);
		free(relay);
		return -EAGAIN;
	}
	/* Found by name in /proc/self/task (tools/bench's idle wake-ups). */
	pthread_setname_np(relay->thread, "kfdsync-import");
	ctx->import_relay = relay;
	return 0;
}

/* Hand the kernel import's completion @efd to the relay; 0 or -errno. */
static int relay_add(struct kfdsync_ctx *ctx, int efd, uint32_t event_id)
{
	struct kfdsync_import_relay *relay = ctx->import_relay;
	int ret = 0;

	pthread_mutex_lock(&relay->lock);
	if (relay->n_items == relay->cap) {
		size_t cap = relay->cap ? 2 * relay->cap : 16;
		struct relay_item *items;

		items = realloc(relay->items, cap * sizeof(*items));
		if (!items)
			ret = -ENOMEM;
		else {
			relay->items = items;
			relay->cap = cap;
		}
	}
	/* Listed before it can be seen in the poll fd. */
	if (!ret)
		relay->items[relay->n_items++] = (struct relay_item){
			.eventfd = efd, .event_id = event_id };
	if (!ret && relay->dispatch) {
		ret = kfdsync_loop_add(ctx, efd, KFDSYNC_LOOP_IMPORT | (uint32_t)efd);
		if (ret)
			relay->n_items--;
	}
	pthread_mutex_unlock(&relay->lock);
	if (!ret && !relay->dispatch)
		relay_wake(relay);
	return ret;
}

/*
 * Dispatch form: the poll fd said the member tagged @efd was ready. Any
 * number of threads dispatch at once, so the tag may be stale: another
 * thread may have finished that import and closed @efd, and a new import's
 * eventfd may have its number now. Only the eventfd itself says whether
 * its import is done: it is read (without blocking) before anything is
 * done, under the lock that lists, adds and closes the items. Not listed:
 * the number is someone else's now (a closed fd left the poll fd by
 * itself). Listed but empty: a pending import that reuses the number.
 */
int kfdsync_import_relay_done(struct kfdsync_ctx *ctx, int efd)
{
	struct kfdsync_import_relay *relay = ctx->import_relay;
	uint64_t v;
	size_t j;
	int ret = -ENOENT;

	if (!relay)
		return ret;
	pthread_mutex_lock(&relay->lock);
	for (j = 0; j < relay->n_items; j++) {
		if (relay->items[j].eventfd != efd)
			continue;
		if (read(efd, &v, sizeof(v)) != sizeof(v)) {
			ret = -EAGAIN;
			break;
		}
		kfdsync_loop_del(ctx, efd);
		relay_set_event(relay, relay->items[j].event_id);
		close(efd);
		relay->items[j] = relay->items[--relay->n_items];
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&relay->lock);
	return ret;
}

/**
 * kfdsync_import_relay_stop() - stop and free a context's relay thread
 * @ctx: the context, whose fd is still open
 *
 * Relayed imports still pending are dropped: closing the context cancels
 * their kernel side. In a child of fork(2), only the child's copies are
 * freed.
 */
void kfdsync_import_relay_stop(struct kfdsync_ctx *ctx)
{
	struct kfdsync_import_relay *relay = ctx->import_relay;
	size_t i;

	if (!relay)
		return;
	/* In a child of fork(2) the thread does not exist: nothing to join. */
	if (!relay->dispatch && getpid() == relay->pid) {
		pthread_mutex_lock(&relay->lock);
		relay->stop = true;
		pthread_mutex_unlock(&relay->lock);
		relay_wake(relay);
		pthread_join(relay->thread, NULL);
	}

	/* Closing them takes them out of the poll fd too. */
	for (i = 0; i < relay->n_items; i++)
		close(relay->items[i].eventfd);
	free(relay->items);
	pthread_mutex_destroy(&relay->lock);
	if (relay->wake >= 0)
		close(relay->wake);
	free(relay);
	ctx->import_relay = NULL;
}

/* The SET_EVENT part by the relay, the rest by the kernel. */
static int import_relayed(struct kfdsync_ctx *ctx, struct kfdsync_import *args)
{
	uint32_t event_id = args->event_id;
	int efd, ret;

	pthread_mutex_lock(&ctx->lock);
	ret = relay_start(ctx);
	pthread_mutex_unlock(&ctx->lock);
	if (ret)
		return ret;

	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		return -errno;
	args->flags = (args->flags & ~KFDSYNC_IMPORT_SET_EVENT) |
		      KFDSYNC_IMPORT_EVENTFD;
	args->event_id = 0;
	args->eventfd = efd;
	ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, args);
	if (!ret)
		ret = relay_add(ctx, efd, event_id);
	if (ret)
		close(efd);
	/*
	 * A failed relay_add() leaves a kernel import without its event set:
	 * only under memory exhaustion, and reported.
	 */
	return ret;
}

KFDSYNC_EXPORT int kfdsync_import_sync_file(struct kfdsync_ctx *ctx,
					    int sync_file_fd,
					    const struct kfdsync_import_desc *desc)
{
	struct kfdsync_import args;
	int ret;

	if (!ctx || !desc || desc->pad || (desc->flags & KFDSYNC_IMPORT_EVENTFD))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(desc->reserved) / sizeof(desc->reserved[0]); i++)
		if (desc->reserved[i])
			return -EINVAL;

	memset(&args, 0, sizeof(args));
	args.fd = sync_file_fd;
	args.flags = desc->flags;
	args.addr = (uintptr_t)desc->addr;
	args.value = desc->value;
	args.error_value = desc->error_value;
	args.event_id = desc->event_id;
	args.fail_event_id = desc->fail_event_id;

	ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &args);
	if (ret != -EOPNOTSUPP || !(desc->flags & KFDSYNC_IMPORT_SET_EVENT))
		return ret;
	return import_relayed(ctx, &args);
}

KFDSYNC_EXPORT int kfdsync_import_to_memory(struct kfdsync_ctx *ctx,
					    int sync_file_fd, uint64_t *addr,
					    uint64_t value,
					    uint64_t error_value)
{
	struct kfdsync_import_desc desc = {
		.flags = KFDSYNC_IMPORT_MEMORY,
		.addr = addr,
		.value = value,
		.error_value = error_value,
	};

	return kfdsync_import_sync_file(ctx, sync_file_fd, &desc);
}

KFDSYNC_EXPORT int kfdsync_import_to_event(struct kfdsync_ctx *ctx,
					   int sync_file_fd, uint32_t event_id)
{
	struct kfdsync_import_desc desc = {
		.flags = KFDSYNC_IMPORT_SET_EVENT,
		.event_id = event_id,
	};

	return kfdsync_import_sync_file(ctx, sync_file_fd, &desc);
}
