// SPDX-License-Identifier: MIT
/*
 * kfdsync-wayland-client: present compute output on a Wayland compositor,
 * gated by the producer's fence.
 *
 * Each frame a producer (the "compute" stand-in: a kfdsync CPU timeline
 * advanced by a thread after --compute-ms) owns a sync_file that signals
 * when the frame's pixels are final. The client hands that fence to the
 * compositor in the best way the compositor understands:
 *
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
#include <sys/ioctl.h>
#include <sys/mman.h>
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

#include <kfdsync.h>

#define PROG "kfdsync-wayland-client"
#define NBUF 2

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* runtime failure: fence, protocol, timeout */
	EXIT_USAGE = 2,		/* bad options or the forced path is unavailable */
	EXIT_EARLY = 3,		/* a frame was presented before its fence */
};

enum sync_path { PATH_AUTO, PATH_EXPLICIT, PATH_IMPLICIT, PATH_SHM };

static const char *const path_names[] = {
	[PATH_AUTO] = "auto", [PATH_EXPLICIT] = "explicit",
	[PATH_IMPLICIT] = "implicit", [PATH_SHM] = "shm",
};

struct client;

struct buf {
	struct client *c;
	struct wl_buffer *wl;
	void *map;
	size_t size;
	uint32_t stride;
	int dmabuf_fd;		/* -1 for shm */
	int release_fence;	/* explicit path: fenced_release, or -1 */
	bool busy;
};

struct frame {
	int fence;		/* the frame's acquire sync_file */
	uint64_t commit_ns;	/* CLOCK_MONOTONIC */
	uint64_t signal_ns;	/* the fence's own timestamp */
	uint64_t presented_ns;	/* converted to CLOCK_MONOTONIC */
	bool presented, discarded, pending_at_present;
};

struct client {
	/* options */
	int frames, width, height, compute_ms, timeout_ms, stall_frame, linger_ms;
	enum sync_path want;
	enum sync_path try_acquire;	/* PATH_AUTO: not trying */
	bool verbose;

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

	struct wl_surface *surf;
	struct xdg_surface *xsurf;
	struct xdg_toplevel *top;
	struct zwp_linux_surface_synchronization_v1 *ssync;
	bool configured, closed, recommit;

	enum sync_path path;
	const char *allocator;	/* "vgem", "udmabuf" or "shm" */
	int drm_fd;
	struct buf bufs[NBUF];
	struct frame *fr;

	/* producer: a thread advances the timeline once per submitted frame */
	struct kfdsync_timeline *tl;
	pthread_t thread;
	bool thread_started;
	int submit_pipe[2];

	/* dmabuf params result */
	int params_state;	/* 0 waiting, 1 created, -1 failed */
	struct wl_buffer *params_buffer;
};

static uint64_t now_ns(clockid_t clk)
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
		c->dmabuf = wl_registry_bind(reg, name,
					     &zwp_linux_dmabuf_v1_interface, 3);
		zwp_linux_dmabuf_v1_add_listener(c->dmabuf, &dmabuf_listener, c);
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
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) +
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
		now = now_ns(CLOCK_MONOTONIC);
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

