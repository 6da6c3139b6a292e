// SPDX-License-Identifier: MIT
/*
 * kfdsync-wayland: GPU compute output on a Wayland compositor, with the
 * explicit sync today's compositors speak (wp_linux_drm_syncobj_v1: KWin,
 * mutter, wlroots, Mesa's WSI).
 *
 * How this program works. Two buffers (dumb buffers of the compositor's
 * DRM device), each with a timeline drm_syncobj the compositor imported.
 * Frame N uses buffer N % 2 and goes round one loop:
 *
 *   compute        the queue (examples/common/compute.h: the test rig's
 *                  simulated GPU, or a KFD compute queue with --gpu real)
 *                  waits for the buffer's gate, draws frame N into it, and
 *                  signals a KFD event; kfdsync exports that signal as a
 *                  sync_file, the frame's fence;
 *   acquire point  the fence becomes point 2k+1 of the buffer's timeline
 *                  (kfdsync_syncobj_import_sync_file()); the commit names
 *                  it, and the compositor shows the frame only once it
 *                  signalled;
 *   release point  the commit also names point 2k+2, which the compositor
 *                  signals when it is done with the buffer. An eventfd says
 *                  when a fence is attached there (kfdsync_syncobj_eventfd(),
 *                  WAIT_AVAILABLE); kfdsync then writes N + 2 into the
 *                  buffer's gate when it signals (kfdsync_import_to_memory();
 *                  GATE_ERROR if it ends with an error), and frame N + 2's
 *                  compute waits for that gate on the queue (WAIT_REG_MEM).
 *
 * Nobody waits on the CPU for the GPU or for the compositor: one poll(2)
 * loop over the Wayland connection, the release eventfds and the frames'
 * fences (to report a fence that ended with an error). This is the short
 * example; tests/guest/wayland/kfdsync-wayland-client.c is the test rig's
 * oracle, with every sync path and a trace of every frame.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <wayland-client.h>

#include <kfdsync.h>

#include "common.h"
#include "compute.h"
#include "linux-dmabuf-unstable-v1-client-protocol.h"
#include "linux-drm-syncobj-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define MS 1000000LL

extern char **environ;

struct buf {
	uint32_t gem, syncobj;		/* on the compositor's device */
	void *map;
	uint64_t va;			/* the buffer as the queue addresses it */
	int dmabuf_fd;
	struct wl_buffer *wl;
	struct wp_linux_drm_syncobj_timeline_v1 *timeline;
	uint64_t point;			/* last timeline point used */
	int release_efd;		/* a fence is on the release point; -1: free */
	int fence;			/* its last frame's fence, until it ended; or -1 */
	int frame;			/* that frame */
	struct stage_event ev;		/* its frames' RELEASE_MEM signals it */
};

struct app {
	/* options */
	int frames, width, height, compute_ms, hold_frame, hold_ms, error_frame, error_ms;
	int timeout_ms;
	bool fullscreen;
	const char *capture;
	enum gpu_kind gpu_kind;

	struct wl_display *dpy;
	struct wl_compositor *comp;
	struct xdg_wm_base *wm;
	struct zwp_linux_dmabuf_v1 *dmabuf;
	struct wp_linux_drm_syncobj_manager_v1 *syncobj_mgr;
	struct wl_surface *surf;
	struct wp_linux_drm_syncobj_surface_v1 *sync_surf;
	bool configured, closed, frame_done;
	dev_t main_dev;
	bool have_main_dev;

	int dev_fd;			/* the compositor's DRM device */
	struct kfdsync_ctx *ctx;
	struct gpu *gpu;
	uint64_t *gates;		/* one per buffer, written by kfdsync */
	uint64_t gates_va;
	struct buf bufs[2];
	int failed;			/* a frame whose fence ended with an error, or -1 */
	bool kfd_open;
};

/* ---- Wayland: globals, the window, the device ---- */

