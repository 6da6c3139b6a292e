// SPDX-License-Identifier: MIT
/*
 * hsa_signal, its import (see hsa_signal.c): a vgem fence into an HSA
 * signal.
 *
 * The import (subtract 1, set the signal's event) releases a thread
 * blocked in hsa_signal_wait_scacquire().
 */

#include <time.h>

#include "hsa_signal.h"
#include "vgem.h"

/* A sync_file for a new unsignalled vgem fence on @buf. */
static int vgem_sync_file(int vgem, struct vgem_buffer *buf)
{
	if (!vgem_buffer_new(vgem, buf, true))
		return -errno;
	/* A reader waits for vgem's write fence. */
	return kfdsync_dmabuf_export_sync_file(buf->dmabuf, KFDSYNC_DMABUF_READ);
}

struct waiter {
	hsa_signal_t s;
	hsa_signal_value_t seen;
	volatile bool done;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->seen = hsa_signal_wait_scacquire(w->s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
					    HSA_WAIT_STATE_BLOCKED);
	w->done = true;
	return NULL;
}

TEST(import_vgem)
{
	struct waiter w = { .seen = -1 };
	struct vgem_buffer buf;
	struct timespec until;
	bool before, joined;
	int vgem, sf, ret;
	pthread_t t;

	vgem = drm_open_driver("vgem", false);
	if (vgem < 0) {
		tap_skip("no vgem device in the guest", "import_vgem_releases_waiter");
		return;
	}
	sf = vgem_sync_file(vgem, &buf);
	if (sf < 0) {
		tap_ok(false, "import_vgem_releases_waiter: vgem fence: %s", strerror(-sf));
		vgem_buffer_free(vgem, &buf);
		close(vgem);
		return;
	}
	w.s = signal_new(1);
	ret = kfdsync_hsa_import_sync_file(ctx, sf, w.s, KFDSYNC_HSA_IMPORT_SUBTRACT, 1, 1);
	close(sf);	/* the import holds the fence */
	if (ret || pthread_create(&t, NULL, waiter_main, &w)) {
		tap_ok(false, "import_vgem_releases_waiter: import: %s", strerror(-ret));
		vgem_fence_signal(vgem, buf.fence);
		hsa_signal_destroy(w.s);
		vgem_buffer_free(vgem, &buf);
		close(vgem);
		return;
	}
	/* Not a proof that it blocks, but it must not have returned. */
	usleep(100 * 1000);
	before = !w.done && hsa_signal_load_scacquire(w.s) == 1;
	ret = vgem_fence_signal(vgem, buf.fence) ? 0 : -errno;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	joined = pthread_timedjoin_np(t, NULL, &until) == 0;
	tap_ok(before && ret == 0 && joined && w.seen == 0 && hsa_signal_load_scacquire(w.s) == 0,
	       "import_vgem_releases_waiter (waiting before: %d, joined %d, seen %" PRId64 ")",
	       before, joined, w.seen);
	if (!joined) {
		hsa_signal_store_screlease(w.s, 0);	/* release it anyway */
		pthread_join(t, NULL);
	}
	hsa_signal_destroy(w.s);
	vgem_buffer_free(vgem, &buf);
	close(vgem);
}
