// SPDX-License-Identifier: MIT
/*
 * kfdsync-wayland-client: present compute output on a Wayland compositor,
 * gated by the producer's fence.
 *
 * Each frame a producer owns a sync_file that signals when the frame's
 * pixels are final: a kfdsync CPU timeline advanced by a thread after
 * --compute-ms (--gpu timeline, the default), or a compute queue of the
 * test rig's simulated GPU whose RELEASE_MEM signals a KFD event that
 * kfdsync exports (--gpu sim). The client hands that fence to the
 * compositor in the best way the compositor understands:
 *
 *   syncobj   wp_linux_drm_syncobj_v1: dumb buffers of the compositor's DRM
 *             device, a timeline drm_syncobj per buffer; the fence becomes
 *             the acquire point, and the compositor signals the release
 *             point when it is done with the buffer. With --gpu sim that
 *             release point becomes a sync_file that kfdsync turns into a
 *             memory write the buffer's next compute waits for
 *             (WAIT_REG_MEM): the GPU waits for the compositor, no CPU wait;
 *   explicit  zwp_linux_explicit_synchronization_v1 with a dmabuf buffer:
 *             set_acquire_fence, and get_release for the buffer's release;
 *   implicit  the fence is attached to the dmabuf (DMA_BUF_IOCTL_IMPORT_
 *             SYNC_FILE): compositors that honour implicit sync wait;
 *   shm       the client waits for the fence itself before committing.
 *
 * It prints the path taken, then one line per frame comparing the time the
 * fence signalled with the time the compositor says it presented the frame
 * (wp_presentation), and a summary. See --help and README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>
#include <xf86drm.h>

#include <wayland-client.h>

#include "linux-dmabuf-unstable-v1-client-protocol.h"
#include "linux-explicit-synchronization-unstable-v1-client-protocol.h"
#include "presentation-time-client-protocol.h"
#include "xdg-shell-client-protocol.h"
#ifdef HAVE_SYNCOBJ_PROTOCOL
#include "linux-drm-syncobj-v1-client-protocol.h"
#endif

#include <kfdsync.h>

#include "common.h"
#include "compute.h"

#define PROG "kfdsync-wayland-client"
#define NBUF 2
#define MS 1000000LL

extern char **environ;

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* runtime failure: fence, protocol, timeout */
	EXIT_USAGE = 2,		/* bad options or the forced path is unavailable */
	EXIT_EARLY = 3,		/* a frame was presented before its fence */
};

enum sync_path { PATH_AUTO, PATH_SYNCOBJ, PATH_EXPLICIT, PATH_IMPLICIT, PATH_SHM };

#define NUM_PATHS 5
static const char *const path_names[NUM_PATHS] = {
	[PATH_AUTO] = "auto", [PATH_SYNCOBJ] = "syncobj", [PATH_EXPLICIT] = "explicit",
	[PATH_IMPLICIT] = "implicit", [PATH_SHM] = "shm",
};

/* Who computes the frames. */
enum producer { PRODUCER_TIMELINE, PRODUCER_SIM };

struct client;
struct buf;

static void buffer_free(struct buf *b);

struct buf {
	struct client *c;
	struct wl_buffer *wl;
	void *map;
	size_t size;
	uint32_t stride;
	int dmabuf_fd;		/* -1 for shm */
	int release_fence;	/* explicit: fenced_release; syncobj: the release
				   point as a sync_file (--gpu sim); or -1 */
	bool busy;
	int index;		/* in c->bufs */

	/* syncobj path */
	uint32_t gem;		/* dumb buffer on c->dev_fd, 0 if none */
	uint32_t syncobj;	/* its timeline drm_syncobj, 0 if none */
	struct wp_linux_drm_syncobj_timeline_v1 *timeline;
	uint64_t point;		/* last point used (acquire 2k+1, release 2k+2) */
	uint64_t release_point;	/* the point the compositor signals, 0: none */
	int release_efd;	/* eventfd on release_point, or -1 */

	/* --gpu sim */
	struct stage_event ev;	/* the RELEASE_MEM of this buffer's frames signals it */
	int last_frame;		/* the frame that used the buffer last, or -1 */
};

struct frame {
	int fence;		/* the frame's acquire sync_file */
	uint64_t commit_ns;	/* CLOCK_MONOTONIC */
	uint64_t signal_ns;	/* the fence's own timestamp */
	uint64_t presented_ns;	/* converted to CLOCK_MONOTONIC */
	bool presented, discarded, pending_at_present;
	/* --gpu sim: submission, and what opened the gate of the frame */
	uint64_t submit_ns;
	uint64_t draw_end;	/* queue position once the frame is drawn */
	int gate_release;	/* the release sync_file that opened the gate, or -1 */
	int gate_from;		/* the frame whose release that was, or -1 */
	bool gate_pending;	/* that release was still pending when imported */
};

/*
 * --gpu sim: memory the queue and kfdsync write and the CPU reads: the
 * gates (kfdsync writes the frame number that may use a buffer once the
 * compositor released it) and what each buffer's last compute saw.
 */
struct shared {
	uint64_t gate[NBUF];
	struct stage_stamp stamp[NBUF];	/* frame computed, gate seen, start */
};

struct client {
	/* options */
	int frames, width, height, compute_ms, timeout_ms, stall_frame, linger_ms;
	int hold_frame, hold_ms, error_frame, error_ms;
	const char *capture, *device;
	enum sync_path want;
	enum sync_path try_acquire;	/* PATH_AUTO: not trying */
	enum producer gpu;
	bool verbose, fullscreen;

	struct wl_display *dpy;
	struct wl_registry *reg;
	struct wl_compositor *comp;
	struct wl_shm *shm;
	struct xdg_wm_base *wm;
	struct zwp_linux_dmabuf_v1 *dmabuf;
	struct zwp_linux_explicit_synchronization_v1 *esync;
	struct wp_presentation *pres;
	clockid_t pres_clock;
	bool have_pres_clock, linear_ok;
	uint32_t dmabuf_version;
	/* zwp_linux_dmabuf_v1 v4 default feedback: the compositor's device */
	struct zwp_linux_dmabuf_feedback_v1 *feedback;
	bool feedback_done, have_main_dev;
	dev_t main_dev;
	void *format_table;
	size_t format_table_size;
#ifdef HAVE_SYNCOBJ_PROTOCOL
	struct wp_linux_drm_syncobj_manager_v1 *syncobj_mgr;
	struct wp_linux_drm_syncobj_surface_v1 *sync_surf;
#endif
	bool have_syncobj_mgr;
	int dev_fd;		/* the compositor's DRM device, for dumb buffers */
	char dev_name[64];	/* its driver and node, for messages */
	char alloc_name[96];
	bool release_eventfd;	/* DRM_IOCTL_SYNCOBJ_EVENTFD works (6.6+) */

	struct wl_surface *surf;
	struct xdg_surface *xsurf;
	struct xdg_toplevel *top;
	struct zwp_linux_surface_synchronization_v1 *ssync;
	bool configured, closed, recommit;

	enum sync_path path;
	const char *allocator;	/* "vgem", "udmabuf", "shm", "dumb" (syncobj) or
				   alloc_name (the compositor's device) */
	int drm_fd;
	struct buf bufs[NBUF];
	struct frame *fr;

	/* producer: a thread advances the timeline once per submitted frame */
	struct kfdsync_timeline *tl;
	pthread_t thread;
	bool thread_started;
	int submit_pipe[2];

	/* --gpu sim: a simulated compute queue, its KFD events and gates */
	struct kfdsync_ctx *ctx;
	bool kfd_open;
	struct gpu *queue;	/* the simulated queue (examples/common/compute.h) */
	struct shared *shared;

	/* dmabuf params result */
	int params_state;	/* 0 waiting, 1 created, -1 failed */
	struct wl_buffer *params_buffer;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double ms_between(uint64_t from, uint64_t to)
{
	return ((double)(int64_t)(to - from)) / 1e6;
}

/* ------------------------------------------------------------------ */
/* Producer: stands in for compute. Frame v's fence is timeline point v. */

static void *producer_main(void *arg)
{
	struct client *c = arg;
	unsigned char frame;
	uint32_t v = 0;

	while (read(c->submit_pipe[0], &frame, 1) == 1) {
		struct timespec d = {
			.tv_sec = c->compute_ms / 1000,
			.tv_nsec = (long)(c->compute_ms % 1000) * 1000000L,
		};

		v++;
		if ((int)v - 1 == c->stall_frame) {
			/* A compute job that never completes: hold the line. */
			while (read(c->submit_pipe[0], &frame, 1) == 1)
				;
			break;
		}
		if ((int)v - 1 == c->hold_frame) {
			d.tv_sec = c->hold_ms / 1000;
			d.tv_nsec = (long)(c->hold_ms % 1000) * 1000000L;
		}
		while (nanosleep(&d, &d) && errno == EINTR)
			;
		kfdsync_timeline_inc(c->tl, 1);
	}
	return NULL;
}

static int producer_start(struct client *c)
{
	int ret = kfdsync_timeline_new(&c->tl);

	if (ret < 0) {
		fprintf(stderr, PROG ": cannot create a kfdsync timeline: %s%s\n",
			strerror(-ret), ret == -ENOENT ?
			" (is kfdsync.ko loaded? /dev/kfdsync_timeline is missing)" : "");
		return ret;
	}
	if (pipe2(c->submit_pipe, O_CLOEXEC))
		return -errno;
	ret = pthread_create(&c->thread, NULL, producer_main, c);
	if (ret)
		return -ret;
	c->thread_started = true;
	return 0;
}

static void producer_submit(struct client *c)
{
	unsigned char b = 1;

	if (write(c->submit_pipe[1], &b, 1) != 1)
		perror(PROG ": producer");
}

static void producer_stop(struct client *c)
{
	if (c->thread_started) {
		close(c->submit_pipe[1]);
		c->submit_pipe[1] = -1;
		pthread_join(c->thread, NULL);
		c->thread_started = false;
	}
	if (c->submit_pipe[0] >= 0)
		close(c->submit_pipe[0]);
	if (c->submit_pipe[1] >= 0)
		close(c->submit_pipe[1]);
	c->submit_pipe[0] = c->submit_pipe[1] = -1;
	/* Frees the timeline: a stalled fence ends with -ENOENT. */
	kfdsync_timeline_free(c->tl);
	c->tl = NULL;
}

/* ------------------------------------------------------------------ */
/*
 * --gpu sim: the test rig's simulated GPU computes the frames. Its queue
 * runs a PM4 stream per frame in this process's address space, and its
 * RELEASE_MEM signals a KFD event through amdkfd's real interrupt path;
 * kfdsync exports "the next signal after the age read before submitting"
 * as the frame's fence (see ../kms for the same on a KMS display).
 */

static int sim_start(struct client *c)
{
	int ret;

	ret = kfd_open(GPU_SIM);
	if (ret)
		return ret;
	c->kfd_open = true;
	ret = kfdsync_ctx_new(&c->ctx);
	if (ret) {
		fprintf(stderr, PROG ": --gpu sim: cannot open a kfdsync context: %s%s\n",
			strerror(-ret), ret == -ENOENT ? " (kfdsync.ko is not loaded)" : "");
		return ret;
	}
	ret = gpu_open(&c->queue, GPU_SIM);
	if (ret)
		return ret;
	c->shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->shared == MAP_FAILED) {
		c->shared = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < NBUF; i++) {
		ret = stage_event_new(c->ctx, &c->bufs[i].ev);
		if (ret)
			return ret;
	}
	printf("compute: simulated GPU (kfdsim): a PM4 queue draws each frame, its "
	       "RELEASE_MEM signals a KFD event exported by kfdsync\n");
	return 0;
}