static void ping(void *data, struct xdg_wm_base *wm, uint32_t serial)
{
	(void)data;
	xdg_wm_base_pong(wm, serial);
}

static const struct xdg_wm_base_listener wm_listener = { .ping = ping };

/* zwp_linux_dmabuf_v1 v4's default feedback: only its main device matters here. */
static void fb_main_device(void *data, struct zwp_linux_dmabuf_feedback_v1 *f,
			   struct wl_array *dev)
{
	struct app *a = data;

	(void)f;
	if (dev->size == sizeof(dev_t)) {
		memcpy(&a->main_dev, dev->data, sizeof(dev_t));
		a->have_main_dev = true;
	}
}

static void fb_event(void *data, struct zwp_linux_dmabuf_feedback_v1 *f)
{
	(void)data; (void)f;
}

static void fb_table(void *data, struct zwp_linux_dmabuf_feedback_v1 *f, int32_t fd,
		     uint32_t size)
{
	(void)data; (void)f; (void)size;
	close(fd);
}

static void fb_array(void *data, struct zwp_linux_dmabuf_feedback_v1 *f, struct wl_array *a)
{
	(void)data; (void)f; (void)a;
}

static void fb_flags(void *data, struct zwp_linux_dmabuf_feedback_v1 *f, uint32_t flags)
{
	(void)data; (void)f; (void)flags;
}

static const struct zwp_linux_dmabuf_feedback_v1_listener feedback_listener = {
	.done = fb_event, .format_table = fb_table, .main_device = fb_main_device,
	.tranche_done = fb_event, .tranche_target_device = fb_array,
	.tranche_formats = fb_array, .tranche_flags = fb_flags,
};

static void global(void *data, struct wl_registry *reg, uint32_t name, const char *iface,
		   uint32_t version)
{
	struct app *a = data;

	if (!strcmp(iface, wl_compositor_interface.name)) {
		a->comp = wl_registry_bind(reg, name, &wl_compositor_interface, 4);
	} else if (!strcmp(iface, xdg_wm_base_interface.name)) {
		a->wm = wl_registry_bind(reg, name, &xdg_wm_base_interface, 1);
		xdg_wm_base_add_listener(a->wm, &wm_listener, a);
	} else if (!strcmp(iface, zwp_linux_dmabuf_v1_interface.name) && version >= 4) {
		a->dmabuf = wl_registry_bind(reg, name, &zwp_linux_dmabuf_v1_interface, 4);
		zwp_linux_dmabuf_feedback_v1_add_listener(
			zwp_linux_dmabuf_v1_get_default_feedback(a->dmabuf), &feedback_listener, a);
	} else if (!strcmp(iface, wp_linux_drm_syncobj_manager_v1_interface.name)) {
		a->syncobj_mgr = wl_registry_bind(reg, name,
						  &wp_linux_drm_syncobj_manager_v1_interface, 1);
	}
}

static void global_remove(void *data, struct wl_registry *reg, uint32_t name)
{
	(void)data; (void)reg; (void)name;
}

static const struct wl_registry_listener registry_listener = { global, global_remove };

static void surface_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	struct app *a = data;

	xdg_surface_ack_configure(xs, serial);
	a->configured = true;
}

static const struct xdg_surface_listener xdg_surface_listener = { surface_configure };

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h,
			       struct wl_array *states)
{
	/* The buffers keep their --size: the compositor may scale them. */
	(void)data; (void)t; (void)w; (void)h; (void)states;
}

static void toplevel_close(void *data, struct xdg_toplevel *t)
{
	(void)t;
	((struct app *)data)->closed = true;
}

static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure, .close = toplevel_close,
};

static void frame_done(void *data, struct wl_callback *cb, uint32_t ms)
{
	(void)ms;
	((struct app *)data)->frame_done = true;
	wl_callback_destroy(cb);
}

static const struct wl_callback_listener frame_listener = { frame_done };

/*
 * The compositor's main device, by its primary node if it has one: dumb
 * buffers are made there only. It must have timeline syncobjs.
 */
