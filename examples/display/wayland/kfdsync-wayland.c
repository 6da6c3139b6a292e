// SPDX-License-Identifier: MIT
/*
 * kfdsync-wayland: GPU compute output on a Wayland compositor with
 * wp_linux_drm_syncobj_v1 (KWin, mutter, wlroots, Mesa's WSI), from one event
 * loop. Two buffers, each with a timeline syncobj; frame N uses buffer N % 2:
 *   compute   the queue (examples/common/compute.h) waits for the buffer's
 *             gate, draws and signals a KFD event: kfdsync exports that
 *             signal as the frame's fence, the acquire point of the commit;
 *   release   the next point, signalled when the compositor is done with the
 *             buffer: kfdsync then writes N + 2 into the buffer's gate.
 *
 * No CPU wait for the GPU or the compositor: one poll(2) serves the Wayland
 * connection, kfdsync's poll fd (kfdsync_ctx_dispatch() does the library's
 * work in the dispatch form), the release eventfds and the fences.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <wayland-client.h>

#include <kfdsync.h>

#include "common.h"
#include "compute.h"
#include "linux-dmabuf-unstable-v1-client-protocol.h"
#include "linux-drm-syncobj-v1-client-protocol.h"
#include "xdg-shell-client-protocol.h"

#define MS 1000000LL
#define W 640				/* the buffers; the compositor may scale them */
#define H 480

/* Per buffer the frame its next compute waits for, written by kfdsync (frames 0, 1: open). */
static uint64_t gates[4096 / 8] __attribute__((aligned(4096))) = { 0, 1 };

struct buf {
	uint32_t syncobj;		/* on the compositor's device */
	uint64_t va;			/* the buffer as the queue addresses it */
	struct wl_buffer *wl;
	struct wp_linux_drm_syncobj_timeline_v1 *timeline;
	uint64_t point;			/* last timeline point used */
	int release_efd;		/* a fence is on the release point; -1: none asked */
	int fence;			/* its last frame's fence, until it ended; or -1 */
	int frame;			/* that frame */
	struct stage_event ev;		/* its frames' RELEASE_MEM signals it */
};

struct app {
	int frames, compute_ms, timeout_ms;	/* the options */
	enum gpu_kind gpu_kind;
	struct wl_display *dpy;
	struct wl_compositor *comp;
	struct xdg_wm_base *wm;
	struct zwp_linux_dmabuf_v1 *dmabuf;
	struct wp_linux_drm_syncobj_manager_v1 *syncobj_mgr;
	struct wl_surface *surf;
	struct wp_linux_drm_syncobj_surface_v1 *sync_surf;
	bool fullscreen, configured, closed;
	dev_t main_dev;			/* the compositor's DRM device, or 0 */
	int dev_fd;
	struct kfdsync_ctx *ctx;
	bool dispatch_form;		/* KFDSYNC_CTX_DISPATCH: no library thread */
	struct gpu *gpu;
	uint64_t gates_va;		/* gates[] as the queue addresses it */
	struct buf bufs[2];
	int failed;			/* a frame whose fence ended with an error, or -1 */
};

/* zwp_linux_dmabuf_v1 v4's default feedback: only its main device matters here. */
static void fb_main_device(void *data, struct zwp_linux_dmabuf_feedback_v1 *f,
			   struct wl_array *dev)
{
	if (dev->size == sizeof(dev_t))
		memcpy(&((struct app *)data)->main_dev, dev->data, sizeof(dev_t));
}

static void fb_table(void *data, struct zwp_linux_dmabuf_feedback_v1 *f, int32_t fd, uint32_t n)
{
	close(fd);
}

static void ping(void *data, struct xdg_wm_base *wm, uint32_t n) { xdg_wm_base_pong(wm, n); }
static void fb_done(void *data, struct zwp_linux_dmabuf_feedback_v1 *f) {}
static void fb_array(void *data, struct zwp_linux_dmabuf_feedback_v1 *f, struct wl_array *a) {}
static void fb_flags(void *data, struct zwp_linux_dmabuf_feedback_v1 *f, uint32_t flags) {}
static void global_remove(void *data, struct wl_registry *reg, uint32_t name) {}
static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t w, int32_t h,
			       struct wl_array *states) {}

static const struct zwp_linux_dmabuf_feedback_v1_listener feedback_listener = {
	.done = fb_done, .format_table = fb_table, .main_device = fb_main_device,
	.tranche_done = fb_done, .tranche_target_device = fb_array,
	.tranche_formats = fb_array, .tranche_flags = fb_flags,
};
static const struct xdg_wm_base_listener wm_listener = { .ping = ping };

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