/*
 * Stop the queue (also inside a hang or a WAIT_REG_MEM), then free the
 * context: that ends every fence still pending with -ECANCELED, so a
 * compositor waiting for one is not left waiting.
 */
static void sim_stop(struct client *c)
{
	gpu_close(c->queue);
	c->queue = NULL;
	kfdsync_ctx_free(c->ctx);
	c->ctx = NULL;
	/* Unregistered by kfdsync_ctx_free() above: destroyed after it. */
	for (int i = 0; i < NBUF; i++) {
		kfd_signal_event_destroy(&c->bufs[i].ev.event);
		c->bufs[i].ev = (struct stage_event){ 0 };
	}
	if (c->shared)
		munmap(c->shared, 4096);
	c->shared = NULL;
	if (c->kfd_open)
		kfd_close();
	c->kfd_open = false;
}

static const uint32_t colours[] = {
	0x00d03030, 0x0030a040, 0x002050d0, 0x00d0a020, 0x00a030c0, 0x0020b0b0,
};

/*
 * The picture of frame n, on the CPU (fill()) or the queue (sim_draw()):
 * a colour per frame, a 4-pixel white border, and a black bar in the
 * bottom quarter that moves from left to right over the frames.
 */
static void frame_bar(const struct client *c, int n, int *x, int *w)
{
	*w = c->width / 8 > 0 ? c->width / 8 : 1;
	*x = (int)((int64_t)n * (c->width - *w) / (c->frames > 1 ? c->frames - 1 : 1));
}

static void sim_rect(struct pm4_buf *pb, const struct buf *b, int x, int y, int w, int h,
		     uint32_t colour)
{
	uint64_t va = (uintptr_t)b->map;

	if (w <= 0 || h <= 0)
		return;
	if (x == 0 && (uint32_t)w * 4 == b->stride) {
		pm4_dma_fill(pb, va + (uint64_t)y * b->stride, colour, (uint64_t)h * b->stride);
		return;
	}
	for (int row = y; row < y + h; row++)
		pm4_dma_fill(pb, va + (uint64_t)row * b->stride + (uint64_t)x * 4, colour,
			     (uint64_t)w * 4);
}

static void sim_draw(struct pm4_buf *pb, const struct client *c, const struct buf *b, int n)
{
	int bar_x, bar_w, top = c->height * 3 / 4, x0, x1;

	sim_rect(pb, b, 0, 0, c->width, c->height, colours[n % 6]);
	frame_bar(c, n, &bar_x, &bar_w);
	/* The bar, clipped to the inside of the border. */
	x0 = bar_x > 4 ? bar_x : 4;
	x1 = bar_x + bar_w < c->width - 4 ? bar_x + bar_w : c->width - 4;
	sim_rect(pb, b, x0, top, x1 - x0, c->height - 4 - top, 0x00101010);
	sim_rect(pb, b, 0, 0, c->width, 4, 0x00ffffff);
	sim_rect(pb, b, 0, c->height - 4, c->width, 4, 0x00ffffff);
	sim_rect(pb, b, 0, 4, 4, c->height - 8, 0x00ffffff);
	sim_rect(pb, b, c->width - 4, 4, 4, c->height - 8, 0x00ffffff);
}

/* sim_draw() as a job's drawing (stage_submit()). */
struct sim_frame {
	const struct client *c;
	const struct buf *b;
	int n;
};

static void sim_draw_job(struct pm4_buf *pb, void *arg)
{
	const struct sim_frame *f = arg;

	sim_draw(pb, f->c, f->b, f->n);
}

/*
 * Frame @n's compute on buffer @b, on the examples' compute stage
 * (examples/common/compute.h): wait (WAIT_REG_MEM, on the queue) until the
 * gate says the compositor is done with the buffer's previous frame, record
 * what the gate held and when, draw, take the simulated compute time,
 * signal the buffer's KFD event, whose next signal is the frame's fence.
 * The pixels go in before the compute time, so the buffer holds the whole
 * new frame while its fence is pending: a compositor that did not wait
 * would show it.
 */
static int sim_submit(struct client *c, struct buf *b, struct frame *fr, int n)
{
	struct sim_frame f = { .c = c, .b = b, .n = n };
	struct stage_job job = {
		.n = (unsigned int)n,
		.gate_va = n >= NBUF ? (uintptr_t)&c->shared->gate[b->index] : 0,
		.gate_min = (uint64_t)n,
		.stamp_va = (uintptr_t)&c->shared->stamp[b->index],
		.draw = sim_draw_job,
		.arg = &f,
		.busy_ms = (unsigned int)(n == c->hold_frame || n == c->error_frame ?
					  c->hold_ms : c->compute_ms),
		.hang = n == c->stall_frame,	/* a compute that never finishes */
		.watchdog_ns = n == c->error_frame ? c->error_ms * MS :
						     2 * (int64_t)c->timeout_ms * MS,
	};

	fr->fence = stage_submit(c->queue, c->ctx, &b->ev, &job);
	fr->submit_ns = (uint64_t)job.submit_ns;
	fr->draw_end = job.draw_end;
	return fr->fence < 0 ? fr->fence : 0;
}

/*
 * --gpu sim: frame @n may use @b once the compositor is done with it. With
 * a release fence (explicit fenced_release; the syncobj release point,
 * exported as a sync_file), kfdsync writes @n into the buffer's gate when
 * it signals (GATE_ERROR if it ends with an error): the queue waits for
 * the compositor, the CPU does not. Without one (wl_buffer.release, an
 * immediate release) the buffer is free now and the client opens the gate.
 */
