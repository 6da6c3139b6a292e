// SPDX-License-Identifier: MIT
/*
 * hsa_external_semaphore: the shape of HIP external semaphores on Linux,
 * with ROCr HSA signals and kfdsync.
 *
 * HIP's hipImportExternalSemaphore() / hipSignalExternalSemaphoresAsync() /
 * hipWaitExternalSemaphoresAsync() exist for Vulkan interop (opaque fds of
 * Vulkan semaphores); a compositor or a KMS display speaks sync_files. What
 * a HIP runtime would need underneath is two conversions between an HSA
 * signal (what a HIP stream's completion and its barrier packets use) and a
 * sync_file:
 *
 *   signal -> sync_file: "the stream's completion signal reached 0"
 *     kfdsync_hsa_export_sync_file(ctx, signal, HSA_SIGNAL_CONDITION_LT, 1)
 *     -> hand the fd to the compositor (wl_surface acquire point, KMS
 *        IN_FENCE_FD, EGL/Vulkan sync fd import).
 *   sync_file -> signal: "the display released the buffer"
 *     kfdsync_hsa_import_sync_file(ctx, fd, signal, SUBTRACT, 1, 1)
 *     -> a barrier-AND packet (GPU) or hsa_signal_wait_scacquire() (CPU)
 *        on that signal lets the next frame's work start.
 *
 * How this program works: there is no GPU here, so a "compute" thread plays
 * the stream. For each frame it waits on the release signal (the display's
 * fence, imported), "renders" and completes the frame's completion signal
 * with hsa_signal_store_screlease(). The main thread plays the compositor:
 * it exports each frame's completion as a sync_file, waits on it as a KMS
 * commit would, and "displays" the frame by advancing a kfdsync CPU timeline
 * whose fence stands for the display's release fence of the previous
 * buffer. With a GPU, the completion is written by the queue (the value is
 * decremented, the mailbox written, the interrupt raised) and kfdsync sees
 * it the same way.
 *
 * Lifetimes, as <kfdsync_hsa.h> wants them: an export registers its
 * signal's KFD event with the context; kfdsync_hsa_release() gives that
 * back once the signal is exported no more, and always before
 * hsa_signal_destroy() (ROCr reuses a destroyed signal's memory and KFD
 * event for the next signal it creates).
 *
 * Needs kfdsync.ko, a /dev/kfd (amdgpu loaded; a CPU-only one is enough)
 * and ROCr. README.md in this directory says how to build and run it.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hsa/hsa.h>
#include <kfdsync_hsa.h>

#define NSEC_PER_SEC	1000000000LL

/* One frame in flight between the "stream" and the "compositor". */
struct frame {
	hsa_signal_t done;	/* 1 while rendering, 0 when complete */
	hsa_signal_t release;	/* 1 until the display released the buffer */
	unsigned int index;
};

struct stream {
	struct frame *frames;
	unsigned int count;
	unsigned int stall;	/* this frame never completes; count: none */
};

static void usage(const char *argv0)
{
	printf("usage: %s [options]\n"
	       "  -n, --frames N        frames to run (default 3)\n"
	       "  -s, --stall-frame N   frame N (from 0) never completes: its fence ends\n"
	       "                        by its watchdog, and the frame is not presented\n"
	       "  -w, --watchdog-ms MS  watchdog of each frame's fence (default: the\n"
	       "                        module's watchdog_ms)\n"
	       "  -h, --help            this help\n"
	       "Exit status: 0 every frame presented, 1 a frame's fence ended with an\n"
	       "error or did not signal within 10 s (or a setup failure), 2 bad usage.\n",
	       argv0);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "hsa_external_semaphore: %s: %s\n", what, strerror(err));
	exit(1);
}

