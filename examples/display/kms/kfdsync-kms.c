// SPDX-License-Identifier: MIT
/*
 * kfdsync-kms - compute output on a KMS display, fenced both ways.
 *
 * How this program works
 * ======================
 *
 * Each frame, a compute stage draws into one of two dumb buffers and the
 * display shows it. Neither side waits on the CPU for the other; fences
 * carry the ordering:
 *
 *   compute queue                      kfdsync.ko                  KMS
 *   -------------                      ----------                  ---
 *   WAIT_REG_MEM presented >= N   <----  import of out-fence N-1: when
 *     (commit N-1 done: frame N-2        it signals, write N into
 *      is off the screen)
 *   draw frame N into buffer N%2         "presented"
 *   RELEASE_MEM on event N%2  ------->  event exported as a sync_file ---> IN_FENCE_FD
 *                                       (the in-fence)                    of commit N
 *                                                                           |
 *                                       out-fence N  <------------------ OUT_FENCE_PTR
 *
 * 1. Compute (compute_submit()). The queue runs a PM4 command stream:
 *    WAIT_REG_MEM until the "presented" word says the buffer's previous
 *    frame has left the screen; DMA_DATA fills that draw the frame; the
 *    rest of the compute time; RELEASE_MEM that writes the KFD signal event
 *    of this buffer and interrupts. Before submitting, we read the event's
 *    age; kfdsync_event_export_sync_file() then gives "the next signal
 *    after that age" as a sync_file: the in-fence. It never signals before
 *    the RELEASE_MEM ran, whenever we export it.
 *
 * 2. Display (display_commit()). A non-blocking atomic commit shows the
 *    buffer, with the in-fence as the plane's IN_FENCE_FD: the kernel
 *    waits for it, and until then the screen keeps the previous frame. The
 *    commit asks for OUT_FENCE_PTR: a sync_file that signals when the
 *    commit is done. Only one commit is in flight per CRTC (a second
 *    non-blocking one would get EBUSY); frames that are ready wait in a
 *    queue of our own.
 *
 * 3. The gate (gate_on_out_fence()). kfdsync_import_to_memory() asks
 *    kfdsync to write N+1 into "presented" when commit N's out-fence
 *    signals. Commit N done means frame N-1 is off the screen, so the
 *    compute of frame N+1, which draws into frame N-1's buffer, may run:
 *    its WAIT_REG_MEM waits for presented >= N+1. The GPU waits for the
 *    display without the CPU in between.
 *
 * Implicit sync (--mode implicit): instead of IN_FENCE_FD, the in-fence
 * is attached to the buffer's dma-buf as a write fence
 * (kfdsync_dmabuf_import_sync_file()); drivers whose prepare_fb honours
 * buffer fences wait for it. It needs a driver that can share its scanout
 * buffers (PRIME): cirrus can, bochs cannot.
 *
 * Userspace timeout. The kernel waits for an in-fence without a timeout
 * (and kfdsync's watchdog ends the fence only much later), so the program
 * bounds every wait itself: if a commit is not done within --timeout-ms,
 * it says which frame's compute never finished and exits cleanly.
 * Exiting frees the kfdsync context, which ends the pending fence with
 * -ECANCELED, so the display does not stay blocked.
 *
 * The compute back-end (examples/common/compute.h, the examples' one
 * compute stage) is the test rig's simulated GPU or, not
 * tested on hardware, a KFD compute queue on an AMD GPU.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kfdsync.h>

#include "common.h"
#include "compute.h"
#include "display.h"

/* Double buffering: frame N draws into the buffer frame N-2 was shown from. */
#define NUM_BUFFERS		2
#define MS			1000000LL

/* Exit statuses (see usage()). */
#define EXIT_RUNTIME		1
#define EXIT_SETUP		2
#define EXIT_TIMEOUT		3
#define EXIT_INTERRUPTED	130

enum sync_mode {
	SYNC_EXPLICIT,		/* IN_FENCE_FD on the plane */
	SYNC_IMPLICIT,		/* a write fence on the buffer's dma-buf */
};