static int sim_open_gate(struct client *c, struct buf *b, struct frame *fr, int n)
{
	int ret;

	fr->gate_release = -1;
	fr->gate_from = b->last_frame;
	if (n < NBUF)
		return 0;
	if (b->release_fence < 0) {
		__atomic_store_n(&c->shared->gate[b->index], (uint64_t)n, __ATOMIC_RELEASE);
		return 0;
	}
	ret = kfdsync_import_to_memory(c->ctx, b->release_fence, &c->shared->gate[b->index],
				       (uint64_t)n, GATE_ERROR);
	if (ret) {
		fprintf(stderr, PROG ": frame %d: cannot import the compositor's release fence "
			"into kfdsync: %s\n", n, strerror(-ret));
		return ret;
	}
	/* Kept until the frame is reported: its timestamp is in the trace. */
	fr->gate_pending = fence_state(b->release_fence, NULL) == 0;
	fr->gate_release = b->release_fence;
	b->release_fence = -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Wayland plumbing */

static void wm_ping(void *data, struct xdg_wm_base *wm, uint32_t serial)
{
	(void)data;
	xdg_wm_base_pong(wm, serial);
}

static const struct xdg_wm_base_listener wm_listener = { .ping = wm_ping };

static void pres_clock_id(void *data, struct wp_presentation *p, uint32_t clk)
{
	struct client *c = data;

	(void)p;
	c->pres_clock = (clockid_t)clk;
	c->have_pres_clock = true;
}

static const struct wp_presentation_listener pres_listener = {
	.clock_id = pres_clock_id,
};

static void dmabuf_format(void *data, struct zwp_linux_dmabuf_v1 *d,
			  uint32_t format)
{
	(void)data; (void)d; (void)format;
}

static void dmabuf_modifier(void *data, struct zwp_linux_dmabuf_v1 *d,
			    uint32_t format, uint32_t hi, uint32_t lo)
{
	struct client *c = data;
	uint64_t mod = ((uint64_t)hi << 32) | lo;

	(void)d;
	if (format == DRM_FORMAT_XRGB8888 && mod == DRM_FORMAT_MOD_LINEAR)
		c->linear_ok = true;
}

static const struct zwp_linux_dmabuf_v1_listener dmabuf_listener = {
	.format = dmabuf_format,
	.modifier = dmabuf_modifier,
};

/*
 * zwp_linux_dmabuf_v1 v4: the default feedback names the compositor's
 * main DRM device (where the syncobj path allocates its buffers) and, in
 * a format table, what it can import (v4 sends no modifier events).
 */
static void fb_done(void *data, struct zwp_linux_dmabuf_feedback_v1 *f)
{
	struct client *c = data;

	(void)f;
	c->feedback_done = true;
}

static void fb_format_table(void *data, struct zwp_linux_dmabuf_feedback_v1 *f,
			    int32_t fd, uint32_t size)
{
	struct client *c = data;

	(void)f;
	if (c->format_table)
		munmap(c->format_table, c->format_table_size);
	c->format_table = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	c->format_table_size = size;
	if (c->format_table == MAP_FAILED)
		c->format_table = NULL;
	close(fd);
}

static void fb_main_device(void *data, struct zwp_linux_dmabuf_feedback_v1 *f,
			   struct wl_array *dev)
{
	struct client *c = data;

	(void)f;
	if (dev->size == sizeof(dev_t)) {
		memcpy(&c->main_dev, dev->data, sizeof(dev_t));
		c->have_main_dev = true;
	}
}

static void fb_tranche_done(void *data, struct zwp_linux_dmabuf_feedback_v1 *f)
{
	(void)data; (void)f;
}

static void fb_tranche_target_device(void *data, struct zwp_linux_dmabuf_feedback_v1 *f,
				     struct wl_array *dev)
{
	(void)data; (void)f; (void)dev;
}

static void fb_tranche_formats(void *data, struct zwp_linux_dmabuf_feedback_v1 *f,
			       struct wl_array *indices)
{
	struct client *c = data;
	const struct { uint32_t format, pad; uint64_t modifier; } *table = c->format_table;
	size_t entries = c->format_table_size / 16;
	const uint16_t *idx;

	(void)f;
	if (!table)
		return;
	wl_array_for_each(idx, indices) {
		if (*idx < entries && table[*idx].format == DRM_FORMAT_XRGB8888 &&
		    table[*idx].modifier == DRM_FORMAT_MOD_LINEAR)
			c->linear_ok = true;
	}
}

static void fb_tranche_flags(void *data, struct zwp_linux_dmabuf_feedback_v1 *f,
			     uint32_t flags)
{
	(void)data; (void)f; (void)flags;
}

static const struct zwp_linux_dmabuf_feedback_v1_listener feedback_listener = {
	.done = fb_done,
	.format_table = fb_format_table,
	.main_device = fb_main_device,
	.tranche_done = fb_tranche_done,
	.tranche_target_device = fb_tranche_target_device,
	.tranche_formats = fb_tranche_formats,
	.tranche_flags = fb_tranche_flags,
};

static void reg_global(void *data, struct wl_registry *reg, uint32_t name,
		       const char *iface, uint32_t version)
{
	struct client *c = data;

	if (!strcmp(iface, wl_compositor_interface.name) && version >= 4) {
		c->comp = wl_registry_bind(reg, name, &wl_compositor_interface, 4);
	} else if (!strcmp(iface, wl_shm_interface.name)) {
		c->shm = wl_registry_bind(reg, name, &wl_shm_interface, 1);
	} else if (!strcmp(iface, xdg_wm_base_interface.name)) {
		c->wm = wl_registry_bind(reg, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(c->wm, &wm_listener, c);
	} else if (!strcmp(iface, zwp_linux_dmabuf_v1_interface.name) &&
		   version >= 3) {
		c->dmabuf_version = version >= 4 ? 4 : 3;
		c->dmabuf = wl_registry_bind(reg, name, &zwp_linux_dmabuf_v1_interface,
					     c->dmabuf_version);
		zwp_linux_dmabuf_v1_add_listener(c->dmabuf, &dmabuf_listener, c);
		if (c->dmabuf_version >= 4) {
			c->feedback = zwp_linux_dmabuf_v1_get_default_feedback(c->dmabuf);
			zwp_linux_dmabuf_feedback_v1_add_listener(c->feedback,
								  &feedback_listener, c);
		}
#ifdef HAVE_SYNCOBJ_PROTOCOL
	} else if (!strcmp(iface, wp_linux_drm_syncobj_manager_v1_interface.name)) {
		c->syncobj_mgr = wl_registry_bind(reg, name,
						  &wp_linux_drm_syncobj_manager_v1_interface, 1);
		c->have_syncobj_mgr = true;
#else
	} else if (!strcmp(iface, "wp_linux_drm_syncobj_manager_v1")) {
		/* Offered, but this build has no linux-drm-syncobj-v1.xml. */
		c->have_syncobj_mgr = true;
#endif
	} else if (!strcmp(iface,
			   zwp_linux_explicit_synchronization_v1_interface.name) &&
		   version >= 2) {
		c->esync = wl_registry_bind(reg, name,
			&zwp_linux_explicit_synchronization_v1_interface, 2);
	} else if (!strcmp(iface, wp_presentation_interface.name)) {
		c->pres = wl_registry_bind(reg, name, &wp_presentation_interface, 1);
		wp_presentation_add_listener(c->pres, &pres_listener, c);
	}
}

static void reg_global_remove(void *data, struct wl_registry *reg,
			      uint32_t name)
{
	(void)data; (void)reg; (void)name;
}

static const struct wl_registry_listener reg_listener = {
	.global = reg_global,
	.global_remove = reg_global_remove,
};

static void xsurf_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct client *c = data;

	xdg_surface_ack_configure(xs, serial);
	/* A later configure is acknowledged by the next commit: make one. */
	if (c->configured && c->surf)
		c->recommit = true;
	c->configured = true;
}

static const struct xdg_surface_listener xsurf_listener = {
	.configure = xsurf_configure,
};

static void top_configure(void *data, struct xdg_toplevel *t, int32_t w,
			  int32_t h, struct wl_array *states)
{
	/* The buffer keeps its --size: the compositor may scale or crop. */
	(void)data; (void)t; (void)w; (void)h; (void)states;
}

static void top_close(void *data, struct xdg_toplevel *t)
{
	struct client *c = data;

	(void)t;
	c->closed = true;
}

static const struct xdg_toplevel_listener top_listener = {
	.configure = top_configure,
	.close = top_close,
};

static const char *sync_error_name(uint32_t code)
{
	static const char *const names[] = {
		"SYNCHRONIZATION_EXISTS / INVALID_FENCE", "DUPLICATE_FENCE",
		"DUPLICATE_RELEASE", "NO_SURFACE", "UNSUPPORTED_BUFFER",
		"NO_BUFFER",
	};

	return code < sizeof(names) / sizeof(names[0]) ? names[code] : "?";
}

/* Describe why the connection died; returns the protocol error code or -1. */
static int report_display_error(struct client *c, const char *when)
{
	const struct wl_interface *iface = NULL;
	uint32_t id = 0, code;
	int err = wl_display_get_error(c->dpy);

	if (err != EPROTO) {
		fprintf(stderr, PROG ": %s: lost the compositor: %s\n", when,
			strerror(err ? err : EPIPE));
		return -1;
	}
	code = wl_display_get_protocol_error(c->dpy, &iface, &id);
	printf("protocol error: %s@%u: error %u%s%s%s\n",
	       iface ? iface->name : "unknown", id, code,
	       iface && strstr(iface->name, "synchronization") ? " (" : "",
	       iface && strstr(iface->name, "synchronization") ?
	       sync_error_name(code) : "",
	       iface && strstr(iface->name, "synchronization") ? ")" : "");
	fflush(stdout);
	return (int)code;
}

/*
 * Dispatch events until *flag becomes true or timeout_ms passes.
 * Returns 0, -ETIME, or -EPROTO/-EPIPE when the connection failed.
 */
static int dispatch_until(struct client *c, const bool *flag, int timeout_ms)
{
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) +
			    (uint64_t)timeout_ms * 1000000ull;

	while (!*flag) {
		struct pollfd pfd = {
			.fd = wl_display_get_fd(c->dpy), .events = POLLIN,
		};
		uint64_t now;
		int ret;

		while (wl_display_prepare_read(c->dpy) != 0) {
			if (wl_display_dispatch_pending(c->dpy) < 0)
				return -EPROTO;
			if (*flag)
				return 0;
		}
		if (wl_display_flush(c->dpy) < 0 && errno != EAGAIN) {
			wl_display_cancel_read(c->dpy);
			return -EPIPE;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		if (now >= deadline) {
			wl_display_cancel_read(c->dpy);
			return -ETIME;
		}
		ret = poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1);
		if (ret <= 0) {
			wl_display_cancel_read(c->dpy);
			if (ret < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		if (wl_display_read_events(c->dpy) < 0)
			return -EPROTO;
		if (wl_display_dispatch_pending(c->dpy) < 0)
			return -EPROTO;
		if (c->recommit) {
			c->recommit = false;
			wl_surface_commit(c->surf);
		}
	}
	return 0;
}

static int roundtrip(struct client *c)
{
	return wl_display_roundtrip(c->dpy) < 0 ? -EPROTO : 0;
}

/* ------------------------------------------------------------------ */
/* Buffers */

static void buffer_release(void *data, struct wl_buffer *wb)
{
	struct buf *b = data;

	(void)wb;
	/* On the syncobj path the release point says when, not this event. */
	if (b->c && b->c->path == PATH_SYNCOBJ)
		return;
	b->busy = false;
}

static const struct wl_buffer_listener buffer_listener = {
	.release = buffer_release,
};

static int open_vgem(void)
{
	char path[32];

	for (int i = 0; i < 16; i++) {
		drmVersionPtr v;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, "vgem")) {
			drmFreeVersion(v);
			return fd;
		}
		drmFreeVersion(v);
		close(fd);
	}
	return -ENODEV;
}

/*
 * The compositor's main DRM device (dmabuf v4 feedback), by its primary
 * node if it has one, since dumb buffers can only be made there (render
 * nodes refuse DRM_IOCTL_MODE_CREATE_DUMB): buffers it can certainly
 * import. For the syncobj path it must have timeline syncobjs. 0, or
 * -errno with *why set.
 */
static int open_main_device(struct client *c, bool need_syncobj, const char **why)
{
	static const int node_types[] = { DRM_NODE_PRIMARY, DRM_NODE_RENDER };
	static char reason[160];
	drmDevicePtr dev = NULL;
	drmVersionPtr v;
	uint64_t cap = 0;

	if (!c->have_main_dev && !c->device) {
		*why = "the compositor names no DRM device (zwp_linux_dmabuf_v1 version 4 "
		       "feedback; --device names one)";
		return -ENODEV;
	}
	if (c->dev_fd >= 0)
		return 0;
	if (c->device) {
		/* --device: the user knows better than the feedback. */
		c->dev_fd = open(c->device, O_RDWR | O_CLOEXEC);
		if (c->dev_fd < 0) {
			snprintf(reason, sizeof(reason), "--device %s: %s", c->device,
				 strerror(errno));
			*why = reason;
			return -ENODEV;
		}
		snprintf(c->dev_name, sizeof(c->dev_name), "%s", c->device);
		goto opened;
	}
	if (drmGetDeviceFromDevId(c->main_dev, 0, &dev)) {
		snprintf(reason, sizeof(reason), "the compositor's DRM device %u:%u is not here",
			 major(c->main_dev), minor(c->main_dev));
		*why = reason;
		return -ENODEV;
	}
	for (int i = 0; i < 2 && c->dev_fd < 0; i++) {
		if (!(dev->available_nodes & (1 << node_types[i])))
			continue;
		c->dev_fd = open(dev->nodes[node_types[i]], O_RDWR | O_CLOEXEC);
		if (c->dev_fd >= 0)
			snprintf(c->dev_name, sizeof(c->dev_name), "%s",
				 dev->nodes[node_types[i]]);
	}
	drmFreeDevice(&dev);
	if (c->dev_fd < 0) {
		*why = "cannot open the compositor's DRM device";
		return -ENODEV;
	}
opened:
	v = drmGetVersion(c->dev_fd);
	if (v) {
		size_t len = strlen(c->dev_name);

		snprintf(c->dev_name + len, sizeof(c->dev_name) - len, " (%s)", v->name);
		drmFreeVersion(v);
	}
	if (need_syncobj && (drmGetCap(c->dev_fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) || !cap)) {
		snprintf(reason, sizeof(reason), "the compositor's DRM device %s has no timeline "
			 "syncobjs", c->dev_name);
		*why = reason;
		return -EOPNOTSUPP;
	}
	return 0;
}


/*
 * A dumb buffer of the compositor's device (c->dev_fd), mapped for the CPU
 * or the simulated GPU and exported as a dma-buf for the compositor.
 */
static int dumb_alloc(struct client *c, struct buf *b, const char **why)
{
	/*
	 * A few rows more than the picture: Mesa's software rasteriser, which
	 * reads imported textures with the CPU, may read a little past the
	 * last row.
	 */
	struct drm_mode_create_dumb dumb = {
		.width = (uint32_t)c->width, .height = (uint32_t)c->height + 16, .bpp = 32,
	};
	struct drm_mode_map_dumb map = { 0 };

	if (drmIoctl(c->dev_fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb)) {
		*why = errno == EACCES || errno == EPERM ?
		       "the compositor's device refuses dumb buffers (a render node?)" :
		       "cannot create a dumb buffer on the compositor's device";
		return -errno;
	}
	b->gem = dumb.handle;
	b->stride = dumb.pitch;
	b->size = dumb.size;
	map.handle = dumb.handle;
	if (drmIoctl(c->dev_fd, DRM_IOCTL_MODE_MAP_DUMB, &map)) {
		*why = "cannot map the dumb buffer";
		return -errno;
	}
	b->map = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, c->dev_fd,
		      (off_t)map.offset);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		*why = "cannot map the dumb buffer";
		return -errno;
	}
	if (drmPrimeHandleToFD(c->dev_fd, dumb.handle, DRM_CLOEXEC | DRM_RDWR, &b->dmabuf_fd)) {
		b->dmabuf_fd = -1;
		*why = "the compositor's device cannot export its dumb buffer (PRIME)";
		return -errno;
	}
	return 0;
}

/*
 * A dmabuf of c->width x c->height XRGB8888: a dumb buffer of the
 * compositor's own device if it names one (other than vgem), else from
 * vgem, else from /dev/udmabuf.
 */