/* The "GPU stream": wait for the buffer, render, complete. */
static void *stream_main(void *arg)
{
	struct stream *st = arg;

	for (unsigned int i = 0; i < st->count; i++) {
		struct frame *f = &st->frames[i];

		/* A barrier packet on the release signal, on a real queue. */
		hsa_signal_wait_scacquire(f->release, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
					  HSA_WAIT_STATE_BLOCKED);
		printf("stream: frame %u: buffer released, rendering\n", f->index);
		if (i == st->stall) {
			printf("stream: frame %u: stalls (--stall-frame)\n", f->index);
			break;
		}
		/* The kernel's completion signal, on a real queue. */
		hsa_signal_store_screlease(f->done, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "stall-frame", required_argument, NULL, 's' },
		{ "watchdog-ms", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct kfdsync_timeline *display;
	struct kfdsync_ctx *ctx;
	struct stream st = { .count = 3, .stall = UINT32_MAX };
	int64_t watchdog_ns = 0;
	pthread_t stream;
	int c, ret, status = 0;

	while ((c = getopt_long(argc, argv, "n:s:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			st.count = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			st.stall = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			watchdog_ns = (int64_t)strtoul(optarg, NULL, 0) * 1000000;
			break;
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			usage(argv[0]);
			return 2;
		}
	}
	if (!st.count || st.count > 1000) {
		usage(argv[0]);
		return 2;
	}

	if (hsa_init() != HSA_STATUS_SUCCESS)
		die("hsa_init", ENODEV);
	ret = kfdsync_ctx_new(&ctx);
	if (ret)
		die("kfdsync_ctx_new", -ret);
	/* Stands for the display: its release fences are timeline points. */
	ret = kfdsync_timeline_new(&display);
	if (ret)
		die("kfdsync_timeline_new", -ret);

	st.frames = calloc(st.count, sizeof(*st.frames));
	if (!st.frames)
		die("calloc", ENOMEM);
	for (unsigned int i = 0; i < st.count; i++) {
		struct frame *f = &st.frames[i];
		int release_fd;

		f->index = i;
		if (hsa_signal_create(1, 0, NULL, &f->done) != HSA_STATUS_SUCCESS ||
		    hsa_signal_create(1, 0, NULL, &f->release) != HSA_STATUS_SUCCESS)
			die("hsa_signal_create", ENOMEM);
		/* sync_file -> signal: the display's release fence of the buffer. */
		release_fd = kfdsync_timeline_create_fence(display, i + 1, "release");
		if (release_fd < 0)
			die("kfdsync_timeline_create_fence", -release_fd);
		ret = kfdsync_hsa_import_sync_file(ctx, release_fd, f->release,
						   KFDSYNC_HSA_IMPORT_SUBTRACT, 1, 1);
		/* The import holds its own fence reference. */
		close(release_fd);
		release_fd = -1;
		if (ret == -EOPNOTSUPP) {
			fprintf(stderr, "hsa_external_semaphore: this kfdsync.ko cannot import "
				"sync_files (no KFDSYNC_IOCTL_IMPORT_SYNC_FILE)\n");
			return 1;
		}
		if (ret)
			die("kfdsync_hsa_import_sync_file", -ret);
	}

	if (pthread_create(&stream, NULL, stream_main, &st))
		die("pthread_create", EAGAIN);

	for (unsigned int i = 0; i < st.count; i++) {
		struct frame *f = &st.frames[i];
		int32_t fence = 0;
		int done_fd;

		/* The display releases the buffer the frame renders into. */
		ret = kfdsync_timeline_inc(display, 1);
		if (ret)
			die("kfdsync_timeline_inc", -ret);
		/* signal -> sync_file: what a compositor (or KMS) receives. */
		done_fd = kfdsync_hsa_export_sync_file(ctx, f->done, HSA_SIGNAL_CONDITION_LT, 1,
						       watchdog_ns);
		if (done_fd < 0)
			die("kfdsync_hsa_export_sync_file", -done_fd);
		/*
		 * Signalled is not the same as done: a fence that ended with an
		 * error (its watchdog, its event's owner gone) signals too. The
		 * status says which; a compositor must not present such a frame.
		 */
		ret = kfdsync_sync_file_wait_status(done_fd, 10 * NSEC_PER_SEC, &fence);
		if (ret == 0)
			ret = fence < 0 ? fence : 0;
		if (ret == -ETIME)
			printf("compositor: frame %u: not complete after 10 s\n", i);
		else if (ret)
			printf("compositor: frame %u: ended with an error: %s, not presenting\n",
			       i, strerror(-ret));
		else
			printf("compositor: frame %u: complete, presenting\n", i);
		/* The compositor is done with the fence, and with the signal's export. */
		close(done_fd);
		done_fd = -1;
		kfdsync_hsa_release(ctx, f->done);
		if (ret) {
			status = 1;
			break;
		}
	}

	/*
	 * After a failure the display stops: closing its timeline ends the
	 * release fences not yet signalled with -ENOENT, their imports
	 * subtract the error value (1) all the same, and the stream runs out
	 * instead of waiting for buffers forever.
	 */
	if (status) {
		kfdsync_timeline_free(display);
		display = NULL;
	}
	pthread_join(stream, NULL);
	for (unsigned int i = 0; i < st.count; i++) {
		/* Released above, or never exported (-ENOENT): nothing registered now. */
		kfdsync_hsa_release(ctx, st.frames[i].done);
		hsa_signal_destroy(st.frames[i].done);
		hsa_signal_destroy(st.frames[i].release);
	}
	free(st.frames);
	kfdsync_timeline_free(display);
	kfdsync_ctx_free(ctx);
	hsa_shut_down();
	return status;
}