static void surface_configure(void *data, struct xdg_surface *xs, uint32_t serial)
{
	xdg_surface_ack_configure(xs, serial);
	((struct app *)data)->configured = true;
}

static void toplevel_close(void *data, struct xdg_toplevel *t)
{
	((struct app *)data)->closed = true;
}

static const struct wl_registry_listener registry_listener = { global, global_remove };
static const struct xdg_surface_listener xdg_surface_listener = { surface_configure };
static const struct xdg_toplevel_listener toplevel_listener = {
	.configure = toplevel_configure, .close = toplevel_close,
};

/*
 * A dumb buffer (16 rows more: Mesa's software rasteriser may read a little
 * past the last one) and its timeline. libwayland sends copies of the fds;
 * the compositor keeps its own references, ours close.
 */
static int buffer_new(struct app *a, struct buf *b)
{
	struct zwp_linux_buffer_params_v1 *params;
	uint32_t handle, pitch;
	uint64_t size, offset;
	int dmabuf = -1, fd = -1, ret;
	void *cpu;

	ret = drmModeCreateDumbBuffer(a->dev_fd, W, H + 16, 32, 0, &handle, &pitch, &size);
	ret = ret ? ret : drmModeMapDumbBuffer(a->dev_fd, handle, &offset);
	if (ret)
		return ret;
	cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, a->dev_fd, (off_t)offset);
	if (cpu == MAP_FAILED ||
	    drmPrimeHandleToFD(a->dev_fd, handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf) ||
	    drmSyncobjCreate(a->dev_fd, 0, &b->syncobj) ||
	    drmSyncobjHandleToFD(a->dev_fd, b->syncobj, &fd)) {
		ret = -errno;
		goto out;
	}
	params = zwp_linux_dmabuf_v1_create_params(a->dmabuf);
	zwp_linux_buffer_params_v1_add(params, dmabuf, 0, 0, pitch,
				       DRM_FORMAT_MOD_LINEAR >> 32,
				       DRM_FORMAT_MOD_LINEAR & 0xffffffff);
	b->wl = zwp_linux_buffer_params_v1_create_immed(params, W, H, DRM_FORMAT_XRGB8888, 0);
	zwp_linux_buffer_params_v1_destroy(params);
	b->timeline = wp_linux_drm_syncobj_manager_v1_import_timeline(a->syncobj_mgr, fd);
	ret = gpu_map_buffer(a->gpu, cpu, dmabuf, &b->va);
out:
	close(fd);
	close(dmabuf);
	return ret;
}

/* One turn of the loop: wait up to @ms for any of its fds, handle what is ready. */
static int dispatch(struct app *a, int ms)
{
	struct pollfd p[6] = {
		{ .fd = wl_display_get_fd(a->dpy), .events = POLLIN },
		{ .fd = kfdsync_ctx_get_poll_fd(a->ctx), .events = POLLIN },
	};
	int n = 2, ret;

	for (int i = 0; i < 2; i++) {
		if (a->bufs[i].fence < 0)
			p[n++] = (struct pollfd){ .fd = a->bufs[i].release_efd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = a->bufs[i].fence, .events = POLLIN };
	}
	wl_display_flush(a->dpy);
	if (poll(p, (nfds_t)n, ms) > 0 && (p[0].revents & POLLIN) &&
	    wl_display_dispatch(a->dpy) < 0)
		return -wl_display_get_error(a->dpy);
	/* kfdsync's work (dispatch form), or a failure of its relay (either form). */
	if ((p[1].revents & POLLIN) && (ret = kfdsync_ctx_dispatch(a->ctx)) < 0) {
		err("kfdsync: %s", strerror(-ret));
		return ret;
	}
	/* A fence that ended: an error fails the frame, the compositor never shows it. */
	for (int i = 0; i < 2; i++) {
		struct buf *b = &a->bufs[i];
		int st = b->fence < 0 ? 0 : fence_state(b->fence, NULL);

		if (st < 0 && a->failed < 0) {
			printf("frame %d: its fence ended with an error: %s\n", b->frame,
			       strerror(-st));
			a->failed = b->frame;
		}
		if (st) {
			close(b->fence);
			b->fence = -1;
		}
	}
	return 0;
}

/*
 * May the buffer's next frame be computed? Its last fence ended (the next
 * signal of its event is the new frame's), its release point has a fence.
 */