static int open_device(struct app *a)
{
	drmDevicePtr dev = NULL;
	uint64_t cap = 0;

	if (!a->have_main_dev || drmGetDeviceFromDevId(a->main_dev, 0, &dev)) {
		err("the compositor names no DRM device of this machine (dmabuf v4 feedback)");
		return -ENODEV;
	}
	for (int i = 0; i < 2 && a->dev_fd < 0; i++) {
		int type = i ? DRM_NODE_RENDER : DRM_NODE_PRIMARY;

		if (dev->available_nodes & (1 << type))
			a->dev_fd = open(dev->nodes[type], O_RDWR | O_CLOEXEC);
	}
	drmFreeDevice(&dev);
	if (a->dev_fd < 0 || drmGetCap(a->dev_fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) || !cap) {
		err("the compositor's DRM device %s", a->dev_fd < 0 ? "cannot be opened" :
		    "has no timeline syncobjs");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * A buffer: a dumb buffer (a few rows more than the picture: Mesa's
 * software rasteriser may read a little past the last one) the compositor
 * imports as a dma-buf, and its timeline.
 */
static int buffer_new(struct app *a, struct buf *b)
{
	struct drm_mode_create_dumb dumb = {
		.width = (uint32_t)a->width, .height = (uint32_t)a->height + 16, .bpp = 32,
	};
	struct drm_mode_map_dumb map = { 0 };
	struct zwp_linux_buffer_params_v1 *params;
	int fd;

	if (drmIoctl(a->dev_fd, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return -errno;
	b->gem = dumb.handle;
	map.handle = dumb.handle;
	if (drmIoctl(a->dev_fd, DRM_IOCTL_MODE_MAP_DUMB, &map))
		return -errno;
	b->map = mmap(NULL, dumb.size, PROT_READ | PROT_WRITE, MAP_SHARED, a->dev_fd,
		      (off_t)map.offset);
	if (b->map == MAP_FAILED || drmPrimeHandleToFD(a->dev_fd, dumb.handle,
						       DRM_CLOEXEC | DRM_RDWR, &b->dmabuf_fd))
		return -errno;
	params = zwp_linux_dmabuf_v1_create_params(a->dmabuf);
	zwp_linux_buffer_params_v1_add(params, b->dmabuf_fd, 0, 0, dumb.pitch,
				       DRM_FORMAT_MOD_LINEAR >> 32,
				       DRM_FORMAT_MOD_LINEAR & 0xffffffff);
	b->wl = zwp_linux_buffer_params_v1_create_immed(params, a->width, a->height,
							DRM_FORMAT_XRGB8888, 0);
	zwp_linux_buffer_params_v1_destroy(params);
	/* The compositor takes its own reference to the timeline; ours closes. */
	if (drmSyncobjCreate(a->dev_fd, 0, &b->syncobj) ||
	    drmSyncobjHandleToFD(a->dev_fd, b->syncobj, &fd))
		return -errno;
	b->timeline = wp_linux_drm_syncobj_manager_v1_import_timeline(a->syncobj_mgr, fd);
	close(fd);
	return gpu_map_buffer(a->gpu, b->map, b->dmabuf_fd, &b->va);
}

/* ---- the loop ---- */

/* Run --capture NAME (a test's screenshot), and wait for it. */
static void capture(const struct app *a, const char *fmt, int n)
{
	char name[64];
	char *argv[] = { (char *)a->capture, name, NULL };
	pid_t pid;
	int st;

	snprintf(name, sizeof(name), fmt, n);
	fflush(stdout);
	if (posix_spawnp(&pid, a->capture, NULL, NULL, argv, environ) == 0)
		waitpid(pid, &st, 0);
}

/*
 * Dispatch the compositor's events; wait up to @ms for them, the release
 * eventfds or the fences. 0, or -errno when the connection failed.
 */
static int dispatch(struct app *a, int ms)
{
	struct pollfd p[5] = { { .fd = wl_display_get_fd(a->dpy), .events = POLLIN } };
	int n = 1;

	for (int i = 0; i < 2; i++) {
		/* A release is of use once the buffer's last fence ended (released()). */
		if (a->bufs[i].fence < 0)
			p[n++] = (struct pollfd){ .fd = a->bufs[i].release_efd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = a->bufs[i].fence, .events = POLLIN };
	}
	while (wl_display_prepare_read(a->dpy))
		wl_display_dispatch_pending(a->dpy);
	wl_display_flush(a->dpy);
	if (poll(p, (nfds_t)n, ms) > 0 && (p[0].revents & POLLIN))
		wl_display_read_events(a->dpy);
	else
		wl_display_cancel_read(a->dpy);
	if (wl_display_dispatch_pending(a->dpy) < 0)
		return -wl_display_get_error(a->dpy);
	/* A fence that ended: an error fails the frame, the compositor never shows it. */
	for (int i = 0; i < 2; i++) {
		struct buf *b = &a->bufs[i];
		int32_t st;

		if (b->fence < 0 || kfdsync_sync_file_wait_status(b->fence, 0, &st))
			continue;
		if (st < 0 && a->failed < 0) {
			printf("frame %d: its fence ended with an error: %s\n", b->frame,
			       strerror(-st));
			a->failed = b->frame;
		}
		close(b->fence);
		b->fence = -1;
	}
	return 0;
}

/* Wait until @done, dispatching; -ETIME after --timeout-ms. */
static int wait_for(struct app *a, bool (*done)(struct app *a, struct buf *b), struct buf *b)
{
	int64_t end = now_ns() + a->timeout_ms * MS;
	int ret = 0;

	while (!ret && !done(a, b) && !a->closed)
		ret = now_ns() > end ? -ETIME : dispatch(a, 50);
	return ret;
}

/*
 * May the buffer's next frame be computed? Its last frame's fence ended
 * (so that the next signal of its event is the new frame's), and the
 * compositor's release point of it has a fence (the gate's).
 */
static bool released(struct app *a, struct buf *b)
{
	uint64_t v;

	(void)a;
	if (b->fence >= 0)
		return false;
	return b->release_efd < 0 || read(b->release_efd, &v, sizeof(v)) == sizeof(v);
}

static bool fence_ended(struct app *a, struct buf *b)
{
	(void)a;
	return b->fence < 0;
}

static bool shown(struct app *a, struct buf *b)
{
	(void)b;
	return a->frame_done;
}

struct fill_arg {
	const struct app *a;
	const struct buf *b;
	uint32_t colour;
};

/* Frame N's picture: the whole buffer in its colour (one DMA fill). */
static void fill(struct pm4_buf *pb, void *arg)
{
	const struct fill_arg *f = arg;

	pm4_dma_fill(pb, f->b->va, f->colour, (uint64_t)f->a->width * f->a->height * 4);
}

static const uint32_t colours[] = { 0x00d03030, 0x0030a040, 0x002050d0, 0x00d0a020 };

static int frame(struct app *a, int n)
{
	struct buf *b = &a->bufs[n % 2];
	struct fill_arg f = { a, b, colours[n % 4] };
	struct stage_job job = {
		.n = (unsigned int)n, .draw = fill, .arg = &f,
		.gate_va = a->gates_va + (uint64_t)(n % 2) * 8, .gate_min = (uint64_t)n,
		.busy_ms = (unsigned int)(n == a->hold_frame || n == a->error_frame ?
					  a->hold_ms : a->compute_ms),
		.watchdog_ns = n == a->error_frame ? a->error_ms * MS : 2 * a->timeout_ms * MS,
	};
	uint64_t acquire, release;
	int ret, fence;

	/*
	 * The release point of the buffer's last frame has a fence: kfdsync
	 * opens the gate with it, the queue waits for the gate.
	 */
	ret = wait_for(a, released, b);
	if (ret || a->closed)
		return ret ? ret : -EPIPE;
	if (b->release_efd >= 0) {
		close(b->release_efd);
		b->release_efd = -1;
		fence = kfdsync_syncobj_export_sync_file(a->dev_fd, b->syncobj, b->point);
		ret = fence < 0 ? fence : kfdsync_import_to_memory(a->ctx, fence, &a->gates[n % 2],
								   (uint64_t)n, GATE_ERROR);
		if (fence >= 0)
			close(fence);	/* the import holds its own reference */
	} else {
		a->gates[n % 2] = (uint64_t)n;	/* never used: open */
	}
	if (ret)
		return ret;
	/* The compute: its fence becomes the acquire point. */
	b->fence = stage_submit(a->gpu, a->ctx, &b->ev, &job);
	if (b->fence < 0)
		return b->fence;
	b->frame = n;
	acquire = ++b->point;
	release = ++b->point;
	ret = kfdsync_syncobj_import_sync_file(a->dev_fd, b->syncobj, acquire, b->fence);
	if (ret)
		return ret;
	wp_linux_drm_syncobj_surface_v1_set_acquire_point(a->sync_surf, b->timeline,
							  acquire >> 32, acquire & 0xffffffff);
	wp_linux_drm_syncobj_surface_v1_set_release_point(a->sync_surf, b->timeline,
							  release >> 32, release & 0xffffffff);
	wl_surface_attach(a->surf, b->wl, 0, 0);
	wl_surface_damage_buffer(a->surf, 0, 0, a->width, a->height);
	a->frame_done = false;
	wl_callback_add_listener(wl_surface_frame(a->surf), &frame_listener, a);
	wl_surface_commit(a->surf);
	b->release_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ret = kfdsync_syncobj_eventfd(a->dev_fd, b->syncobj, release,
				      KFDSYNC_SYNCOBJ_WAIT_AVAILABLE, b->release_efd);
	if (ret)
		return ret;
	printf("frame %d: committed on buffer %d, acquire point %lu\n", n, n % 2,
	       (unsigned long)acquire);
	if (n == a->hold_frame && a->capture) {
		/* Drawn, fence pending: the compositor must still show frame N - 1. */
		wl_display_flush(a->dpy);
		gpu_wait_pos(a->gpu, job.draw_end, a->timeout_ms);
		if (kfdsync_sync_file_wait_status(b->fence, 0, NULL) != -ETIME)
			return 0;
		capture(a, "frame%d-pending", n);
		if (kfdsync_sync_file_wait_status(b->fence, 0, NULL) == -ETIME)
			printf("frame %d pending: captured while its fence was pending\n", n);
		ret = wait_for(a, fence_ended, b);
		ret = ret ? ret : wait_for(a, shown, b);
		if (!ret && a->failed < 0)
			capture(a, "frame%d-shown", n);
	}
	return ret;
}

/* ---- setup, options ---- */

static int setup(struct app *a)
{
	struct xdg_surface *xs;
	struct xdg_toplevel *top;
	char *name;
	int ret;

	a->dpy = wl_display_connect(NULL);
	if (!a->dpy) {
		err("cannot connect to the Wayland compositor (WAYLAND_DISPLAY)");
		return -ENOENT;
	}
	wl_registry_add_listener(wl_display_get_registry(a->dpy), &registry_listener, a);
	wl_display_roundtrip(a->dpy);
	wl_display_roundtrip(a->dpy);	/* the feedback's events */
	if (!a->comp || !a->wm || !a->dmabuf || !a->syncobj_mgr) {
		err("the compositor does not offer %s: this example needs explicit sync with "
		    "wp_linux_drm_syncobj_v1 (weston speaks zwp_linux_explicit_synchronization_v1, "
		    "which kfdsync's test client covers)", !a->syncobj_mgr ?
		    "wp_linux_drm_syncobj_manager_v1" : "wl_compositor, xdg_wm_base and "
		    "zwp_linux_dmabuf_v1 version 4");
		return -EOPNOTSUPP;
	}
	ret = open_device(a);
	if (ret)
		return ret;
	ret = kfd_open(a->gpu_kind);
	if (ret)
		return ret;
	a->kfd_open = true;
	ret = kfdsync_ctx_new(&a->ctx);
	if (ret) {
		err("cannot open a kfdsync context: %s", strerror(-ret));
		return ret;
	}
	ret = gpu_open(&a->gpu, a->gpu_kind);
	if (ret)
		return ret;
	a->gates = aligned_alloc(4096, 4096);
	if (!a->gates)
		return -ENOMEM;
	memset(a->gates, 0, 4096);
	ret = gpu_map_memory(a->gpu, a->gates, 4096, &a->gates_va);
	for (int i = 0; i < 2 && !ret; i++) {
		ret = stage_event_new(a->ctx, &a->bufs[i].ev);
		ret = ret ? ret : buffer_new(a, &a->bufs[i]);
	}
	if (ret) {
		err("cannot make the buffers: %s", strerror(-ret));
		return ret;
	}
	a->surf = wl_compositor_create_surface(a->comp);
	a->sync_surf = wp_linux_drm_syncobj_manager_v1_get_surface(a->syncobj_mgr, a->surf);
	xs = xdg_wm_base_get_xdg_surface(a->wm, a->surf);
	xdg_surface_add_listener(xs, &xdg_surface_listener, a);
	top = xdg_surface_get_toplevel(xs);
	xdg_toplevel_add_listener(top, &toplevel_listener, a);
	xdg_toplevel_set_title(top, "kfdsync-wayland");
	if (a->fullscreen)
		xdg_toplevel_set_fullscreen(top, NULL);
	wl_surface_commit(a->surf);
	while (!a->configured && wl_display_dispatch(a->dpy) >= 0)
		;
	name = drmGetDeviceNameFromFd2(a->dev_fd);
	printf("wp_linux_drm_syncobj_v1 on %s: a timeline per buffer; compute: %s\n",
	       name ? name : "?", gpu_name(a->gpu));
	free(name);
	return a->configured ? 0 : -EPIPE;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: kfdsync-wayland [--frames N] [--compute-ms MS] [--size WxH] "
		"[--fullscreen]\n"
		"    [--gpu sim|real] [--timeout-ms MS] [--hold-frame N --hold-ms MS "
		"[--capture CMD]]\n    [--error-frame N --error-ms MS]\n"
		"Compute frames (a simulated GPU, or --gpu real: a KFD compute queue, not tested\n"
		"on hardware) and show them on a Wayland compositor with wp_linux_drm_syncobj_v1:\n"
		"each frame's fence is its acquire point, the compositor's release point gates\n"
		"the compute of the buffer's next frame. --hold-frame's compute takes --hold-ms\n"
		"(its pixels already drawn), and --capture CMD runs 'CMD frameN-pending' then\n"
		"'CMD frameN-shown'. --error-frame's fence ends by its watchdog (--error-ms).\n"
		"Exit status: 0 every frame shown, 1 a frame failed, 2 usage or unsupported.\n");
}

static int parse(struct app *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "frames", 1, NULL, 'f' }, { "compute-ms", 1, NULL, 'c' },
		{ "size", 1, NULL, 's' }, { "fullscreen", 0, NULL, 'F' },
		{ "gpu", 1, NULL, 'g' }, { "timeout-ms", 1, NULL, 't' },
		{ "hold-frame", 1, NULL, 'H' }, { "hold-ms", 1, NULL, 'h' },
		{ "capture", 1, NULL, 'C' }, { "error-frame", 1, NULL, 'E' },
		{ "error-ms", 1, NULL, 'e' }, { "help", 0, NULL, '?' }, { 0 },
	};
	int c, ret = 0;

	while (!ret && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': ret = parse_int("--frames", optarg, 1, 1000000, &a->frames); break;
		case 'c': ret = parse_int("--compute-ms", optarg, 0, 60000, &a->compute_ms); break;
		case 'F': a->fullscreen = true; break;
		case 't': ret = parse_int("--timeout-ms", optarg, 1, 600000, &a->timeout_ms); break;
		case 'H': ret = parse_int("--hold-frame", optarg, 0, 1000000, &a->hold_frame); break;
		case 'h': ret = parse_int("--hold-ms", optarg, 0, 600000, &a->hold_ms); break;
		case 'C': a->capture = optarg; break;
		case 'E': ret = parse_int("--error-frame", optarg, 0, 1000000, &a->error_frame); break;
		case 'e': ret = parse_int("--error-ms", optarg, 1, 600000, &a->error_ms); break;
		case 's':
			if (sscanf(optarg, "%dx%d", &a->width, &a->height) != 2 || a->width < 8 ||
			    a->height < 8 || a->width > 8192 || a->height > 8192) {
				err("--size: expected WxH, 8 to 8192 each, got \"%s\"", optarg);
				ret = -1;
			}
			break;
		case 'g':
			a->gpu_kind = !strcmp(optarg, "real") ? GPU_REAL : GPU_SIM;
			if (strcmp(optarg, "real") && strcmp(optarg, "sim")) {
				err("--gpu: sim or real, not \"%s\"", optarg);
				ret = -1;
			}
			break;
		default:
			usage(c == '?' && !strcmp(argv[optind - 1], "--help") ? stdout : stderr);
			return c == '?' && !strcmp(argv[optind - 1], "--help") ? 0 : -1;
		}
	}
	if (!ret && optind < argc) {
		usage(stderr);
		ret = -1;
	}
	return ret ? -1 : 1;
}