static int dmabuf_alloc(struct client *c, struct buf *b)
{
	const char *why;

	if (!c->allocator && (c->have_main_dev || c->device) &&
	    open_main_device(c, false, &why) == 0 && !strstr(c->dev_name, "(vgem)")) {
		if (dumb_alloc(c, b, &why) == 0) {
			snprintf(c->alloc_name, sizeof(c->alloc_name), "the compositor's device %s",
				 c->dev_name);
			c->allocator = c->alloc_name;
			return 0;
		}
		buffer_free(b);
	}
	if (c->allocator == c->alloc_name)
		return dumb_alloc(c, b, &why);
	b->stride = (uint32_t)c->width * 4;
	b->size = (size_t)b->stride * (size_t)c->height;

	if (c->drm_fd < 0 && (!c->allocator || !strcmp(c->allocator, "vgem")))
		c->drm_fd = open_vgem();
	if (c->drm_fd >= 0) {
		struct drm_mode_create_dumb dumb = {
			.width = (uint32_t)c->width, .height = (uint32_t)c->height,
			.bpp = 32,
		};
		struct drm_mode_destroy_dumb destroy = { 0 };

		if (drmIoctl(c->drm_fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
			return -errno;
		destroy.handle = dumb.handle;
		if (drmPrimeHandleToFD(c->drm_fd, dumb.handle,
				       DRM_CLOEXEC | DRM_RDWR, &b->dmabuf_fd)) {
			int err = -errno;

			drmIoctl(c->drm_fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
			return err;
		}
		/* The dmabuf holds its own reference to the object. */
		drmIoctl(c->drm_fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
		b->stride = dumb.pitch;
		b->size = dumb.size;
		c->allocator = "vgem";
	} else {
		long page = sysconf(_SC_PAGESIZE);
		struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC };
		int dev, memfd;

		b->size = (b->size + (size_t)page - 1) & ~((size_t)page - 1);
		dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		if (dev < 0)
			return -ENODEV;
		memfd = memfd_create("kfdsync-wl", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (memfd < 0 || ftruncate(memfd, (off_t)b->size) ||
		    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
			int err = -errno;

			if (memfd >= 0)
				close(memfd);
			close(dev);
			return err;
		}
		create.memfd = (uint32_t)memfd;
		create.size = b->size;
		b->dmabuf_fd = ioctl(dev, UDMABUF_CREATE, &create);
		close(memfd);
		close(dev);
		if (b->dmabuf_fd < 0)
			return -errno;
		c->allocator = "udmabuf";
	}
	b->map = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      b->dmabuf_fd, 0);
	if (b->map == MAP_FAILED) {
		int err = -errno;

		b->map = NULL;
		close(b->dmabuf_fd);
		b->dmabuf_fd = -1;
		return err;
	}
	return 0;
}

static void params_created(void *data, struct zwp_linux_buffer_params_v1 *p,
			   struct wl_buffer *wb)
{
	struct client *c = data;

	(void)p;
	c->params_buffer = wb;
	c->params_state = 1;
}

static void params_failed(void *data, struct zwp_linux_buffer_params_v1 *p)
{
	struct client *c = data;

	(void)p;
	c->params_state = -1;
}

static const struct zwp_linux_buffer_params_v1_listener params_listener = {
	.created = params_created,
	.failed = params_failed,
};

/*
 * Have the compositor import @b's dmabuf (XRGB8888, linear if it said so)
 * as b->wl. 0, -EPROTO on a protocol error (reported), or -EINVAL with
 * *@why = @refused when the compositor refuses the buffer.
 */
static int dmabuf_import(struct client *c, struct buf *b, const char *refused, const char **why)
{
	struct zwp_linux_buffer_params_v1 *params;
	uint64_t mod = c->linear_ok ? DRM_FORMAT_MOD_LINEAR : DRM_FORMAT_MOD_INVALID;

	params = zwp_linux_dmabuf_v1_create_params(c->dmabuf);
	zwp_linux_buffer_params_v1_add_listener(params, &params_listener, c);
	zwp_linux_buffer_params_v1_add(params, b->dmabuf_fd, 0, 0, b->stride,
				       (uint32_t)(mod >> 32), (uint32_t)(mod & 0xffffffff));
	c->params_state = 0;
	zwp_linux_buffer_params_v1_create(params, c->width, c->height, DRM_FORMAT_XRGB8888, 0);
	while (c->params_state == 0)
		if (roundtrip(c) < 0) {
			report_display_error(c, "dmabuf import");
			zwp_linux_buffer_params_v1_destroy(params);
			return -EPROTO;
		}
	zwp_linux_buffer_params_v1_destroy(params);
	if (c->params_state < 0) {
		*why = refused;
		return -EINVAL;
	}
	b->wl = c->params_buffer;
	return 0;
}

/* Allocate a dmabuf and have the compositor import it; 0 or -errno. */
static int dmabuf_buffer_new(struct client *c, struct buf *b, const char **why)
{
	int ret = dmabuf_alloc(c, b);

	if (ret < 0) {
		*why = "no dmabuf allocator (neither vgem nor /dev/udmabuf)";
		return ret;
	}
	return dmabuf_import(c, b, "the compositor could not import the dmabuf", why);
}

#ifdef HAVE_SYNCOBJ_PROTOCOL
/*
 * A buffer for the syncobj path: a dumb buffer of the compositor's device
 * (mapped for the CPU or the simulated GPU, exported as a dma-buf for the
 * compositor) and the buffer's own timeline syncobj, imported by the
 * compositor. One timeline per buffer, as Mesa's WSI does: its points are
 * used in order (acquire 2k+1, then release 2k+2, and the buffer is reused
 * only after that release), which a timeline shared by two buffers would
 * not guarantee.
 */
static int syncobj_buffer_new(struct client *c, struct buf *b, const char **why)
{
	int fd, ret;

	ret = dumb_alloc(c, b, why);
	if (ret)
		return ret;
	if (drmSyncobjCreate(c->dev_fd, 0, &b->syncobj)) {
		b->syncobj = 0;
		*why = "cannot create a drm_syncobj";
		return -errno;
	}
	if (drmSyncobjHandleToFD(c->dev_fd, b->syncobj, &fd)) {
		*why = "cannot export the drm_syncobj";
		return -errno;
	}
	/* The compositor gets its own reference; ours closes now. */
	b->timeline = wp_linux_drm_syncobj_manager_v1_import_timeline(c->syncobj_mgr, fd);
	close(fd);
	return dmabuf_import(c, b, "the compositor could not import a dumb buffer of its own device",
			     why);
}

/* Is DRM_IOCTL_SYNCOBJ_EVENTFD there (Linux 6.6+)? Asked on a scratch syncobj. */
static bool probe_release_eventfd(struct client *c)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint32_t tmp;
	int ret = -1;

	if (efd < 0)
		return false;
	if (!drmSyncobjCreate(c->dev_fd, 0, &tmp)) {
		ret = kfdsync_syncobj_eventfd(c->dev_fd, tmp, 1, 0, efd);
		drmSyncobjDestroy(c->dev_fd, tmp);
	}
	close(efd);
	return ret == 0;
}

/*
 * Has the compositor released @b? With --gpu sim it is enough that its
 * release point has a fence (then it becomes a sync_file for the gate, and
 * the queue waits for it); the CPU producer needs it signalled before it
 * draws. Waited for with an eventfd (DRM_IOCTL_SYNCOBJ_EVENTFD), or, before
 * Linux 6.6, polled with DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT. 1 released, 0 not
 * yet, or -errno.
 */
static int syncobj_released(struct client *c, struct buf *b)
{
	bool available_only = c->gpu == PRODUCER_SIM;
	int ret;

	if (!b->release_point)
		return 1;
	if (b->release_efd >= 0) {
		uint64_t v;

		if (read(b->release_efd, &v, sizeof(v)) != sizeof(v))
			return errno == EAGAIN ? 0 : -errno;
	} else {
		uint32_t h = b->syncobj;
		uint64_t point = b->release_point;

		ret = drmSyncobjTimelineWait(c->dev_fd, &h, &point, 1, 0,
					     available_only ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE :
					     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
		if (ret == -1)
			ret = -errno;
		if (ret == -ETIME)
			return 0;
		if (ret < 0)
			return ret;
	}
	if (available_only) {
		b->release_fence = kfdsync_syncobj_export_sync_file(c->dev_fd, b->syncobj,
								    b->release_point);
		if (b->release_fence < 0) {
			ret = b->release_fence;
			b->release_fence = -1;
			return ret;
		}
	}
	if (b->release_efd >= 0)
		close(b->release_efd);
	b->release_efd = -1;
	b->release_point = 0;
	b->busy = false;
	return 1;
}

/* Attach frame @fr's fence as @b's next acquire point, ask for a release point. */
static int syncobj_set_points(struct client *c, struct buf *b, struct frame *fr, int n)
{
	uint64_t acquire = ++b->point, release = ++b->point;
	int ret;

	/* The sync_file's fence becomes timeline point @acquire (a transfer). */
	ret = kfdsync_syncobj_import_sync_file(c->dev_fd, b->syncobj, acquire, fr->fence);
	if (ret) {
		fprintf(stderr, PROG ": frame %d: cannot put its fence on the buffer's timeline: "
			"%s\n", n, strerror(-ret));
		return ret;
	}
	wp_linux_drm_syncobj_surface_v1_set_acquire_point(c->sync_surf, b->timeline,
							  (uint32_t)(acquire >> 32),
							  (uint32_t)acquire);
	wp_linux_drm_syncobj_surface_v1_set_release_point(c->sync_surf, b->timeline,
							  (uint32_t)(release >> 32),
							  (uint32_t)release);
	b->release_point = release;
	if (c->release_eventfd) {
		b->release_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (b->release_efd < 0)
			return -errno;
		ret = kfdsync_syncobj_eventfd(c->dev_fd, b->syncobj, release,
					      c->gpu == PRODUCER_SIM ? KFDSYNC_SYNCOBJ_WAIT_AVAILABLE : 0,
					      b->release_efd);
		if (ret) {
			fprintf(stderr, PROG ": frame %d: cannot wait for the release point: %s\n",
				n, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Make the syncobj path's buffers; 0, or -errno with *why set. */
static int syncobj_setup(struct client *c, const char **why)
{
	int ret;

	if (!c->dmabuf) {
		*why = "the compositor does not offer zwp_linux_dmabuf_v1";
		return -ENODEV;
	}
	/* The feedback's events come with the first roundtrips. */
	if (c->feedback && !c->feedback_done && roundtrip(c) < 0)
		return -EPROTO;
	ret = open_main_device(c, true, why);
	if (ret)
		return ret;
	for (int i = 0; i < NBUF; i++) {
		ret = syncobj_buffer_new(c, &c->bufs[i], why);
		if (ret)
			return ret;
	}
	c->release_eventfd = probe_release_eventfd(c);
	c->sync_surf = wp_linux_drm_syncobj_manager_v1_get_surface(c->syncobj_mgr, c->surf);
	c->allocator = "dumb";
	return 0;
}
#endif

static int shm_buffer_new(struct client *c, struct buf *b)
{
	struct wl_shm_pool *pool;
	int fd;

	b->stride = (uint32_t)c->width * 4;
	b->size = (size_t)b->stride * (size_t)c->height;
	fd = memfd_create("kfdsync-wl-shm", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)b->size)) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	b->map = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		close(fd);
		return -errno;
	}
	pool = wl_shm_create_pool(c->shm, fd, (int32_t)b->size);
	b->wl = wl_shm_pool_create_buffer(pool, 0, c->width, c->height,
					  (int32_t)b->stride,
					  WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool_destroy(pool);
	close(fd);
	return 0;
}

static void buffer_free(struct buf *b)
{
	struct client *c = b->c;
	struct stage_event ev = b->ev;
	int index = b->index;

	if (b->wl)
		wl_buffer_destroy(b->wl);
	if (b->map)
		munmap(b->map, b->size);
	if (b->dmabuf_fd >= 0)
		close(b->dmabuf_fd);
	if (b->release_fence >= 0)
		close(b->release_fence);
	if (b->release_efd >= 0)
		close(b->release_efd);
#ifdef HAVE_SYNCOBJ_PROTOCOL
	if (b->timeline)
		wp_linux_drm_syncobj_timeline_v1_destroy(b->timeline);
#endif
	if (c && c->dev_fd >= 0) {
		if (b->syncobj)
			drmSyncobjDestroy(c->dev_fd, b->syncobj);
		if (b->gem) {
			struct drm_mode_destroy_dumb destroy = { .handle = b->gem };

			drmIoctl(c->dev_fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
		}
	}
	memset(b, 0, sizeof(*b));
	b->dmabuf_fd = b->release_fence = b->release_efd = -1;
	b->last_frame = -1;
	/* What belongs to the producer, not to the buffer, stays. */
	b->c = c;
	b->index = index;
	b->ev = ev;
}

static void buffers_free(struct client *c)
{
	for (int i = 0; i < NBUF; i++)
		buffer_free(&c->bufs[i]);
}

/* The picture of frame n (see frame_bar()), drawn by the CPU. */
static void fill(struct client *c, struct buf *b, int n)
{
	uint32_t bg = colours[n % 6];
	int bar_w, bar_x, bar_top = c->height * 3 / 4;
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE,
	};

	frame_bar(c, n, &bar_x, &bar_w);
	if (b->dmabuf_fd >= 0)
		ioctl(b->dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync);
	for (int y = 0; y < c->height; y++) {
		uint32_t *row = (uint32_t *)((char *)b->map + (size_t)y * b->stride);

		for (int x = 0; x < c->width; x++) {
			bool bar = y >= bar_top && x >= bar_x && x < bar_x + bar_w;
			bool border = y < 4 || y >= c->height - 4 ||
				      x < 4 || x >= c->width - 4;

			row[x] = border ? 0x00ffffff : bar ? 0x00101010 : bg;
		}
	}
	if (b->dmabuf_fd >= 0) {
		sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
		ioctl(b->dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync);
	}
}

/* ------------------------------------------------------------------ */
/* Explicit release */

static void release_fenced(void *data, struct zwp_linux_buffer_release_v1 *r,
			   int32_t fd)
{
	struct buf *b = data;

	if (b->release_fence >= 0)
		close(b->release_fence);
	b->release_fence = fd;
	b->busy = false;
	zwp_linux_buffer_release_v1_destroy(r);
}

static void release_immediate(void *data, struct zwp_linux_buffer_release_v1 *r)
{
	struct buf *b = data;

	b->busy = false;
	zwp_linux_buffer_release_v1_destroy(r);
}

static const struct zwp_linux_buffer_release_v1_listener release_listener = {
	.fenced_release = release_fenced,
	.immediate_release = release_immediate,
};

/* ------------------------------------------------------------------ */
/* Presentation */

struct fb_ctx {
	struct client *c;
	struct wp_presentation_feedback *fb;
	int n;
	bool done;
};

static void fb_sync_output(void *data, struct wp_presentation_feedback *f,
			   struct wl_output *o)
{
	(void)data; (void)f; (void)o;
}

static void fb_presented(void *data, struct wp_presentation_feedback *f,
			 uint32_t sec_hi, uint32_t sec_lo, uint32_t nsec,
			 uint32_t refresh, uint32_t seq_hi, uint32_t seq_lo,
			 uint32_t flags)
{
	struct fb_ctx *fc = data;
	struct client *c = fc->c;
	struct frame *fr = &c->fr[fc->n];
	uint64_t t = (((uint64_t)sec_hi << 32) | sec_lo) * 1000000000ull + nsec;
	clockid_t clk = c->have_pres_clock ? c->pres_clock : CLOCK_MONOTONIC;
	/* Move the timestamp to CLOCK_MONOTONIC, the fences' clock. */
	uint64_t p_now = clock_ns(clk), m_now = clock_ns(CLOCK_MONOTONIC);

	(void)refresh; (void)seq_hi; (void)seq_lo; (void)flags;
	fr->presented_ns = m_now - (p_now - t);
	fr->presented = true;
	/* Evidence that needs no clock: was the fence still pending now? */
	fr->pending_at_present = kfdsync_sync_file_wait(fr->fence, 0) == -ETIME;
	fc->done = true;
	fc->fb = NULL;
	wp_presentation_feedback_destroy(f);
}

static void fb_discarded(void *data, struct wp_presentation_feedback *f)
{
	struct fb_ctx *fc = data;

	fc->c->fr[fc->n].discarded = true;
	fc->done = true;
	fc->fb = NULL;
	wp_presentation_feedback_destroy(f);
}

static const struct wp_presentation_feedback_listener fb_listener = {
	.sync_output = fb_sync_output,
	.presented = fb_presented,
	.discarded = fb_discarded,
};

/* ------------------------------------------------------------------ */

static int connect_and_bind(struct client *c)
{
	c->dpy = wl_display_connect(NULL);
	if (!c->dpy) {
		const char *d = getenv("WAYLAND_DISPLAY");

		fprintf(stderr, PROG ": cannot connect to the Wayland display "
			"\"%s\" (XDG_RUNTIME_DIR=%s): %s\n",
			d ? d : "wayland-0",
			getenv("XDG_RUNTIME_DIR") ? getenv("XDG_RUNTIME_DIR") :
			"(unset)", strerror(errno));
		return -ENOENT;
	}
	c->reg = wl_display_get_registry(c->dpy);
	wl_registry_add_listener(c->reg, &reg_listener, c);
	/* Globals, then their initial events (dmabuf modifiers, clock id). */
	if (roundtrip(c) < 0 || roundtrip(c) < 0) {
		report_display_error(c, "startup");
		return -EPROTO;
	}
	if (!c->comp || !c->wm) {
		fprintf(stderr, PROG ": the compositor lacks %s\n",
			!c->comp ? "wl_compositor version 4" : "xdg_wm_base");
		return -ENOTSUP;
	}
	printf("compositor offers: zwp_linux_dmabuf_v1 %s, "
	       "zwp_linux_explicit_synchronization_v1 %s, wl_shm %s, "
	       "wp_presentation %s, wp_linux_drm_syncobj_manager_v1 %s\n",
	       c->dmabuf ? "yes" : "no", c->esync ? "yes" : "no",
	       c->shm ? "yes" : "no", c->pres ? "yes" : "no",
	       c->have_syncobj_mgr ? "yes" : "no");
	return 0;
}

static int surface_create(struct client *c)
{
	c->surf = wl_compositor_create_surface(c->comp);
	c->xsurf = xdg_wm_base_get_xdg_surface(c->wm, c->surf);
	xdg_surface_add_listener(c->xsurf, &xsurf_listener, c);
	c->top = xdg_surface_get_toplevel(c->xsurf);
	xdg_toplevel_add_listener(c->top, &top_listener, c);
	xdg_toplevel_set_title(c->top, "kfdsync compute output");
	xdg_toplevel_set_app_id(c->top, "kfdsync-wayland-client");
	if (c->fullscreen)
		xdg_toplevel_set_fullscreen(c->top, NULL);
	wl_surface_commit(c->surf);
	if (dispatch_until(c, &c->configured, c->timeout_ms) < 0) {
		if (!wl_display_get_error(c->dpy))
			fprintf(stderr, PROG ": the compositor did not configure "
				"the window within %d ms\n", c->timeout_ms);
		else
			report_display_error(c, "configure");
		return -ETIME;
	}
	return 0;
}

/*
 * Try the syncobj path (preferred when the compositor offers it). true if
 * taken; else *why says why not, and what it made is undone.
 */
static bool try_syncobj(struct client *c, const char **why, int *err)
{
	*err = 0;
#ifdef HAVE_SYNCOBJ_PROTOCOL
	if (!c->syncobj_mgr) {
		*why = "the compositor does not offer wp_linux_drm_syncobj_manager_v1";
		return false;
	}
	*err = syncobj_setup(c, why);
	if (*err == 0)
		return true;
	if (*err == -EPROTO)
		return false;
	*err = 0;
	buffers_free(c);
	if (c->sync_surf)
		wp_linux_drm_syncobj_surface_v1_destroy(c->sync_surf);
	c->sync_surf = NULL;
	if (c->dev_fd >= 0)
		close(c->dev_fd);
	c->dev_fd = -1;
	return false;
#else
	*why = c->have_syncobj_mgr ?
	       "the compositor offers wp_linux_drm_syncobj_manager_v1, but this build has no "
	       "linux-drm-syncobj-v1.xml (wayland-protocols 1.34 or later: see meson's "
	       "summary)" :
	       "the compositor does not offer wp_linux_drm_syncobj_manager_v1 (and this "
	       "build has no linux-drm-syncobj-v1.xml)";
	return false;
#endif
}

/* Pick the path and make its buffers. Prints the one "sync path:" line. */
static int choose_path(struct client *c)
{
	const char *why_not_dmabuf = NULL, *why_not_explicit = NULL;
	const char *why_not_syncobj = NULL;
	bool dmabuf_ok = false;
	int ret;

	if (c->want == PATH_AUTO || c->want == PATH_SYNCOBJ) {
		if (try_syncobj(c, &why_not_syncobj, &ret)) {
			c->path = PATH_SYNCOBJ;
			for (int i = 0; i < NBUF; i++)
				c->bufs[i].c = c;
			printf("sync path: syncobj (wp_linux_drm_syncobj_v1, dumb buffers of %s, "
			       "a timeline per buffer, release points waited for with %s)\n",
			       c->dev_name, c->release_eventfd ? "DRM_IOCTL_SYNCOBJ_EVENTFD" :
			       "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT (no SYNCOBJ_EVENTFD: Linux < 6.6)");
			fflush(stdout);
			return EXIT_OK;
		}
		if (ret == -EPROTO)
			return EXIT_FAIL;
		if (c->want == PATH_SYNCOBJ) {
			fprintf(stderr, PROG ": --path syncobj: %s\n", why_not_syncobj);
			return EXIT_USAGE;
		}
		printf("syncobj path: not taken: %s\n", why_not_syncobj);
	}

	if (!c->dmabuf)
		why_not_dmabuf = "the compositor does not offer zwp_linux_dmabuf_v1";
	if (!c->esync)
		why_not_explicit = "the compositor does not offer "
				   "zwp_linux_explicit_synchronization_v1";

	if (c->want != PATH_SHM && !why_not_dmabuf) {
		for (int i = 0; i < NBUF; i++) {
			ret = dmabuf_buffer_new(c, &c->bufs[i], &why_not_dmabuf);
			if (ret == -EPROTO)
				return EXIT_FAIL;
			if (ret < 0)
				break;
			wl_buffer_add_listener(c->bufs[i].wl, &buffer_listener,
					       &c->bufs[i]);
			c->bufs[i].c = c;
		}
		dmabuf_ok = !why_not_dmabuf;
		if (!dmabuf_ok)
			buffers_free(c);
	}

	switch (c->want) {
	case PATH_EXPLICIT:
		if (why_not_explicit || why_not_dmabuf) {
			fprintf(stderr, PROG ": --path explicit: %s\n",
				why_not_explicit ? why_not_explicit : why_not_dmabuf);
			return EXIT_USAGE;
		}
		c->path = PATH_EXPLICIT;
		break;
	case PATH_IMPLICIT:
		if (why_not_dmabuf) {
			fprintf(stderr, PROG ": --path implicit: %s\n", why_not_dmabuf);
			return EXIT_USAGE;
		}
		c->path = PATH_IMPLICIT;
		break;
	case PATH_SHM:
	case PATH_SYNCOBJ:	/* taken above, or refused */
		c->path = PATH_SHM;
		break;
	case PATH_AUTO:
		c->path = dmabuf_ok ? (c->esync ? PATH_EXPLICIT : PATH_IMPLICIT) :
			  PATH_SHM;
		break;
	}

	if (c->path == PATH_SHM) {
		if (!c->shm) {
			fprintf(stderr, PROG ": no usable buffer type: %s, and "
				"there is no wl_shm\n", why_not_dmabuf ?
				why_not_dmabuf : "shm was forced");
			return EXIT_USAGE;
		}
		for (int i = 0; i < NBUF; i++) {
			if (shm_buffer_new(c, &c->bufs[i]) < 0) {
				perror(PROG ": shm buffer");
				return EXIT_FAIL;
			}
			wl_buffer_add_listener(c->bufs[i].wl, &buffer_listener,
					       &c->bufs[i]);
			c->bufs[i].c = c;
		}
		c->allocator = "shm";
	}

	switch (c->path) {
	case PATH_EXPLICIT:
		c->ssync = zwp_linux_explicit_synchronization_v1_get_synchronization(
				c->esync, c->surf);
		printf("sync path: explicit (zwp_linux_explicit_synchronization_v1, "
		       "dmabuf from %s)\n", c->allocator);
		break;
	case PATH_IMPLICIT:
		printf("sync path: implicit (fence attached to the dmabuf from %s)%s%s\n",
		       c->allocator, c->want == PATH_AUTO ? ": " : "",
		       c->want == PATH_AUTO ? why_not_explicit : "");
		break;
	default:
		printf("sync path: shm (client waits on the sync_file before "
		       "commit)%s%s\n", c->want == PATH_AUTO ? ": " : "",
		       c->want == PATH_AUTO ? why_not_dmabuf : "");
		break;
	}
	fflush(stdout);
	return EXIT_OK;
}

static struct buf *free_buffer(struct client *c)
{
	for (int i = 0; i < NBUF; i++)
		if (!c->bufs[i].busy)
			return &c->bufs[i];
	return NULL;
}

static bool any_buffer_free(struct client *c)
{
	return free_buffer(c) != NULL;
}

/* Dispatch until some buffer is free; *flag for dispatch_until. */
static int wait_buffer(struct client *c, struct buf **out)
{
	uint64_t deadline = clock_ns(CLOCK_MONOTONIC) +
			    (uint64_t)c->timeout_ms * 1000000ull;

	for (;;) {
		bool f = false;
		int ret;

#ifdef HAVE_SYNCOBJ_PROTOCOL
		for (int i = 0; c->path == PATH_SYNCOBJ && i < NBUF; i++) {
			ret = syncobj_released(c, &c->bufs[i]);
			if (ret < 0)
				return ret;
		}
#endif
		*out = free_buffer(c);
		if (*out)
			break;
		ret = dispatch_until(c, &f, 20);
		if (ret != -ETIME && ret < 0)
			return ret;
		if (any_buffer_free(c))
			continue;
		if (clock_ns(CLOCK_MONOTONIC) > deadline)
			return -ETIME;
	}
	/* --gpu sim: the queue waits for the release fence, not the CPU. */
	if ((*out)->release_fence >= 0 && c->gpu != PRODUCER_SIM) {
		int ret = kfdsync_sync_file_wait((*out)->release_fence,
						 (int64_t)c->timeout_ms * 1000000);

		close((*out)->release_fence);
		(*out)->release_fence = -1;
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Run "--capture CMD NAME"; 0 if it succeeded. */
static int run_capture(struct client *c, const char *name)
{
	char *argv[] = { (char *)c->capture, (char *)name, NULL };
	int status = 0, ret;
	pid_t pid;

	fflush(stdout);
	ret = posix_spawnp(&pid, c->capture, NULL, NULL, argv, environ);
	if (ret) {
		fprintf(stderr, PROG ": cannot run the capture command %s: %s\n", c->capture,
			strerror(ret));
		return -ret;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, PROG ": capture %s failed\n", name);
		return -EIO;
	}
	return 0;
}

/*
 * --capture with --hold-frame: frame @n is committed and its pixels are
 * final in the buffer, but its compute fence is still pending: capture the
 * screen, which must still show frame n - 1. The fence must be pending
 * before and after the capture, or the capture proves nothing.
 */
static void capture_pending(struct client *c, struct frame *fr, int n)
{
	bool never = false;
	int before, after;
	char name[32];

	if (!c->capture || n != c->hold_frame)
		return;
	if (c->gpu == PRODUCER_SIM) {
		int ret = gpu_wait_pos(c->queue, fr->draw_end, c->timeout_ms);

		if (ret) {
			fprintf(stderr, PROG ": frame %d: waiting for it to be drawn: %s\n", n,
				strerror(-ret));
			return;
		}
	}
	/* Give the compositor time to show the frame, if it does not wait. */
	dispatch_until(c, &never, 500);
	before = fence_state(fr->fence, NULL);
	snprintf(name, sizeof(name), "frame%d-pending", n);
	run_capture(c, name);
	after = fence_state(fr->fence, NULL);
	if (before == 0 && after == 0)
		printf("frame %d pending: captured while its fence was pending (the frame "
		       "fully drawn in its buffer)\n", n);
	else if (before == 0 && after == 1)
		printf("frame %d pending: the capture ended only after its fence signalled "
		       "(the compositor answered after the fence, or --hold-ms is too short)\n", n);
	else
		printf("frame %d pending: not captured while pending, its fence had signalled "
		       "(try a longer --hold-ms)\n", n);
	fflush(stdout);
}

/*
 * --gpu sim, once frame @n's fence signalled: what its compute saw. The
 * queue passed the gate only after the release it stood for signalled, and
 * was submitted before that where the release was still pending: then the
 * GPU, not the CPU, waited for the compositor. -1 if the gate carried an
 * error (the compositor's release failed).
 */
static int sim_trace(struct client *c, struct buf *b, struct frame *fr, int n)
{
	const struct stage_stamp *st = &c->shared->stamp[b->index];
	uint64_t frame = __atomic_load_n(&st->frame, __ATOMIC_ACQUIRE);
	uint64_t seen = st->gate_seen, start = st->start_ns;
	int64_t rel_ts = 0;
	int rel = 1;

	if (frame != (uint64_t)n) {
		fprintf(stderr, PROG ": frame %d: buffer %d's stamp says frame %" PRIu64 "\n",
			n, b->index, frame);
		return -1;
	}
	if (fr->gate_release >= 0)
		rel = fence_state(fr->gate_release, &rel_ts);
	printf("frame %d: compute on buffer %d, gate >= %d %s", n, b->index, n,
	       n < NBUF ? "not needed (first use of the buffer)" :
	       fr->gate_release >= 0 ? "opened by kfdsync from the compositor's release" :
	       "opened by the client (no release fence)");
	/*
	 * A release point the compositor signalled on the CPU holds a stub
	 * fence, whose timestamp is not the release's: report the time only
	 * for a release that was pending when it was imported.
	 */
	if (fr->gate_release >= 0 && fr->gate_pending)
		printf(" of frame %d (pending when imported, signalled %+.3f ms)", fr->gate_from,
		       rel == 1 ? ms_between(fr->submit_ns, (uint64_t)rel_ts) : 0.0);
	else if (fr->gate_release >= 0)
		printf(" of frame %d (signalled before it was imported)", fr->gate_from);
	printf(", queue passed it %+.3f ms after submission, seeing %" PRIu64 "\n",
	       ms_between(fr->submit_ns, start), seen & 0xffffffffu);
	fflush(stdout);
	if (fr->gate_release >= 0) {
		close(fr->gate_release);
		fr->gate_release = -1;
	}
	if ((seen & 0xffffffffu) == GATE_ERROR || rel < 0) {
		fprintf(stderr, PROG ": frame %d: the compositor's release of buffer %d ended "
			"with an error%s%s; the frame failed\n", n, b->index, rel < 0 ? ": " : "",
			rel < 0 ? strerror(-rel) : "");
		return -1;
	}
	return 0;
}

static int run_frames(struct client *c)
{
	int early = 0, presented = 0, discarded = 0;

	for (int n = 0; n < c->frames && !c->closed; n++) {
		struct frame *fr = &c->fr[n];
		struct fb_ctx fc = { .c = c, .n = n };
		struct kfdsync_fence_status fs;
		struct buf *b;
		int ret;

		ret = wait_buffer(c, &b);
		if (ret < 0) {
			if (ret == -EPROTO)
				report_display_error(c, "buffer release");
			else
				fprintf(stderr, PROG ": frame %d: no buffer came back "
					"from the compositor within %d ms: %s\n",
					n, c->timeout_ms, strerror(-ret));
			return EXIT_FAIL;
		}
		if (c->capture && n == c->hold_frame) {
			char name[32];

			/* The screen before: frame n - 1 (before n's compute starts). */
			snprintf(name, sizeof(name), "frame%d-before", n);
			run_capture(c, name);
		}
		if (c->gpu == PRODUCER_SIM) {
			/* The queue waits for the compositor; draws; signals. */
			if (sim_open_gate(c, b, fr, n) || sim_submit(c, b, fr, n))
				return EXIT_FAIL;
		} else {
			fill(c, b, n);
			fr->fence = kfdsync_timeline_create_fence(c->tl, (uint32_t)n + 1,
								  "kfdsync-wl-frame");
			if (fr->fence < 0) {
				fprintf(stderr, PROG ": frame %d: cannot create its fence: %s\n",
					n, strerror(-fr->fence));
				return EXIT_FAIL;
			}
			/* Compute starts now; its fence signals when it is done. */
			producer_submit(c);
		}
		b->last_frame = n;

		switch (c->path) {
#ifdef HAVE_SYNCOBJ_PROTOCOL
		case PATH_SYNCOBJ:
			if (syncobj_set_points(c, b, fr, n))
				return EXIT_FAIL;
			break;
#endif
		case PATH_EXPLICIT: {
			struct zwp_linux_buffer_release_v1 *rel;

			zwp_linux_surface_synchronization_v1_set_acquire_fence(
				c->ssync, fr->fence);
			rel = zwp_linux_surface_synchronization_v1_get_release(c->ssync);
			zwp_linux_buffer_release_v1_add_listener(rel, &release_listener, b);
			break;
		}
		case PATH_IMPLICIT:
			ret = kfdsync_dmabuf_import_sync_file(b->dmabuf_fd, fr->fence,
							      KFDSYNC_DMABUF_WRITE);
			if (ret < 0) {
				fprintf(stderr, PROG ": frame %d: cannot attach the "
					"fence to the dmabuf: %s%s\n", n, strerror(-ret),
					ret == -ENOTTY ? " (needs Linux 6.0 or later)" : "");
				return EXIT_FAIL;
			}
			break;
		default:
			ret = kfdsync_sync_file_wait(fr->fence,
						     (int64_t)c->timeout_ms * 1000000);
			if (ret == -ETIME) {
				fprintf(stderr, PROG ": frame %d: the compute fence did "
					"not signal within %d ms; not presenting it\n",
					n, c->timeout_ms);
				return EXIT_FAIL;
			} else if (ret < 0) {
				fprintf(stderr, PROG ": frame %d: waiting for the "
					"fence: %s\n", n, strerror(-ret));
				return EXIT_FAIL;
			}
			break;
		}

		wl_surface_attach(c->surf, b->wl, 0, 0);
		wl_surface_damage_buffer(c->surf, 0, 0, c->width, c->height);
		if (c->pres) {
			fc.fb = wp_presentation_feedback(c->pres, c->surf);
			wp_presentation_feedback_add_listener(fc.fb, &fb_listener, &fc);
		} else
			fc.done = true;
		b->busy = true;
		fr->commit_ns = clock_ns(CLOCK_MONOTONIC);
		wl_surface_commit(c->surf);
		capture_pending(c, fr, n);

		ret = dispatch_until(c, &fc.done, c->timeout_ms);
		if (fc.fb) {
			/* fc goes out of scope: no late event may reach it. */
			wp_presentation_feedback_destroy(fc.fb);
			fc.fb = NULL;
		}
		if (ret == -ETIME) {
			bool pending = kfdsync_sync_file_wait(fr->fence, 0) == -ETIME;

			fprintf(stderr, PROG ": frame %d: not presented within %d ms%s\n",
				n, c->timeout_ms, pending ?
				"; its compute fence has not signalled, so the "
				"compositor is holding the frame back" : "");
			printf("frame %d: not presented, fence %s\n", n,
			       pending ? "pending" : "signalled");
			fflush(stdout);
			return EXIT_FAIL;
		} else if (ret < 0) {
			report_display_error(c, "frame");
			return EXIT_FAIL;
		}
		if (fr->discarded) {
			discarded++;
			printf("frame %d: discarded by the compositor\n", n);
			continue;
		}
		/* Wait (bounded) for the fence so its timestamp can be read. */
		ret = kfdsync_sync_file_wait(fr->fence, (int64_t)c->timeout_ms * 1000000);
		if (ret == 0 &&
		    kfdsync_sync_file_get_status(fr->fence, NULL, &fs, 1) >= 1 &&
		    fs.status < 0) {
			fprintf(stderr, PROG ": frame %d: the compute fence ended with "
				"an error: %s; the frame failed (the compositor may show "
				"an incomplete frame)\n", n, strerror(-fs.status));
			printf("frame %d: failed, its fence ended with an error: %s\n", n,
			       strerror(-fs.status));
			fflush(stdout);
			return EXIT_FAIL;
		}
		if (ret < 0 ||
		    kfdsync_sync_file_get_status(fr->fence, NULL, &fs, 1) < 1 ||
		    fs.status != 1) {
			fprintf(stderr, PROG ": frame %d: the compute fence did not "
				"signal within %d ms after presentation\n", n,
				c->timeout_ms);
			early++;
			printf("frame %d: presented while its fence was pending: "
			       "EARLY\n", n);
			continue;
		}
		fr->signal_ns = fs.timestamp_ns;
		presented++;
		if (c->gpu == PRODUCER_SIM && sim_trace(c, b, fr, n))
			return EXIT_FAIL;
		if (c->capture && n == c->hold_frame) {
			char name[32];

			snprintf(name, sizeof(name), "frame%d-shown", n);
			run_capture(c, name);
		}
		if (fr->pending_at_present || fr->presented_ns < fr->signal_ns) {
			early++;
			printf("frame %d: fence signalled %+.3f ms, presented %+.3f ms "
			       "after commit: EARLY (presented before the fence "
			       "signalled)\n", n, ms_between(fr->commit_ns, fr->signal_ns),
			       ms_between(fr->commit_ns, fr->presented_ns));
		} else {
			printf("frame %d: fence signalled %+.3f ms, presented %+.3f ms "
			       "after commit: after the fence\n", n,
			       ms_between(fr->commit_ns, fr->signal_ns),
			       ms_between(fr->commit_ns, fr->presented_ns));
		}
		fflush(stdout);
	}
	printf("summary: path=%s frames=%d presented=%d discarded=%d early=%d\n",
	       path_names[c->path], c->frames, presented, discarded, early);
	fflush(stdout);
	return early ? EXIT_EARLY : EXIT_OK;
}

/*
 * --try-acquire=shm|dmabuf: commit one buffer of that type with a (signalled)
 * acquire fence and report whether the compositor accepted it. The protocol
 * requires UNSUPPORTED_BUFFER for shm and acceptance for dmabuf.
 */
static int try_acquire(struct client *c)
{
	bool shm = c->try_acquire == PATH_SHM;
	const char *what = shm ? "shm" : "dmabuf";
	struct buf b = { .dmabuf_fd = -1, .release_fence = -1 };
	const char *why = NULL;
	int fence, code, ret;

	if (!c->esync) {
		printf("%s acquire fence: not tried: the compositor does not offer "
		       "zwp_linux_explicit_synchronization_v1\n", what);
		return EXIT_USAGE;
	}
	if (shm) {
		if (!c->shm || shm_buffer_new(c, &b) < 0) {
			fprintf(stderr, PROG ": cannot make an shm buffer\n");
			return EXIT_USAGE;
		}
	} else {
		if (!c->dmabuf) {
			printf("dmabuf acquire fence: not tried: the compositor "
			       "does not offer zwp_linux_dmabuf_v1\n");
			return EXIT_USAGE;
		}
		ret = dmabuf_buffer_new(c, &b, &why);
		if (ret < 0) {
			if (ret != -EPROTO)
				printf("dmabuf acquire fence: not tried: %s\n", why);
			buffer_free(&b);
			return ret == -EPROTO ? EXIT_FAIL : EXIT_USAGE;
		}
		printf("dmabuf from %s imported by the compositor\n", c->allocator);
	}
	fill(c, &b, 0);
	fence = kfdsync_timeline_create_fence(c->tl, 1, "kfdsync-wl-try");
	if (fence < 0) {
		fprintf(stderr, PROG ": cannot create a fence: %s\n", strerror(-fence));
		buffer_free(&b);
		return EXIT_FAIL;
	}
	kfdsync_timeline_inc(c->tl, 1);	/* signalled: only the buffer type matters */
	c->ssync = zwp_linux_explicit_synchronization_v1_get_synchronization(
			c->esync, c->surf);
	zwp_linux_surface_synchronization_v1_set_acquire_fence(c->ssync, fence);
	close(fence);
	wl_surface_attach(c->surf, b.wl, 0, 0);
	wl_surface_damage_buffer(c->surf, 0, 0, c->width, c->height);
	wl_surface_commit(c->surf);
	/* The compositor checks the buffer type when it handles the commit. */
	if (roundtrip(c) == 0) {
		printf("%s acquire fence: accepted by the compositor%s\n", what,
		       shm ? " (the protocol requires UNSUPPORTED_BUFFER)" : "");
		fflush(stdout);
		buffer_free(&b);
		return shm ? EXIT_FAIL : EXIT_OK;
	}
	code = report_display_error(c, "acquire fence");
	buffer_free(&b);
	if (shm && code == ZWP_LINUX_SURFACE_SYNCHRONIZATION_V1_ERROR_UNSUPPORTED_BUFFER) {
		printf("shm acquire fence: refused by the compositor "
		       "(UNSUPPORTED_BUFFER), as the protocol requires\n");
		return EXIT_OK;
	}
	printf("%s acquire fence: %s\n", what, code < 0 ?
	       "the compositor went away" : shm ?
	       "refused, but not with UNSUPPORTED_BUFFER" : "refused");
	return EXIT_FAIL;
}

/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [OPTION]...\n"
"\n"
"Present compute output on a Wayland compositor, each frame gated by the\n"
"fence of the compute job that produced it.\n"
"\n"
"The producer computes each frame and owns its fence: with --gpu timeline\n"
"(the default) the CPU draws and the fence, a kfdsync CPU timeline point\n"
"(/dev/kfdsync_timeline), signals --compute-ms later; with --gpu sim a queue\n"
"of the test rig's simulated GPU (/dev/kfdsim) draws, and its RELEASE_MEM on\n"
"a KFD event, exported by kfdsync, is the fence. The fence reaches the\n"
"compositor by the first of these paths that works (or the one --path\n"
"forces):\n"
"\n"
"  syncobj   wp_linux_drm_syncobj_v1: dumb buffers of the compositor's DRM\n"
"            device (zwp_linux_dmabuf_v1 v4 feedback), a timeline syncobj per\n"
"            buffer; the fence is the acquire point, the compositor signals\n"
"            the release point. With --gpu sim that release point becomes a\n"
"            sync_file imported into kfdsync, which writes the gate the\n"
"            buffer's next compute waits for (WAIT_REG_MEM).\n"
"  explicit  zwp_linux_explicit_synchronization_v1 with a dmabuf buffer:\n"
"            the fence is the surface's acquire fence; the buffer comes\n"
"            back through zwp_linux_buffer_release_v1.\n"
"  implicit  zwp_linux_dmabuf_v1 only: the fence is attached to the\n"
"            dmabuf (DMA_BUF_IOCTL_IMPORT_SYNC_FILE, Linux 6.0+), which\n"
"            compositors relying on implicit sync wait for.\n"
"  shm       wl_shm: the client waits for the fence (at most --timeout-ms)\n"
"            before it commits.\n"
"\n"
"dmabufs are dumb buffers of the compositor's own DRM device when it names\n"
"one (zwp_linux_dmabuf_v1 v4 feedback) or --device gives one, else come from\n"
"vgem (DRM_IOCTL_MODE_CREATE_DUMB and PRIME export) or, without vgem, from\n"
"/dev/udmabuf.\n"
"\n"
"Options:\n"
"  -n, --frames=N       frames to present (default 10)\n"
"  -s, --size=WxH       buffer size in pixels (default 256x256)\n"
"  -p, --path=PATH      auto (default), syncobj, explicit, implicit or shm;\n"
"                       a forced path the compositor cannot do is an error\n"
"  -g, --gpu=PRODUCER   timeline (default: the CPU draws, a kfdsync CPU\n"
"                       timeline is the fence) or sim (the simulated GPU)\n"
"  -c, --compute-ms=MS  time from a frame's commit until its fence\n"
"                       signals (default 50)\n"
"  -t, --timeout-ms=MS  longest wait for a fence, a buffer or a\n"
"                       presentation (default 5000)\n"
"      --stall-frame=N  the fence of frame N (from 0) never signals: shows\n"
"                       what the compositor and the client do then\n"
"      --hold-frame=N   frame N's compute takes --hold-ms instead of\n"
"                       --compute-ms (its pixels are final first)\n"
"      --hold-ms=MS     (default 3000)\n"
"      --capture=CMD    with --hold-frame: run \"CMD frameN-before\" just\n"
"                       before frame N is committed, \"CMD frameN-pending\"\n"
"                       while it is committed, drawn and its fence pending,\n"
"                       and \"CMD frameN-shown\" once it is presented\n"
"      --error-frame=N  (--gpu sim) frame N's fence gets a watchdog of\n"
"                       --error-ms, shorter than its compute (--hold-ms):\n"
"                       it ends with -ETIMEDOUT, which fails the frame\n"
"      --error-ms=MS    (default 500)\n"
"      --fullscreen     ask for a fullscreen window\n"
"      --device=NODE    make dmabufs as dumb buffers of this DRM device (a\n"
"                       primary node, e.g. /dev/dri/card0): for compositors\n"
"                       that do not name theirs\n"
"      --linger-ms=MS   keep the window and its last frame for MS after\n"
"                       the last frame (e.g. for a screenshot)\n"
"      --try-acquire=TYPE\n"
"                       instead of presenting frames, commit one buffer of\n"
"                       TYPE (shm or dmabuf) with an acquire fence and\n"
"                       report the compositor's answer: the protocol\n"
"                       requires UNSUPPORTED_BUFFER for shm and acceptance\n"
"                       for dmabuf\n"
"  -h, --help           show this help and exit\n"
"\n"
"Output (stdout): a \"compositor offers:\" line, one \"sync path:\" line,\n"
"then per frame the fence's signal time and the presentation time\n"
"(wp_presentation), both relative to the commit, marked \"after the fence\"\n"
"or \"EARLY\", and a \"summary:\" line. With --gpu sim, per frame also\n"
"what opened its compute's gate and when the queue passed it.\n"
"\n"
"Environment: WAYLAND_DISPLAY, XDG_RUNTIME_DIR as for any Wayland client.\n"
"kfdsync.ko must be loaded (/dev/kfdsync_timeline).\n"
"\n"
"Exit status: 0 all frames presented after their fences (or, with\n"
"--try-acquire, the compositor answered as the protocol requires);\n"
"1 a runtime failure (no connection, protocol error, a fence or a frame\n"
"that did not come within --timeout-ms); 2 bad options or a forced path\n"
"the compositor does not support; 3 a frame was presented before its fence\n"
"signalled (the compositor did not wait).\n");
}

static int parse_args(struct client *c, int argc, char **argv)
{
	enum {
		OPT_STALL = 256, OPT_TRY_ACQUIRE, OPT_LINGER, OPT_HOLD_FRAME, OPT_HOLD_MS,
		OPT_CAPTURE, OPT_ERROR_FRAME, OPT_ERROR_MS, OPT_FULLSCREEN, OPT_DEVICE,
	};
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "path", required_argument, NULL, 'p' },
		{ "gpu", required_argument, NULL, 'g' },
		{ "hold-frame", required_argument, NULL, OPT_HOLD_FRAME },
		{ "hold-ms", required_argument, NULL, OPT_HOLD_MS },
		{ "capture", required_argument, NULL, OPT_CAPTURE },
		{ "error-frame", required_argument, NULL, OPT_ERROR_FRAME },
		{ "error-ms", required_argument, NULL, OPT_ERROR_MS },
		{ "fullscreen", no_argument, NULL, OPT_FULLSCREEN },
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "compute-ms", required_argument, NULL, 'c' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "stall-frame", required_argument, NULL, OPT_STALL },
		{ "try-acquire", required_argument, NULL, OPT_TRY_ACQUIRE },
		{ "linger-ms", required_argument, NULL, OPT_LINGER },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "n:s:p:g:c:t:h", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			if (parse_int("--frames", optarg, 1, 1000000, &c->frames))
				return -1;
			break;
		case 's': {
			char *x = strchr(optarg, 'x');

			if (!x) {
				fprintf(stderr, PROG ": --size: \"%s\" is not WxH\n",
					optarg);
				return -1;
			}
			*x = '\0';
			if (parse_int("--size width", optarg, 16, 8192, &c->width) ||
			    parse_int("--size height", x + 1, 16, 8192, &c->height))
				return -1;
			break;
		}
		case 'p': {
			bool ok = false;

			for (int i = 0; i < NUM_PATHS; i++)
				if (!strcmp(optarg, path_names[i])) {
					c->want = (enum sync_path)i;
					ok = true;
				}
			if (!ok) {
				fprintf(stderr, PROG ": --path: \"%s\" is not auto, "
					"syncobj, explicit, implicit or shm\n", optarg);
				return -1;
			}
			break;
		}
		case 'g':
			if (!strcmp(optarg, "timeline")) {
				c->gpu = PRODUCER_TIMELINE;
			} else if (!strcmp(optarg, "sim")) {
				c->gpu = PRODUCER_SIM;
			} else {
				fprintf(stderr, PROG ": --gpu: \"%s\" is not timeline or "
					"sim\n", optarg);
				return -1;
			}
			break;
		case OPT_HOLD_FRAME:
			if (parse_int("--hold-frame", optarg, 0, INT_MAX, &c->hold_frame))
				return -1;
			break;
		case OPT_HOLD_MS:
			if (parse_int("--hold-ms", optarg, 0, 600000, &c->hold_ms))
				return -1;
			break;
		case OPT_ERROR_FRAME:
			if (parse_int("--error-frame", optarg, 0, INT_MAX, &c->error_frame))
				return -1;
			break;
		case OPT_ERROR_MS:
			if (parse_int("--error-ms", optarg, 10, 60000, &c->error_ms))
				return -1;
			break;
		case OPT_CAPTURE:
			c->capture = optarg;
			break;
		case OPT_FULLSCREEN:
			c->fullscreen = true;
			break;
		case OPT_DEVICE:
			c->device = optarg;
			break;
		case 'c':
			if (parse_int("--compute-ms", optarg, 0, 600000, &c->compute_ms))
				return -1;
			break;
		case 't':
			if (parse_int("--timeout-ms", optarg, 1, 3600000, &c->timeout_ms))
				return -1;
			break;
		case OPT_STALL:
			if (parse_int("--stall-frame", optarg, 0, INT_MAX, &c->stall_frame))
				return -1;
			break;
		case OPT_LINGER:
			if (parse_int("--linger-ms", optarg, 0, 3600000, &c->linger_ms))
				return -1;
			break;
		case OPT_TRY_ACQUIRE:
			if (strcmp(optarg, "shm") && strcmp(optarg, "dmabuf")) {
				fprintf(stderr, PROG ": --try-acquire: \"%s\" is not "
					"shm or dmabuf\n", optarg);
				return -1;
			}
			c->try_acquire = strcmp(optarg, "shm") ? PATH_EXPLICIT : PATH_SHM;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument \"%s\"\nTry '" PROG
			" --help'.\n", argv[optind]);
		return -1;
	}
	if (c->error_frame >= 0 && c->gpu != PRODUCER_SIM) {
		fprintf(stderr, PROG ": --error-frame needs --gpu sim (a CPU timeline's "
			"fence cannot be made to fail on demand)\n");
		return -1;
	}
	if (c->error_frame >= 0 && c->error_ms >= c->hold_ms) {
		fprintf(stderr, PROG ": --error-frame: --error-ms (%d) must be shorter than "
			"--hold-ms (%d), or the fence signals before its watchdog\n",
			c->error_ms, c->hold_ms);
		return -1;
	}
	if (c->capture && c->hold_frame < 0) {
		fprintf(stderr, PROG ": --capture needs --hold-frame\n");
		return -1;
	}
	if ((c->hold_frame >= 0 || c->error_frame >= 0) && c->hold_ms >= c->timeout_ms) {
		fprintf(stderr, PROG ": --hold-ms (%d) must be shorter than --timeout-ms (%d)\n",
			c->hold_ms, c->timeout_ms);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct client c = {
		.frames = 10, .width = 256, .height = 256, .compute_ms = 50,
		.timeout_ms = 5000, .stall_frame = -1, .want = PATH_AUTO,
		.hold_frame = -1, .hold_ms = 3000, .error_frame = -1, .error_ms = 500,
		.drm_fd = -1, .dev_fd = -1, .submit_pipe = { -1, -1 },
	};
	int ret;

	for (int i = 0; i < NBUF; i++) {
		c.bufs[i].dmabuf_fd = c.bufs[i].release_fence = c.bufs[i].release_efd = -1;
		c.bufs[i].c = &c;
		c.bufs[i].index = i;
		c.bufs[i].last_frame = -1;
	}
	if (parse_args(&c, argc, argv))
		return EXIT_USAGE;
	c.fr = calloc((size_t)c.frames, sizeof(*c.fr));
	if (!c.fr)
		return EXIT_FAIL;
	for (int i = 0; i < c.frames; i++)
		c.fr[i].fence = c.fr[i].gate_release = c.fr[i].gate_from = -1;

	if (connect_and_bind(&c) < 0 || producer_start(&c) < 0 ||
	    (c.gpu == PRODUCER_SIM && sim_start(&c) < 0) || surface_create(&c) < 0) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (c.try_acquire != PATH_AUTO) {
		ret = try_acquire(&c);
		goto out;
	}
	ret = choose_path(&c);
	if (ret == EXIT_OK)
		ret = run_frames(&c);
	if (c.linger_ms > 0 && !wl_display_get_error(c.dpy)) {
		bool never = false;

		/* Keep the last frame on the screen, e.g. for a screenshot. */
		dispatch_until(&c, &never, c.linger_ms);
	}
out:
	/* Stop the producers first: that ends a stalled fence. */
	producer_stop(&c);
	sim_stop(&c);
	if (c.dpy && !wl_display_get_error(c.dpy))
		roundtrip(&c);
	buffers_free(&c);
	for (int i = 0; i < c.frames; i++) {
		if (c.fr[i].fence >= 0)
			close(c.fr[i].fence);
		if (c.fr[i].gate_release >= 0)
			close(c.fr[i].gate_release);
	}
	free(c.fr);
#ifdef HAVE_SYNCOBJ_PROTOCOL
	if (c.sync_surf)
		wp_linux_drm_syncobj_surface_v1_destroy(c.sync_surf);
	if (c.syncobj_mgr)
		wp_linux_drm_syncobj_manager_v1_destroy(c.syncobj_mgr);
#endif
	if (c.feedback)
		zwp_linux_dmabuf_feedback_v1_destroy(c.feedback);
	if (c.format_table)
		munmap(c.format_table, c.format_table_size);
	if (c.ssync)
		zwp_linux_surface_synchronization_v1_destroy(c.ssync);
	if (c.top)
		xdg_toplevel_destroy(c.top);
	if (c.xsurf)
		xdg_surface_destroy(c.xsurf);
	if (c.surf)
		wl_surface_destroy(c.surf);
	if (c.esync)
		zwp_linux_explicit_synchronization_v1_destroy(c.esync);
	if (c.dmabuf)
		zwp_linux_dmabuf_v1_destroy(c.dmabuf);
	if (c.pres)
		wp_presentation_destroy(c.pres);
	if (c.wm)
		xdg_wm_base_destroy(c.wm);
	if (c.shm)
		wl_shm_destroy(c.shm);
	if (c.comp)
		wl_compositor_destroy(c.comp);
	if (c.reg)
		wl_registry_destroy(c.reg);
	if (c.dpy)
		wl_display_disconnect(c.dpy);
	if (c.drm_fd >= 0)
		close(c.drm_fd);
	if (c.dev_fd >= 0)
		close(c.dev_fd);
	return ret;
}