struct options {
	const char *device;
	unsigned int frames;
	uint32_t width, height;
	unsigned int compute_ms;
	bool late;
	unsigned int hold_ms;
	enum sync_mode mode;
	enum gpu_kind gpu;
	unsigned int timeout_ms;
	const char *screendump;
	long hang_at;		/* frame whose compute never finishes, or -1 */
	bool verbose;
};

/*
 * Ordinary memory that the GPU and kfdsync write and the CPU reads; one
 * page, mapped to the GPU once.
 */
struct shared {
	/* The gate: kfdsync writes N + 1 here when commit N's out-fence signals. */
	uint64_t presented;
	/* What each buffer's last compute recorded, for the trace. */
	struct stage_stamp stamp[NUM_BUFFERS];
};

/* One of the NUM_BUFFERS buffers, with the KFD event its compute signals. */
struct slot {
	struct buffer buf;
	uint64_t buf_va;	/* the buffer as the queue addresses it */
	struct stage_event ev;	/* signalled by the RELEASE_MEM of this buffer's frames */
};

/* A frame between compute submission and the end of its commit. */
struct frame {
	unsigned int index;
	struct slot *slot;
	int in_fence;		/* compute done: kfdsync sync_file, ours */
	int out_fence;		/* commit done: KMS sync_file, ours; -1 before commit */
	uint64_t draw_end;	/* queue position once the frame is drawn */
	int64_t submit_ns;	/* CLOCK_MONOTONIC at compute submission */
};

struct app {
	struct options opt;
	struct display display;
	struct gpu *gpu;
	struct kfdsync_ctx *ctx;
	bool kfd_open;
	struct shared *shared;
	uint64_t shared_va;
	struct slot slots[NUM_BUFFERS];

	/* Frames ready for the display, oldest first; and the one on it. */
	struct frame ready[NUM_BUFFERS];
	unsigned int num_ready;
	struct frame in_flight;
	bool committing;

	unsigned int computes_submitted;	/* frames handed to the queue */
	unsigned int commits_submitted;		/* frames handed to KMS */
	unsigned int frames_shown;		/* commits done */
	int64_t t0;				/* start of the run, for the trace */
	int64_t prev_shown_ns;			/* when commit N-1 was done */
};

static volatile sig_atomic_t interrupted;

static double rel_ms(const struct app *app, int64_t t)
{
	return (double)(t - app->t0) / 1e6;
}

/* ---- drawing: what the compute stage renders ---- */

/* Background of frame N: colours that survive 16-bit scanout exactly. */
static const struct {
	uint32_t xrgb;
	const char *name;
} palette[] = {
	{ 0x000000ff, "blue" },
	{ 0x0000ff00, "green" },
	{ 0x00ff0000, "red" },
	{ 0x00ffff00, "yellow" },
	{ 0x00ff00ff, "magenta" },
	{ 0x0000ffff, "cyan" },
};

#define PALETTE_SIZE	(sizeof(palette) / sizeof(palette[0]))

/* A 3x5 font for the frame number: bit 2 is the left column. */
static const uint8_t digit_rows[10][5] = {
	{ 7, 5, 5, 5, 7 }, { 2, 6, 2, 2, 7 }, { 7, 1, 7, 4, 7 }, { 7, 1, 7, 1, 7 },
	{ 5, 5, 7, 1, 1 }, { 7, 4, 7, 1, 7 }, { 7, 4, 7, 5, 7 }, { 7, 1, 1, 1, 1 },
	{ 7, 5, 7, 5, 7 }, { 7, 5, 7, 1, 7 },
};

#define CELL		20	/* pixels per font cell */
#define TEXT_X		40
#define TEXT_Y		40

/* A filled rectangle: one DMA_DATA fill per row (one for full-width rows). */
static void draw_rect(struct pm4_buf *b, const struct slot *s, uint32_t x, uint32_t y,
		      uint32_t w, uint32_t h, uint32_t color)
{
	const struct buffer *buf = &s->buf;

	if (x >= buf->width || y >= buf->height)
		return;
	if (w > buf->width - x)
		w = buf->width - x;
	if (h > buf->height - y)
		h = buf->height - y;
	if (x == 0 && w == buf->width && buf->pitch == w * 4) {
		pm4_dma_fill(b, s->buf_va + (uint64_t)y * buf->pitch, color, (uint64_t)h * buf->pitch);
		return;
	}
	for (uint32_t row = y; row < y + h; row++)
		pm4_dma_fill(b, s->buf_va + (uint64_t)row * buf->pitch + x * 4, color, w * 4);
}

