// SPDX-License-Identifier: MIT
/*
 * TEMPORARY: a userspace stand-in for kfdsync_import_to_memory() until the
 * kernel import lands on main. A thread waits for the fence and writes the
 * value. Remove with the rebase onto the real implementation.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <kfdsync.h>

struct stub_import {
	int fd;
	uint64_t *addr, value, error_value;
};

static void *stub_thread(void *arg)
{
	struct stub_import *im = arg;
	struct kfdsync_sync_file_status st;

	kfdsync_sync_file_wait(im->fd, -1);
	kfdsync_sync_file_get_status(im->fd, &st, NULL, 0);
	__atomic_store_n(im->addr, st.status < 0 ? im->error_value : im->value,
			 __ATOMIC_RELEASE);
	close(im->fd);
	free(im);
	return NULL;
}

int kfdsync_import_to_memory(struct kfdsync_ctx *ctx, int sync_file_fd, uint64_t *addr,
			     uint64_t value, uint64_t error_value)
{
	struct stub_import *im = malloc(sizeof(*im));
	pthread_t t;

	(void)ctx;
	if (!im)
		return -ENOMEM;
	*im = (struct stub_import){ dup(sync_file_fd), addr, value, error_value };
	if (im->fd < 0 || pthread_create(&t, NULL, stub_thread, im)) {
		free(im);
		return -EAGAIN;
	}
	pthread_detach(t);
	return 0;
}
