/* SPDX-License-Identifier: MIT */
/*
 * display.h - the KMS side of kfdsync-kms: one connector, one CRTC, its
 * primary plane, dumb buffers, and non-blocking atomic commits that take an
 * in-fence and give back an out-fence.
 *
 * Every function returns 0 or a negative errno and prints what went wrong
 * (prefixed with the program's name) before it returns an error.
 */
#ifndef KFDSYNC_KMS_DISPLAY_H
#define KFDSYNC_KMS_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xf86drmMode.h>

/* Property ids of the objects a commit touches, looked up once by name. */
struct display_props {
	uint32_t conn_crtc_id;		/* connector CRTC_ID */
	uint32_t crtc_mode_id;		/* CRTC MODE_ID */
	uint32_t crtc_active;		/* CRTC ACTIVE */
	uint32_t crtc_out_fence_ptr;	/* CRTC OUT_FENCE_PTR */
	uint32_t plane_fb_id, plane_crtc_id;
	uint32_t plane_src_x, plane_src_y, plane_src_w, plane_src_h;
	uint32_t plane_crtc_x, plane_crtc_y, plane_crtc_w, plane_crtc_h;
	uint32_t plane_in_fence_fd;	/* plane IN_FENCE_FD */
};

/* A KMS device and the one output this program drives. */
struct display {
	int fd;				/* the DRM device, -1 when closed */
	char path[64];			/* /dev/dri/cardN */
	char driver[32];		/* "bochs-drm", "cirrus", ... */
	uint32_t connector_id, crtc_id, plane_id;
	char connector_name[32];	/* "Virtual-1" */
	drmModeModeInfo mode;		/* the mode we set */
	uint32_t mode_blob_id;		/* MODE_ID blob of @mode, 0 if none */
	bool modeset_done;		/* the first commit (a modeset) succeeded */
	struct display_props props;
};

/* A dumb buffer scanned out through a framebuffer. */
struct buffer {
	uint32_t handle;		/* GEM handle on the display's fd */
	uint32_t fb_id;			/* KMS framebuffer, 0 if none */
	uint32_t width, height;
	uint32_t pitch;			/* bytes per row */
	uint64_t size;			/* bytes */
	uint32_t *map;			/* CPU mapping (XRGB8888), NULL if none */
	int dmabuf_fd;			/* PRIME export, -1 if none */
};

/*
 * Open a KMS device and pick an output.
 *
 * @device: NULL for the first card with a connected output, a path
 *	("/dev/dri/card0"), or a driver name ("bochs-drm", "cirrus").
 * @width, @height: the mode to set; 0 for the connector's preferred mode.
 *
 * Returns 0, -ENODEV (no KMS device / output / mode as asked), or another
 * negative errno. On success display_close() releases everything.
 */
int display_open(struct display *d, const char *device, uint32_t width, uint32_t height);
void display_close(struct display *d);

/*
 * Create a dumb buffer of the display's mode size (XRGB8888), add a
 * framebuffer for it and map it. With @export, also export it as a dma-buf
 * (PRIME), for implicit sync: -EOPNOTSUPP if the driver cannot (or cannot
 * scan a shared buffer out: drivers with VRAM-only scanout, like bochs-drm).
 */
int buffer_create(struct display *d, struct buffer *b, bool export);
void buffer_destroy(struct display *d, struct buffer *b);

/*
 * Queue a non-blocking atomic commit that shows @b on the primary plane.
 * The first commit also sets the mode (ALLOW_MODESET).
 *
 * @in_fence_fd: a sync_file the display waits for before it scans @b out,
 *	or -1 for none. Borrowed: the kernel takes its own reference during the
 *	ioctl, so the caller may close it as soon as this returns.
 * @out_fence_fd: gets a new sync_file (the caller closes it) that signals
 *	when the commit is done, i.e. @b is on the screen and the buffer shown
 *	before it is no longer read by the display.
 *
 * Returns 0, -EBUSY if a commit is still in flight on the CRTC (callers keep
 * one in flight at a time), or another negative errno.
 */
int display_commit(struct display *d, const struct buffer *b, int in_fence_fd,
		   int *out_fence_fd);

#endif /* KFDSYNC_KMS_DISPLAY_H */