/* Frame @n: the palette colour for n, and n in white, top left. */
static void draw_frame(struct pm4_buf *b, const struct slot *s, unsigned int n)
{
	char text[16];
	int len = snprintf(text, sizeof(text), "%u", n);

	draw_rect(b, s, 0, 0, s->buf.width, s->buf.height, palette[n % PALETTE_SIZE].xrgb);
	for (int i = 0; i < len; i++) {
		const uint8_t *rows = digit_rows[text[i] - '0'];

		for (uint32_t r = 0; r < 5; r++) {
			/* Runs of lit cells in this row of the glyph. */
			for (uint32_t c = 0; c < 3; c++) {
				uint32_t run = 0;

				while (c + run < 3 && (rows[r] & (4u >> (c + run))))
					run++;
				if (run)
					draw_rect(b, s, TEXT_X + (uint32_t)i * 4 * CELL + c * CELL,
						  TEXT_Y + r * CELL, run * CELL, CELL, 0x00ffffff);
				c += run;
			}
		}
	}
}

/* ---- the gate: display -> compute ---- */

/*
 * Open the gate of frame @n + 1 when commit @n is done: kfdsync writes
 * @n + 1 into shared->presented when @out_fence signals (GATE_ERROR if it
 * ends with an error, which opens every gate; the CPU notices the error on
 * the same fence). @out_fence stays ours.
 */
static int gate_on_out_fence(struct app *app, int out_fence, unsigned int n)
{
	int ret = kfdsync_import_to_memory(app->ctx, out_fence, &app->shared->presented,
					   (uint64_t)n + 1, GATE_ERROR);

	if (ret)
		err("frame %u: cannot import the display's out-fence into kfdsync: %s",
		    n, strerror(-ret));
	return ret;
}

/* ---- compute: draw a frame, signal its event, export the in-fence ---- */

/* What stage_submit() draws: frame @n into slot @s. */
struct frame_draw {
	const struct slot *s;
	unsigned int n;
};

static void draw_job(struct pm4_buf *b, void *arg)
{
	const struct frame_draw *d = arg;

	draw_frame(b, d->s, d->n);
}

/* The examples' compute stage (examples/common/compute.h) runs the frame. */
static int compute_submit(struct app *app, unsigned int n, struct frame *f)
{
	struct slot *s = &app->slots[n % NUM_BUFFERS];
	struct frame_draw d = { .s = s, .n = n };
	struct stage_job job = {
		.n = n,
		/*
		 * 1. Wait until commit n - 1 is done: then frame n - 2, whose
		 * buffer this frame reuses, is off the screen. (Frame 1's
		 * buffer is still unused, but one rule for every frame keeps
		 * the pipeline simple; frame 0's gate is open.)
		 */
		.gate_va = app->shared_va + offsetof(struct shared, presented),
		.gate_min = n,
		.stamp_va = app->shared_va + offsetof(struct shared, stamp) +
			    n % NUM_BUFFERS * sizeof(app->shared->stamp[0]),
		/*
		 * 2. Draw: the pixels first, the simulated compute time after,
		 * so that the buffer holds the whole new frame while its fence
		 * is still pending (a display that did not wait would show it).
		 */
		.draw = draw_job,
		.arg = &d,
		.busy_ms = app->opt.late && n > 0 ? app->opt.hold_ms : app->opt.compute_ms,
		.hang = app->opt.hang_at == (long)n,	/* test hook: never signals */
		/*
		 * 3. Signal the frame's event; its next signal is the in-fence.
		 * kfdsync's watchdog is twice our own timeout, so this program
		 * always notices a stuck compute first.
		 */
		.watchdog_ns = 2 * (int64_t)app->opt.timeout_ms * MS,
	};

	f->in_fence = stage_submit(app->gpu, app->ctx, &s->ev, &job);
	if (f->in_fence < 0)
		return f->in_fence;
	f->index = n;
	f->slot = s;
	f->out_fence = -1;
	f->draw_end = job.draw_end;
	f->submit_ns = job.submit_ns;
	app->computes_submitted++;
	return 0;
}