/* A dmabuf of c->width x c->height XRGB8888, from vgem or udmabuf. */
static int dmabuf_alloc(struct client *c, struct buf *b)
{
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

/* Allocate a dmabuf and have the compositor import it; 0 or -errno. */
static int dmabuf_buffer_new(struct client *c, struct buf *b, const char **why)
{
	struct zwp_linux_buffer_params_v1 *params;
	uint64_t mod = c->linear_ok ? DRM_FORMAT_MOD_LINEAR : DRM_FORMAT_MOD_INVALID;
	int ret = dmabuf_alloc(c, b);

	if (ret < 0) {
		*why = "no dmabuf allocator (neither vgem nor /dev/udmabuf)";
		return ret;
	}
	params = zwp_linux_dmabuf_v1_create_params(c->dmabuf);
	zwp_linux_buffer_params_v1_add_listener(params, &params_listener, c);
	zwp_linux_buffer_params_v1_add(params, b->dmabuf_fd, 0, 0, b->stride,
				       (uint32_t)(mod >> 32),
				       (uint32_t)(mod & 0xffffffff));
	c->params_state = 0;
	zwp_linux_buffer_params_v1_create(params, c->width, c->height,
					  DRM_FORMAT_XRGB8888, 0);
	while (c->params_state == 0)
		if (roundtrip(c) < 0) {
			report_display_error(c, "dmabuf import");
			zwp_linux_buffer_params_v1_destroy(params);
			return -EPROTO;
		}
	zwp_linux_buffer_params_v1_destroy(params);
	if (c->params_state < 0) {
		*why = "the compositor could not import the dmabuf";
		return -EINVAL;
	}
	b->wl = c->params_buffer;
	return 0;
}

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
	if (b->wl)
		wl_buffer_destroy(b->wl);
	if (b->map)
		munmap(b->map, b->size);
	if (b->dmabuf_fd >= 0)
		close(b->dmabuf_fd);
	if (b->release_fence >= 0)
		close(b->release_fence);
	memset(b, 0, sizeof(*b));
	b->dmabuf_fd = b->release_fence = -1;
}

static void buffers_free(struct client *c)
{
	for (int i = 0; i < NBUF; i++)
		buffer_free(&c->bufs[i]);
}

