// SPDX-License-Identifier: MIT
/*
 * The poll fd of a context: kfdsync_ctx_get_poll_fd(), its members, and the
 * relay failures it reports (kfdsync_ctx_dispatch() is dispatch.c's, above
 * every file whose work it does; this one calls none of them).
 *
 * The poll fd is an epoll fd of the library's own, made on first need. Its
 * members, each tagged with what it is (KFDSYNC_LOOP_* in the top byte of
 * the epoll data): an eventfd that holds a count while a failure of the
 * relay waits to be reported (both forms); and, in the dispatch form, the
 * export relay's timer (relay_dispatch.c) and the completion eventfd of
 * every relayed import (import.c). /dev/kfdsync itself has no .poll, so it
 * is never a member.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"

void kfdsync_loop_init(struct kfdsync_loop *loop)
{
	pthread_mutex_init(&loop->lock, NULL);
	loop->epoll_fd = -1;
	loop->notify_fd = -1;
	loop->failure = 0;
}

void kfdsync_loop_fini(struct kfdsync_loop *loop)
{
	if (loop->notify_fd >= 0)
		close(loop->notify_fd);
	if (loop->epoll_fd >= 0)
		close(loop->epoll_fd);
	pthread_mutex_destroy(&loop->lock);
}

static void notify(struct kfdsync_loop *loop)
{
	uint64_t one = 1;

	if (loop->notify_fd >= 0 && loop->failure)
		(void)!write(loop->notify_fd, &one, sizeof(one));
}

static void drain(int fd)
{
	uint64_t v;

	(void)!read(fd, &v, sizeof(v));
}

/* The poll fd and its notify eventfd; under loop->lock. 0 or -errno. */
static int setup(struct kfdsync_loop *loop)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = KFDSYNC_LOOP_NOTIFY };
	int ret;

	if (loop->epoll_fd >= 0)
		return 0;
	loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epoll_fd < 0)
		return -errno;
	loop->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop->notify_fd < 0 ||
	    epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, loop->notify_fd, &ev)) {
		ret = -errno;
		if (loop->notify_fd >= 0)
			close(loop->notify_fd);
		close(loop->epoll_fd);
		loop->notify_fd = -1;
		loop->epoll_fd = -1;
		return ret;
	}
	loop->pid = getpid();
	/* A failure from before anyone asked is reported all the same. */
	notify(loop);
	return 0;
}

int kfdsync_loop_add(struct kfdsync_ctx *ctx, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };
	int ret;

	pthread_mutex_lock(&ctx->loop.lock);
	ret = setup(&ctx->loop);
	if (!ret && epoll_ctl(ctx->loop.epoll_fd, EPOLL_CTL_ADD, fd, &ev))
		ret = -errno;
	pthread_mutex_unlock(&ctx->loop.lock);
	return ret;
}

void kfdsync_loop_del(struct kfdsync_ctx *ctx, int fd)
{
	pthread_mutex_lock(&ctx->loop.lock);
	if (ctx->loop.epoll_fd >= 0)
		epoll_ctl(ctx->loop.epoll_fd, EPOLL_CTL_DEL, fd, NULL);
	pthread_mutex_unlock(&ctx->loop.lock);
}

void kfdsync_ctx_fail(struct kfdsync_ctx *ctx, int error)
{
	pthread_mutex_lock(&ctx->loop.lock);
	if (!ctx->loop.failure)
		ctx->loop.failure = error;
	notify(&ctx->loop);
	pthread_mutex_unlock(&ctx->loop.lock);
}

KFDSYNC_EXPORT int kfdsync_ctx_get_poll_fd(struct kfdsync_ctx *ctx)
{
	int ret;

	if (!ctx)
		return -EINVAL;
	pthread_mutex_lock(&ctx->loop.lock);
	ret = setup(&ctx->loop);
	if (!ret)
		ret = ctx->loop.epoll_fd;
	pthread_mutex_unlock(&ctx->loop.lock);
	return ret;
}

int kfdsync_loop_epoll_fd(struct kfdsync_ctx *ctx)
{
	int epfd;

	pthread_mutex_lock(&ctx->loop.lock);
	epfd = ctx->loop.epoll_fd;
	/* In a child of fork(2) nothing of the parent's relays runs. */
	if (epfd >= 0 && ctx->loop.pid != getpid())
		epfd = -1;
	pthread_mutex_unlock(&ctx->loop.lock);
	return epfd;
}

int kfdsync_loop_take_failure(struct kfdsync_ctx *ctx)
{
	int failure;

	pthread_mutex_lock(&ctx->loop.lock);
	failure = ctx->loop.failure;
	ctx->loop.failure = 0;
	if (ctx->loop.notify_fd >= 0)
		drain(ctx->loop.notify_fd);
	pthread_mutex_unlock(&ctx->loop.lock);
	return failure;
}