/* ---- screendumps (for tests and the demo) ---- */

static void screendump(const struct app *app, const char *fmt, unsigned int n)
{
	char name[64];
	char *argv[3];
	pid_t pid;
	int ret, status;

	if (!app->opt.screendump)
		return;
	snprintf(name, sizeof(name), fmt, n);
	argv[0] = (char *)app->opt.screendump;
	argv[1] = name;
	argv[2] = NULL;
	fflush(stdout);
	ret = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (ret) {
		err("cannot run the screendump command %s: %s", argv[0], strerror(ret));
		return;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		err("screendump %s failed", name);
}

/*
 * Right after committing a frame whose compute is still running, capture
 * the screen: it must still show the previous frame. Where the back-end can
 * tell, wait first until the new frame is completely drawn into its buffer,
 * and check the fence is pending both before and after the capture.
 */
static void screendump_pending(struct app *app, const struct frame *f)
{
	int before, after, ret;

	/* Only late frames stay pending long enough for a conclusive capture. */
	if (!app->opt.screendump || !app->opt.late || !f->index)
		return;
	if (fence_state(f->in_fence, NULL) != 0) {
		printf("frame %u pending: not captured, its compute finished before it was "
		       "committed (try a longer --hold-ms)\n", f->index);
		return;
	}
	ret = gpu_wait_pos(app->gpu, f->draw_end, (int)app->opt.timeout_ms);
	if (ret && ret != -EOPNOTSUPP) {
		err("frame %u: waiting for it to be drawn: %s", f->index, strerror(-ret));
		return;
	}
	before = fence_state(f->in_fence, NULL);
	screendump(app, "frame%u-pending", f->index);
	after = fence_state(f->in_fence, NULL);
	if (before == 0 && after == 0)
		printf("frame %u pending: screen captured while its compute fence was pending%s\n",
		       f->index, ret ? "" : " (the frame fully drawn in its buffer)");
	else
		printf("frame %u pending: inconclusive, its fence signalled during the "
		       "capture (try a longer --hold-ms)\n", f->index);
}

/* ---- display: commit ready frames, one at a time ---- */

static int commit_frame(struct app *app)
{
	struct frame f = app->ready[0];
	int ret;

	if (app->opt.mode == SYNC_IMPLICIT) {
		/* The fence rides on the buffer: prepare_fb picks it up. */
		ret = kfdsync_dmabuf_import_sync_file(f.slot->buf.dmabuf_fd, f.in_fence,
						      KFDSYNC_DMABUF_WRITE);
		if (ret) {
			err("frame %u: cannot attach its fence to the dma-buf: %s", f.index,
			    strerror(-ret));
			return ret;
		}
	}
	ret = display_commit(&app->display, &f.slot->buf,
			     app->opt.mode == SYNC_EXPLICIT ? f.in_fence : -1, &f.out_fence);
	if (ret)
		return ret;
	/* Out of the ready queue, onto the CRTC. */
	memmove(&app->ready[0], &app->ready[1], --app->num_ready * sizeof(app->ready[0]));
	app->in_flight = f;
	app->committing = true;
	app->commits_submitted++;

	return gate_on_out_fence(app, f.out_fence, f.index);
}

/*
 * Wait for the commit in flight to be done, at most --timeout-ms after it
 * was queued; then report on it.
 */
static int finish_commit(struct app *app)
{
	struct frame *f = &app->in_flight;
	struct pollfd p = { .fd = f->out_fence, .events = POLLIN };
	const int64_t deadline = now_ns() + (int64_t)app->opt.timeout_ms * MS;
	int64_t ready_ns = 0, shown_ns = 0;
	int in, out, ret;

	for (;;) {
		int64_t left = deadline - now_ns();

		ret = poll(&p, 1, left > 0 ? (int)((left + MS - 1) / MS) : 0);
		if (ret > 0)
			break;
		if (ret < 0 && errno != EINTR) {
			err("poll: %s", strerror(errno));
			return -errno;
		}
		if (interrupted)
			return -EINTR;
		if (ret == 0) {
			if (fence_state(f->in_fence, NULL) == 0)
				err("frame %u: its compute did not finish within %u ms (the GPU "
				    "queue seems stuck); the display kept showing frame %u. "
				    "Giving up.", f->index, app->opt.timeout_ms,
				    f->index ? f->index - 1 : 0);
			else
				err("frame %u: the display did not complete its commit within %u ms",
				    f->index, app->opt.timeout_ms);
			return -ETIMEDOUT;
		}
	}

	in = fence_state(f->in_fence, &ready_ns);
	out = fence_state(f->out_fence, &shown_ns);
	if (in < 0) {
		err("frame %u: its compute fence ended with an error (%s); the display "
		    "showed the buffer anyway", f->index, strerror(-in));
		return in;
	}
	if (out < 0) {
		err("frame %u: the display's out-fence ended with an error (%s)",
		    f->index, strerror(-out));
		return out;
	}
	app->frames_shown++;
	/*
	 * The next frame is not committed yet: the screen shows this one. In
	 * late mode, only the last frame gets this capture: the next frame's
	 * compute is already running, and its "pending" capture, taken as
	 * soon as it is committed, shows this frame too.
	 */
	if (!app->opt.late || app->frames_shown == app->opt.frames)
		screendump(app, "frame%u-shown", f->index);

	if (app->opt.verbose) {
		const struct stage_stamp *st = &app->shared->stamp[f->index % NUM_BUFFERS];
		char gate[96] = "no gate (first frame)";

		if (f->index > 0)
			snprintf(gate, sizeof(gate), "gate presented>=%u opened %+.1f ms",
				 f->index, rel_ms(app, app->prev_shown_ns));
		printf("frame %u buffer %u color %s: %s, submitted %+.1f ms, compute started "
		       "%+.1f ms seeing presented=%" PRIu64 ", ready %+.1f ms, shown %+.1f ms\n",
		       f->index, f->index % NUM_BUFFERS, palette[f->index % PALETTE_SIZE].name,
		       gate, rel_ms(app, f->submit_ns), rel_ms(app, (int64_t)st->start_ns),
		       st->gate_seen, rel_ms(app, ready_ns), rel_ms(app, shown_ns));
		if (st->frame != f->index)
			err("frame %u: its buffer's stamp says frame %" PRIu64, f->index, st->frame);
	}
	app->prev_shown_ns = shown_ns;
	close(f->in_fence);
	close(f->out_fence);
	f->in_fence = f->out_fence = -1;
	app->committing = false;
	return 0;
}

/*
 * The frame loop: keep the queue fed, one commit in flight, and never wait
 * anywhere without a bound.
 */
static int run(struct app *app)
{
	const unsigned int frames = app->opt.frames;
	int ret = 0;

	while (app->frames_shown < frames && !ret) {
		if (interrupted)
			return -EINTR;
		/*
		 * Submit frame N's compute once commit N-1 is queued: the import
		 * that opens its gate exists then, and the queue waits on it.
		 */
		if (app->computes_submitted < frames &&
		    app->computes_submitted <= app->commits_submitted &&
		    app->num_ready < NUM_BUFFERS) {
			ret = compute_submit(app, app->computes_submitted,
					     &app->ready[app->num_ready]);
			if (!ret)
				app->num_ready++;
			continue;
		}
		if (!app->committing && app->num_ready) {
			ret = commit_frame(app);
			if (ret)
				break;
			/* Feed the queue before spending time on captures. */
			if (app->computes_submitted < frames &&
			    app->computes_submitted <= app->commits_submitted &&
			    app->num_ready < NUM_BUFFERS) {
				ret = compute_submit(app, app->computes_submitted,
						     &app->ready[app->num_ready]);
				if (ret)
					break;
				app->num_ready++;
			}
			screendump_pending(app, &app->in_flight);
			continue;
		}
		if (app->committing)
			ret = finish_commit(app);
	}
	return ret;
}

/* ---- setup and teardown ---- */

static int setup(struct app *app)
{
	int ret;

	/* Compute first: without a GPU there is nothing to show. */
	ret = kfd_open(app->opt.gpu);
	if (ret)
		return ret;
	app->kfd_open = true;
	ret = gpu_open(&app->gpu, app->opt.gpu);
	if (ret)
		return ret;
	ret = kfdsync_ctx_new(&app->ctx);
	if (ret) {
		err("cannot open a kfdsync context: %s%s", strerror(-ret),
		    ret == -ENOENT ? " (kfdsync.ko is not loaded)" : "");
		return ret;
	}
	printf("compute: %s\n", gpu_name(app->gpu));

	ret = display_open(&app->display, app->opt.device, app->opt.width, app->opt.height);
	if (ret)
		return ret;
	printf("display: %s (driver %s), %s, %ux%u, %s sync\n", app->display.path,
	       app->display.driver, app->display.connector_name, app->display.mode.hdisplay,
	       app->display.mode.vdisplay,
	       app->opt.mode == SYNC_EXPLICIT ? "explicit (IN_FENCE_FD)" :
						"implicit (dma-buf fence)");

	for (int i = 0; i < NUM_BUFFERS; i++) {
		ret = buffer_create(&app->display, &app->slots[i].buf,
				    app->opt.mode == SYNC_IMPLICIT || app->opt.gpu == GPU_REAL);
		if (ret == -EOPNOTSUPP) {
			err("%s (driver %s) cannot share its scanout buffers as dma-bufs: "
			    "%s needs that. Use --mode explicit, or a driver that shares "
			    "buffers (QEMU: -vga cirrus).", app->display.path, app->display.driver,
			    app->opt.mode == SYNC_IMPLICIT ? "implicit sync" : "--gpu real");
			return ret;
		}
		if (ret)
			return ret;
	}

	app->shared = aligned_alloc(4096, 4096);
	if (!app->shared)
		return -ENOMEM;
	memset(app->shared, 0, 4096);
	ret = gpu_map_memory(app->gpu, app->shared, 4096, &app->shared_va);
	if (ret)
		return ret;

	for (int i = 0; i < NUM_BUFFERS; i++) {
		struct slot *s = &app->slots[i];

		ret = gpu_map_buffer(app->gpu, s->buf.map, s->buf.dmabuf_fd, &s->buf_va);
		if (ret)
			return ret;
		ret = stage_event_new(app->ctx, &s->ev);
		if (ret)
			return ret;
	}
	return 0;
}

static void teardown(struct app *app)
{
	struct frame *f = &app->in_flight;

	/*
	 * Stop the queue first (a hung or waiting compute ends here), then
	 * free the kfdsync context: that ends every fence still pending with
	 * -ECANCELED, so a commit still waiting for one completes, and drops
	 * the out-fence imports.
	 */
	gpu_close(app->gpu);
	kfdsync_ctx_free(app->ctx);
	free(app->shared);
	if (app->committing) {
		/* Bounded: the fence it waited for has just ended. */
		if (kfdsync_sync_file_wait(f->out_fence, 10000 * MS))
			err("the last commit did not complete");
		close(f->in_fence);
		close(f->out_fence);
	}
	for (unsigned int i = 0; i < app->num_ready; i++)
		close(app->ready[i].in_fence);
	for (int i = 0; i < NUM_BUFFERS; i++) {
		/* Unregistered by kfdsync_ctx_free() above: destroyed after it. */
		kfd_signal_event_destroy(&app->slots[i].ev.event);
		if (app->display.fd >= 0)
			buffer_destroy(&app->display, &app->slots[i].buf);
	}
	if (app->kfd_open)
		kfd_close();
	display_close(&app->display);
}

/* ---- options ---- */

static void usage(FILE *out)
{
	fprintf(out,
"NAME\n"
"    kfdsync-kms - show compute output on a KMS display, fenced both ways\n"
"\n"
"SYNOPSIS\n"
"    kfdsync-kms [OPTION]...\n"
"\n"
"DESCRIPTION\n"
"    Each frame, a compute queue draws into a dumb buffer and signals a KFD\n"
"    event with RELEASE_MEM. kfdsync exports the event as a sync_file, which\n"
"    a non-blocking atomic commit takes as the plane's IN_FENCE_FD: the\n"
"    display keeps the previous frame until the compute is done. Each\n"
"    commit's OUT_FENCE_PTR fence is imported back into kfdsync: when\n"
"    commit N+1 is done, frame N has left the screen, and kfdsync writes\n"
"    N+2 into a word in memory. The compute of frame N+2, which draws into\n"
"    frame N's buffer, starts with a WAIT_REG_MEM on that word. One commit\n"
"    is in flight at a time; every wait is bounded by --timeout-ms.\n"
"\n"
"    Needs kfdsync.ko, /dev/kfd (amdgpu) and DRM master on a KMS device.\n"
"\n"
"OPTIONS\n"
"    -d, --device=PATH|DRIVER\n"
"        The KMS device: a path (/dev/dri/card0) or a driver name\n"
"        (bochs-drm, cirrus). Default: the first card with a display.\n"
"    -n, --frames=N\n"
"        Frames to show (default 10).\n"
"    -s, --size=WxH\n"
"        Mode to set; the connector must offer it. Default: its preferred\n"
"        mode.\n"
"    -c, --compute-ms=MS\n"
"        Simulated compute time of a frame after it is drawn (default 16).\n"
"    -l, --late\n"
"        Late GPU: from frame 1 on, each frame's compute takes --hold-ms;\n"
"        the display holds the previous frame meanwhile.\n"
"    -H, --hold-ms=MS\n"
"        Compute time of a late frame (default 2000).\n"
"    -m, --mode=explicit|implicit\n"
"        explicit (default): the fence is the plane's IN_FENCE_FD.\n"
"        implicit: the fence is attached to the buffer's dma-buf (the\n"
"        driver must share scanout buffers: cirrus can, bochs cannot).\n"
"    -g, --gpu=sim|real\n"
"        sim: the test rig's simulated GPU (/dev/kfdsim). real: a KFD\n"
"        compute queue on an AMD GPU; NOT TESTED ON HARDWARE. Default: sim\n"
"        if /dev/kfdsim exists, else real.\n"
"    -t, --timeout-ms=MS\n"
"        Give up when a commit is not done this long after it was queued\n"
"        (default 10000).\n"
"    -S, --screendump=CMD\n"
"        Run \"CMD NAME\" to capture the screen at key moments:\n"
"        frameN-pending (with --late: frame N committed and drawn, its\n"
"        compute fence still pending, so the screen shows frame N-1) and\n"
"        frameN-shown (its commit done; with --late only the last frame).\n"
"        In the test guest (it prints the PNG's path):\n"
"        --screendump=tests/vm/screendump.\n"
"    --hang-at=N\n"
"        Testing: frame N's compute never finishes (sim only).\n"
"    -v, --verbose\n"
"        Print a line per frame: the gate the compute waited for and the\n"
"        value it saw, and when it was submitted, when its gate opened,\n"
"        when it started, when its fence signalled and when it was shown\n"
"        (milliseconds since start; CLOCK_MONOTONIC).\n"
"    -h, --help\n"
"        Show this text.\n"
"\n"
"EXIT STATUS\n"
"    0 all frames shown; 1 a runtime error (a fence ended with an error, a\n"
"    commit failed); 2 bad usage or missing device/feature (no KMS device,\n"
"    no shared buffers for --mode implicit, no GPU for --gpu real,\n"
"    kfdsync.ko not loaded); 3 a frame's compute did not finish within\n"
"    --timeout-ms;\n"
"    130 interrupted.\n"
"\n"
"EXAMPLES\n"
"    kfdsync-kms --frames 60\n"
"    kfdsync-kms --late --frames 3 --screendump tests/vm/screendump\n"
"    kfdsync-kms --device cirrus --mode implicit\n");
}

static bool parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return false;
	*out = (unsigned int)v;
	return true;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_HANG_AT = 256 };
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "frames", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "compute-ms", required_argument, NULL, 'c' },
		{ "late", no_argument, NULL, 'l' },
		{ "hold-ms", required_argument, NULL, 'H' },
		{ "mode", required_argument, NULL, 'm' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "screendump", required_argument, NULL, 'S' },
		{ "hang-at", required_argument, NULL, OPT_HANG_AT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat sb;
	unsigned int v;
	bool gpu_given = false;
	int c;

	*o = (struct options){
		.frames = 10, .compute_ms = 16, .hold_ms = 2000, .mode = SYNC_EXPLICIT,
		.timeout_ms = 10000, .hang_at = -1,
	};
	while ((c = getopt_long(argc, argv, "d:n:s:c:lH:m:g:t:S:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'n':
			if (!parse_uint(optarg, 1000000, &o->frames) || !o->frames)
				goto bad;
			break;
		case 's':
			if (sscanf(optarg, "%ux%u%n", &o->width, &o->height, &c) != 2 ||
			    optarg[c] || !o->width || !o->height || o->width > 16384 ||
			    o->height > 16384)
				goto bad;
			break;
		case 'c':
			if (!parse_uint(optarg, 60000, &o->compute_ms))
				goto bad;
			break;
		case 'l':
			o->late = true;
			break;
		case 'H':
			if (!parse_uint(optarg, 60000, &o->hold_ms))
				goto bad;
			break;
		case 'm':
			if (!strcmp(optarg, "explicit"))
				o->mode = SYNC_EXPLICIT;
			else if (!strcmp(optarg, "implicit"))
				o->mode = SYNC_IMPLICIT;
			else
				goto bad;
			break;
		case 'g':
			gpu_given = true;
			if (!strcmp(optarg, "sim"))
				o->gpu = GPU_SIM;
			else if (!strcmp(optarg, "real"))
				o->gpu = GPU_REAL;
			else
				goto bad;
			break;
		case 't':
			if (!parse_uint(optarg, 3600000, &o->timeout_ms) || !o->timeout_ms)
				goto bad;
			break;
		case 'S':
			o->screendump = optarg;
			break;
		case OPT_HANG_AT:
			if (!parse_uint(optarg, 1000000, &v))
				goto bad;
			o->hang_at = v;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try '%s --help'.\n", program_invocation_short_name);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		err("unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (!gpu_given)
		o->gpu = stat("/dev/kfdsim", &sb) ? GPU_REAL : GPU_SIM;
	/* The simulator's delay packet runs a frame at most 60 s. */
	if ((o->late ? o->hold_ms : o->compute_ms) >= o->timeout_ms) {
		err("the compute time (%u ms) must be shorter than --timeout-ms (%u ms)",
		    o->late ? o->hold_ms : o->compute_ms, o->timeout_ms);
		return -EINVAL;
	}
	if (o->hang_at >= 0 && o->gpu != GPU_SIM) {
		err("--hang-at needs --gpu sim");
		return -EINVAL;
	}
	return 0;
bad:
	err("invalid value '%s' for --%s", optarg,
	    c == 'd' ? "device" : c == 'n' ? "frames" : c == 's' ? "size" :
	    c == 'c' ? "compute-ms" : c == 'H' ? "hold-ms" : c == 'm' ? "mode" :
	    c == 'g' ? "gpu" : c == 't' ? "timeout-ms" : "hang-at");
	return -EINVAL;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct app app = { .display.fd = -1 };
	int ret, status;

	if (parse_options(argc, argv, &app.opt))
		return EXIT_SETUP;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	app.t0 = now_ns();
	ret = setup(&app);
	if (ret) {
		teardown(&app);
		return EXIT_SETUP;
	}
	ret = run(&app);
	teardown(&app);

	if (ret == -EINTR || interrupted) {
		err("interrupted after %u frames", app.frames_shown);
		status = EXIT_INTERRUPTED;
	} else if (ret == -ETIMEDOUT) {
		status = EXIT_TIMEOUT;
	} else if (ret) {
		status = EXIT_RUNTIME;
	} else {
		printf("%u frames shown; every frame waited for its compute fence, every "
		       "compute for the display's out-fence\n", app.frames_shown);
		status = 0;
	}
	return status;
}