int main(int argc, char **argv)
{
	struct app a = {
		.frames = 60, .width = 640, .height = 480, .compute_ms = 8, .hold_frame = -1,
		.hold_ms = 3000, .error_frame = -1, .error_ms = 500, .timeout_ms = 30000,
		.dev_fd = -1, .failed = -1,
		.bufs = { { .release_efd = -1, .fence = -1, .dmabuf_fd = -1 },
			  { .release_efd = -1, .fence = -1, .dmabuf_fd = -1 } },
	};
	int ret = parse(&a, argc, argv), status = 0;

	if (ret <= 0)
		return ret ? 2 : 0;
	ret = setup(&a);
	if (ret)
		status = ret == -EOPNOTSUPP ? 2 : 1;
	for (int n = 0; !status && n < a.frames && a.failed < 0; n++) {
		ret = frame(&a, n);
		if (ret) {
			err("frame %d: %s", n, strerror(-ret));
			status = 1;
		}
	}
	/* The last frames' fences end (or fail) before the summary. */
	while (!status && (a.bufs[0].fence >= 0 || a.bufs[1].fence >= 0) && a.failed < 0)
		status = wait_for(&a, fence_ended, &a.bufs[a.bufs[0].fence >= 0 ? 0 : 1]) ? 1 : 0;
	if (!status && a.failed >= 0)
		status = 1;
	printf("summary: %d frames, %s\n", a.frames, status ? "failed" : "every fence signalled");
	/* The queue stops first (also inside a wait); freeing the context ends what is pending. */
	gpu_close(a.gpu);
	kfdsync_ctx_free(a.ctx);
	for (int i = 0; i < 2; i++) {
		struct buf *b = &a.bufs[i];

		kfd_signal_event_destroy(&b->ev.event);
		if (b->fence >= 0)
			close(b->fence);
		if (b->release_efd >= 0)
			close(b->release_efd);
		if (b->dmabuf_fd >= 0)
			close(b->dmabuf_fd);
	}
	free(a.gates);
	if (a.kfd_open)
		kfd_close();
	if (a.dev_fd >= 0)
		close(a.dev_fd);
	if (a.dpy)
		wl_display_disconnect(a.dpy);
	return status;
}