static bool released(struct buf *b)
{
	uint64_t v;

	return b->fence < 0 &&
	       (b->release_efd < 0 || read(b->release_efd, &v, sizeof(v)) == sizeof(v));
}

static const uint32_t colours[] = { 0x00d03030, 0x0030a040, 0x002050d0, 0x00d0a020 };

/* Frame N's picture: the whole buffer in its colour (one DMA fill). */
static void fill(struct pm4_buf *pb, void *arg)
{
	const struct buf *b = arg;

	pm4_dma_fill(pb, b->va, colours[b->frame % 4], W * H * 4);
}

/* Frame @n, on its buffer once released(). */
static int frame(struct app *a, int n)
{
	struct buf *b = &a->bufs[n % 2];
	struct stage_job job = {
		.n = (unsigned int)n, .draw = fill, .arg = b,
		.gate_va = a->gates_va + (uint64_t)(n % 2) * 8, .gate_min = (uint64_t)n,
		/* A compute longer than --timeout-ms fails the frame. */
		.busy_ms = (unsigned int)a->compute_ms, .watchdog_ns = a->timeout_ms * MS,
	};
	uint64_t acquire, release;
	int ret = 0, fence;

	if (b->release_efd >= 0) {
		/* The release point has a fence: kfdsync opens the gate when it signals. */
		close(b->release_efd);
		b->release_efd = -1;
		fence = kfdsync_syncobj_export_sync_file(a->dev_fd, b->syncobj, b->point);
		ret = fence < 0 ? fence : kfdsync_import_to_memory(a->ctx, fence, &gates[n % 2],
								   (uint64_t)n, GATE_ERROR);
		if (fence >= 0)
			close(fence);	/* the import holds its own reference */
	}
	/* The compute: its fence becomes the acquire point. */
	b->frame = n;
	b->fence = ret ? -1 : stage_submit(a->gpu, a->ctx, &b->ev, &job);
	if (ret || b->fence < 0)
		return ret ? ret : b->fence;
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
	wl_surface_damage_buffer(a->surf, 0, 0, W, H);
	wl_surface_commit(a->surf);
	b->release_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	printf("frame %d: committed on buffer %d, acquire point %lu\n", n, n % 2,
	       (unsigned long)acquire);
	return kfdsync_syncobj_eventfd(a->dev_fd, b->syncobj, release,
				       KFDSYNC_SYNCOBJ_WAIT_AVAILABLE, b->release_efd);
}

/* Each frame once its buffer is released; -ETIME after --timeout-ms without one. */
static int run(struct app *a)
{
	int64_t deadline = now_ns() + a->timeout_ms * MS;
	int n = 0, ret = 0;

	while (!ret && a->failed < 0 &&
	       (n < a->frames || a->bufs[0].fence >= 0 || a->bufs[1].fence >= 0)) {
		if (n < a->frames && released(&a->bufs[n % 2])) {
			ret = frame(a, n++);
			deadline = now_ns() + a->timeout_ms * MS;
		} else {
			ret = a->closed ? -EPIPE : now_ns() > deadline ? -ETIME : dispatch(a, 100);
		}
	}
	if (ret)
		err("%s (%d frames committed)", strerror(-ret), n);
	return ret ? ret : a->failed >= 0 ? -EIO : 0;
}

