// SPDX-License-Identifier: MIT
/*
 * kfdsync_ctx_dispatch() (kfdsync.h, "Event loops"): what the poll fd
 * (loop.c) says is ready, done on the caller's thread: relayed imports
 * (import.c), the dispatch form's relay tick (relay_dispatch.c), and the
 * failure to report. The top of the library's layers: it calls them, none
 * of them calls it.
 */
#include <sys/epoll.h>

#include "kfdsync.h"
#include "internal.h"

KFDSYNC_EXPORT int kfdsync_ctx_dispatch(struct kfdsync_ctx *ctx)
{
	struct epoll_event evs[32];
	int epfd, n, count = 0, failure;

	if (!ctx)
		return -EINVAL;
	epfd = kfdsync_loop_epoll_fd(ctx);
	/* Never blocks: what is ready now, in rounds while rounds come back full. */
	while (epfd >= 0) {
		n = epoll_wait(epfd, evs, 32, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			uint64_t tag = evs[i].data.u64;

			if ((tag & KFDSYNC_LOOP_KIND) == KFDSYNC_LOOP_IMPORT &&
			    kfdsync_import_relay_done(ctx, (int)(uint32_t)tag) == 0)
				count++;
			/* The notify and the timer are read below. */
		}
		if (n < 32)
			break;
	}
	if (epfd >= 0)
		count += kfdsync_relays_dispatch(ctx->relays);
	failure = kfdsync_loop_take_failure(ctx);
	return failure ? failure : count;
}