/* The picture of frame n: a colour per frame and a bar that moves. */
static void fill(struct client *c, struct buf *b, int n)
{
	static const uint32_t colours[] = {
		0x00d03030, 0x0030a040, 0x002050d0, 0x00d0a020, 0x00a030c0,
		0x0020b0b0,
	};
	uint32_t bg = colours[n % 6];
	int bar_w = c->width / 8 > 0 ? c->width / 8 : 1;
	int bar_x = (int)((int64_t)n * (c->width - bar_w) /
			  (c->frames > 1 ? c->frames - 1 : 1));
	struct dma_buf_sync sync = {
		.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE,
	};

	if (b->dmabuf_fd >= 0)
		ioctl(b->dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync);
	for (int y = 0; y < c->height; y++) {
		uint32_t *row = (uint32_t *)((char *)b->map + (size_t)y * b->stride);

		for (int x = 0; x < c->width; x++) {
			bool bar = x >= bar_x && x < bar_x + bar_w;
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
	uint64_t p_now = now_ns(clk), m_now = now_ns(CLOCK_MONOTONIC);

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
	       "wp_presentation %s\n",
	       c->dmabuf ? "yes" : "no", c->esync ? "yes" : "no",
	       c->shm ? "yes" : "no", c->pres ? "yes" : "no");
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

/* Pick the path and make its buffers. Prints the one "sync path:" line. */
static int choose_path(struct client *c)
{
	const char *why_not_dmabuf = NULL, *why_not_explicit = NULL;
	bool dmabuf_ok = false;
	int ret;

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
	uint64_t deadline = now_ns(CLOCK_MONOTONIC) +
			    (uint64_t)c->timeout_ms * 1000000ull;

	while (!(*out = free_buffer(c))) {
		bool f = false;
		int ret = dispatch_until(c, &f, 20);

		if (ret != -ETIME && ret < 0)
			return ret;
		if (any_buffer_free(c))
			continue;
		if (now_ns(CLOCK_MONOTONIC) > deadline)
			return -ETIME;
	}
	if ((*out)->release_fence >= 0) {
		int ret = kfdsync_sync_file_wait((*out)->release_fence,
						 (int64_t)c->timeout_ms * 1000000);

		close((*out)->release_fence);
		(*out)->release_fence = -1;
		if (ret < 0)
			return ret;
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

		switch (c->path) {
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
		fr->commit_ns = now_ns(CLOCK_MONOTONIC);
		wl_surface_commit(c->surf);

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
				"an error: %s\n", n, strerror(-fs.status));
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
"The producer stands in for a GPU compute queue: it writes the frame, and\n"
"the frame's fence, a kfdsync CPU timeline point (/dev/kfdsync_timeline),\n"
"signals --compute-ms later. The fence reaches the compositor by the first\n"
"of these paths that works (or the one --path forces):\n"
"\n"
"  explicit  zwp_linux_explicit_synchronization_v1 with a dmabuf buffer:\n"
"            the fence is the surface's acquire fence; the buffer comes\n"
"            back through zwp_linux_buffer_release_v1.\n"
"  implicit  zwp_linux_dmabuf_v1 only: the fence is attached to the\n"
"            dmabuf (DMA_BUF_IOCTL_IMPORT_SYNC_FILE, Linux 6.0+), which\n"
"            compositors relying on implicit sync wait for.\n"
"  shm       wl_shm: the client waits for the fence (at most --timeout-ms)\n"
"            before it commits.\n"
"\n"
"dmabufs come from vgem (DRM_IOCTL_MODE_CREATE_DUMB and PRIME export) or,\n"
"without vgem, from /dev/udmabuf.\n"
"\n"
"Options:\n"
"  -n, --frames=N       frames to present (default 10)\n"
"  -s, --size=WxH       buffer size in pixels (default 256x256)\n"
"  -p, --path=PATH      auto (default), explicit, implicit or shm; a\n"
"                       forced path the compositor cannot do is an error\n"
"  -c, --compute-ms=MS  time from a frame's commit until its fence\n"
"                       signals (default 50)\n"
"  -t, --timeout-ms=MS  longest wait for a fence, a buffer or a\n"
"                       presentation (default 5000)\n"
"      --stall-frame=N  the fence of frame N (from 0) never signals: shows\n"
"                       what the compositor and the client do then\n"
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
"or \"EARLY\", and a \"summary:\" line.\n"
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

static int parse_int(const char *opt, const char *s, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, PROG ": %s: \"%s\" is not a number from %d to %d\n",
			opt, s, min, max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_args(struct client *c, int argc, char **argv)
{
	enum { OPT_STALL = 256, OPT_TRY_ACQUIRE, OPT_LINGER };
	static const struct option opts[] = {
		{ "frames", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "path", required_argument, NULL, 'p' },
		{ "compute-ms", required_argument, NULL, 'c' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{ "stall-frame", required_argument, NULL, OPT_STALL },
		{ "try-acquire", required_argument, NULL, OPT_TRY_ACQUIRE },
		{ "linger-ms", required_argument, NULL, OPT_LINGER },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "n:s:p:c:t:h", opts, NULL)) != -1) {
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

			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, path_names[i])) {
					c->want = (enum sync_path)i;
					ok = true;
				}
			if (!ok) {
				fprintf(stderr, PROG ": --path: \"%s\" is not auto, "
					"explicit, implicit or shm\n", optarg);
				return -1;
			}
			break;
		}
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
	return 0;
}

int main(int argc, char **argv)
{
	struct client c = {
		.frames = 10, .width = 256, .height = 256, .compute_ms = 50,
		.timeout_ms = 5000, .stall_frame = -1, .want = PATH_AUTO,
		.drm_fd = -1, .submit_pipe = { -1, -1 },
	};
	int ret;

	for (int i = 0; i < NBUF; i++)
		c.bufs[i].dmabuf_fd = c.bufs[i].release_fence = -1;
	if (parse_args(&c, argc, argv))
		return EXIT_USAGE;
	c.fr = calloc((size_t)c.frames, sizeof(*c.fr));
	if (!c.fr)
		return EXIT_FAIL;
	for (int i = 0; i < c.frames; i++)
		c.fr[i].fence = -1;

	if (connect_and_bind(&c) < 0 || producer_start(&c) < 0 ||
	    surface_create(&c) < 0) {
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
	/* Stop the producer first: it ends a stalled fence. */
	producer_stop(&c);
	if (c.dpy && !wl_display_get_error(c.dpy))
		roundtrip(&c);
	buffers_free(&c);
	for (int i = 0; i < c.frames; i++)
		if (c.fr[i].fence >= 0)
			close(c.fr[i].fence);
	free(c.fr);
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
	return ret;
}