static int setup(struct app *a)
{
	struct kfdsync_caps caps = { 0 };
	struct xdg_surface *xs;
	struct xdg_toplevel *top;
	drmDevicePtr dev = NULL;
	uint64_t cap = 0;
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
		err("the compositor does not offer %s", !a->syncobj_mgr ?
		    "wp_linux_drm_syncobj_manager_v1 (explicit sync with timeline syncobjs)" :
		    "wl_compositor, xdg_wm_base and zwp_linux_dmabuf_v1 version 4");
		return -EOPNOTSUPP;
	}
	if (a->main_dev && !drmGetDeviceFromDevId(a->main_dev, 0, &dev)) {
		if (dev->available_nodes & (1 << DRM_NODE_PRIMARY)) {
			a->dev_fd = open(dev->nodes[DRM_NODE_PRIMARY], O_RDWR | O_CLOEXEC);
			printf("wp_linux_drm_syncobj_v1 on %s: a timeline per buffer\n",
			       dev->nodes[DRM_NODE_PRIMARY]);
		}
		drmFreeDevice(&dev);
	}
	if (a->dev_fd < 0 || drmGetCap(a->dev_fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) || !cap) {
		err("the compositor's DRM device (dmabuf v4 feedback) %s", a->dev_fd < 0 ?
		    "has no primary node here" : "has no timeline syncobjs");
		return -EOPNOTSUPP;
	}
	/* kfdsync: the dispatch form where this machine allows it, else threads. */
	ret = kfd_open(a->gpu_kind);
	ret = ret ? ret : kfdsync_ctx_new_flags(&a->ctx, KFDSYNC_CTX_DISPATCH);
	a->dispatch_form = !ret && !kfdsync_ctx_get_caps(a->ctx, &caps) &&
			   (caps.supported & KFDSYNC_CAP_DISPATCH);
	if (!ret && !a->dispatch_form) {
		kfdsync_ctx_free(a->ctx);
		ret = kfdsync_ctx_new(&a->ctx);
	}
	ret = ret ? ret : kfdsync_ctx_get_poll_fd(a->ctx);	/* made on the first call */
	ret = ret < 0 ? ret : gpu_open(&a->gpu, a->gpu_kind);
	ret = ret ? ret : gpu_map_memory(a->gpu, gates, sizeof(gates), &a->gates_va);
	for (int i = 0; i < 2 && !ret; i++) {
		ret = stage_event_new(a->ctx, &a->bufs[i].ev);
		ret = ret ? ret : buffer_new(a, &a->bufs[i]);
	}
	if (ret) {
		err("cannot set up kfdsync, the queue or the buffers: %s", strerror(-ret));
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
	printf("compute: %s; kfdsync: the %s form\n", gpu_name(a->gpu),
	       a->dispatch_form ? "dispatch" : "threads");
	return a->configured ? 0 : -EPIPE;
}

static const char usage[] =
	"usage: kfdsync-wayland [--frames N] [--compute-ms MS] [--fullscreen] [--gpu sim|real]\n"
	"                       [--timeout-ms MS]\n"
	"Compute frames and show them on a Wayland compositor with wp_linux_drm_syncobj_v1.\n"
	"Exit status: 0 every frame shown, 1 a frame failed, 2 usage or unsupported.\n";

/* 1 to run, 0 after --help, -1 after a usage error. */
static int parse(struct app *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "frames", 1, NULL, 'f' }, { "compute-ms", 1, NULL, 'c' },
		{ "fullscreen", 0, NULL, 'F' }, { "gpu", 1, NULL, 'g' },
		{ "timeout-ms", 1, NULL, 't' }, { "help", 0, NULL, 'h' }, { 0 },
	};
	int c, ret = 0;

	while (!ret && (c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': ret = parse_int("--frames", optarg, 1, 1000000, &a->frames); break;
		case 'c': ret = parse_int("--compute-ms", optarg, 0, 600000, &a->compute_ms); break;
		case 'F': a->fullscreen = true; break;
		case 't': ret = parse_int("--timeout-ms", optarg, 1, 600000, &a->timeout_ms); break;
		case 'h': fputs(usage, stdout); return 0;
		case 'g':
			a->gpu_kind = strcmp(optarg, "real") ? GPU_SIM : GPU_REAL;
			ret = strcmp(optarg, "real") && strcmp(optarg, "sim") ? -1 : 0;
			if (ret)
				err("--gpu: sim or real, not \"%s\"", optarg);
			break;
		default: ret = -1;
		}
	}
	if (ret || optind < argc)
		fputs(usage, stderr);
	return ret || optind < argc ? -1 : 1;
}

int main(int argc, char **argv)
{
	struct app a = {
		.frames = 60, .compute_ms = 8, .timeout_ms = 30000, .dev_fd = -1, .failed = -1,
		.bufs = { { .release_efd = -1, .fence = -1 }, { .release_efd = -1, .fence = -1 } },
	};
	int ret = parse(&a, argc, argv);

	if (ret <= 0)
		return ret ? 2 : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);	/* progress, line by line, also into a pipe */
	ret = setup(&a);
	ret = ret ? ret : run(&a);
	printf("summary: %d frames, %s\n", a.frames, ret ? "failed" : "every fence signalled");
	/* The queue stops first, the context ends what is pending; exit closes the rest. */
	gpu_close(a.gpu);
	kfdsync_ctx_free(a.ctx);
	for (int i = 0; i < 2; i++)
		kfd_signal_event_destroy(&a.bufs[i].ev.event);
	kfd_close();
	if (a.dpy)
		wl_display_disconnect(a.dpy);
	return ret == -EOPNOTSUPP ? 2 : ret ? 1 : 0;
}
