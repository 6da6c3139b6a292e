// SPDX-License-Identifier: MIT
/*
 * display.c - KMS for kfdsync-kms: find an output, create dumb buffers,
 * queue non-blocking atomic commits with IN_FENCE_FD and OUT_FENCE_PTR.
 *
 * Nothing here knows about compute or kfdsync: the fences are plain
 * sync_file fds. See kfdsync-kms.c for how they are produced and consumed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "common.h"
#include "display.h"

#define MAX_CARDS	16

/* The driver's name ("bochs-drm"), or "" if the fd is not a DRM device. */
static void driver_name(int fd, char *name, size_t size)
{
	drmVersionPtr v = drmGetVersion(fd);

	snprintf(name, size, "%s", v && v->name ? v->name : "");
	drmFreeVersion(v);
}

/* Look up the id of property @name of a KMS object; 0 if it has none. */
static uint32_t prop_id(int fd, uint32_t obj_id, uint32_t obj_type, const char *name)
{
	drmModeObjectPropertiesPtr props = drmModeObjectGetProperties(fd, obj_id, obj_type);
	uint32_t id = 0;

	for (uint32_t i = 0; props && i < props->count_props && !id; i++) {
		drmModePropertyPtr p = drmModeGetProperty(fd, props->props[i]);

		if (p && !strcmp(p->name, name))
			id = p->prop_id;
		drmModeFreeProperty(p);
	}
	drmModeFreeObjectProperties(props);
	return id;
}

/* The primary plane that can be used with CRTC number @crtc_index. */
static uint32_t find_primary_plane(int fd, unsigned int crtc_index)
{
	drmModePlaneResPtr planes = drmModeGetPlaneResources(fd);
	uint32_t found = 0;

	for (uint32_t i = 0; planes && i < planes->count_planes && !found; i++) {
		drmModePlanePtr p = drmModeGetPlane(fd, planes->planes[i]);
		drmModeObjectPropertiesPtr props;

		if (!p)
			continue;
		if (p->possible_crtcs & (1u << crtc_index)) {
			props = drmModeObjectGetProperties(fd, p->plane_id, DRM_MODE_OBJECT_PLANE);
			for (uint32_t j = 0; props && j < props->count_props; j++) {
				drmModePropertyPtr pr = drmModeGetProperty(fd, props->props[j]);

				if (pr && !strcmp(pr->name, "type") &&
				    props->prop_values[j] == DRM_PLANE_TYPE_PRIMARY)
					found = p->plane_id;
				drmModeFreeProperty(pr);
			}
			drmModeFreeObjectProperties(props);
		}
		drmModeFreePlane(p);
	}
	drmModeFreePlaneResources(planes);
	return found;
}

/*
 * Pick a connected connector, a CRTC its encoders can drive, the CRTC's
 * primary plane, and a mode. Prints why when it finds none.
 */
static int pick_output(struct display *d, uint32_t width, uint32_t height)
{
	drmModeResPtr res = drmModeGetResources(d->fd);
	drmModeConnectorPtr conn = NULL;
	int ret = -ENODEV;

	if (!res || !res->count_crtcs || !res->count_connectors) {
		err("%s (driver %s) has no display outputs: it is not a KMS device",
		    d->path, d->driver);
		goto out;
	}
	for (int i = 0; i < res->count_connectors && !d->connector_id; i++) {
		conn = drmModeGetConnector(d->fd, res->connectors[i]);
		if (conn && conn->connection == DRM_MODE_CONNECTED && conn->count_modes)
			break;
		drmModeFreeConnector(conn);
		conn = NULL;
	}
	if (!conn) {
		err("%s (driver %s): no connected output", d->path, d->driver);
		goto out;
	}
	snprintf(d->connector_name, sizeof(d->connector_name), "%s-%u",
		 drmModeGetConnectorTypeName(conn->connector_type) ?: "Unknown",
		 conn->connector_type_id);

	/* A mode: the one asked for, or the preferred one (else the first). */
	for (int i = 0; i < conn->count_modes; i++) {
		const drmModeModeInfo *m = &conn->modes[i];

		if (width ? (m->hdisplay == width && m->vdisplay == height) :
			    !!(m->type & DRM_MODE_TYPE_PREFERRED)) {
			d->mode = *m;
			break;
		}
	}
	if (!d->mode.hdisplay && !width)
		d->mode = conn->modes[0];
	if (!d->mode.hdisplay) {
		err("%s has no %ux%u mode; it offers:", d->connector_name, width, height);
		for (int i = 0; i < conn->count_modes; i++)
			fprintf(stderr, "  %ux%u\n", conn->modes[i].hdisplay,
				conn->modes[i].vdisplay);
		goto out;
	}

	/* A CRTC one of the connector's encoders can drive, and its plane. */
	for (int i = 0; i < conn->count_encoders && !d->crtc_id; i++) {
		drmModeEncoderPtr enc = drmModeGetEncoder(d->fd, conn->encoders[i]);

		for (int c = 0; enc && c < res->count_crtcs && !d->crtc_id; c++) {
			if (!(enc->possible_crtcs & (1u << c)))
				continue;
			d->plane_id = find_primary_plane(d->fd, (unsigned int)c);
			if (d->plane_id)
				d->crtc_id = res->crtcs[c];
		}
		drmModeFreeEncoder(enc);
	}
	if (!d->crtc_id) {
		err("%s: no CRTC with a primary plane can drive %s", d->path, d->connector_name);
		goto out;
	}
	d->connector_id = conn->connector_id;
	ret = 0;
out:
	drmModeFreeConnector(conn);
	drmModeFreeResources(res);
	return ret;
}

static int lookup_props(struct display *d)
{
	struct display_props *p = &d->props;
	const uint32_t c = DRM_MODE_OBJECT_CRTC, pl = DRM_MODE_OBJECT_PLANE;

	p->conn_crtc_id = prop_id(d->fd, d->connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID");
	p->crtc_mode_id = prop_id(d->fd, d->crtc_id, c, "MODE_ID");
	p->crtc_active = prop_id(d->fd, d->crtc_id, c, "ACTIVE");
	p->crtc_out_fence_ptr = prop_id(d->fd, d->crtc_id, c, "OUT_FENCE_PTR");
	p->plane_fb_id = prop_id(d->fd, d->plane_id, pl, "FB_ID");
	p->plane_crtc_id = prop_id(d->fd, d->plane_id, pl, "CRTC_ID");
	p->plane_src_x = prop_id(d->fd, d->plane_id, pl, "SRC_X");
	p->plane_src_y = prop_id(d->fd, d->plane_id, pl, "SRC_Y");
	p->plane_src_w = prop_id(d->fd, d->plane_id, pl, "SRC_W");
	p->plane_src_h = prop_id(d->fd, d->plane_id, pl, "SRC_H");
	p->plane_crtc_x = prop_id(d->fd, d->plane_id, pl, "CRTC_X");
	p->plane_crtc_y = prop_id(d->fd, d->plane_id, pl, "CRTC_Y");
	p->plane_crtc_w = prop_id(d->fd, d->plane_id, pl, "CRTC_W");
	p->plane_crtc_h = prop_id(d->fd, d->plane_id, pl, "CRTC_H");
	p->plane_in_fence_fd = prop_id(d->fd, d->plane_id, pl, "IN_FENCE_FD");

	if (!p->conn_crtc_id || !p->crtc_mode_id || !p->crtc_active || !p->plane_fb_id ||
	    !p->plane_crtc_id || !p->plane_src_x || !p->plane_crtc_x) {
		err("%s: missing a standard atomic KMS property", d->path);
		return -ENODEV;
	}
	if (!p->crtc_out_fence_ptr || !p->plane_in_fence_fd) {
		err("%s (driver %s) has no IN_FENCE_FD / OUT_FENCE_PTR properties",
		    d->path, d->driver);
		return -ENODEV;
	}
	return 0;
}

/* Does the device have CRTCs and connectors? */
static bool has_kms(int fd)
{
	drmModeResPtr res = drmModeGetResources(fd);
	bool ret = res && res->count_crtcs && res->count_connectors;

	drmModeFreeResources(res);
	return ret;
}

/* Open @path and learn its driver's name; -ENODEV if it is not DRM. */
static int open_card(struct display *d, const char *path, bool quiet)
{
	snprintf(d->path, sizeof(d->path), "%s", path);
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		int ret = -errno;

		if (!quiet)
			err("cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	driver_name(d->fd, d->driver, sizeof(d->driver));
	if (!d->driver[0]) {
		if (!quiet)
			err("%s is not a DRM device", path);
		close(d->fd);
		d->fd = -1;
		return -ENODEV;
	}
	return 0;
}

int display_open(struct display *d, const char *device, uint32_t width, uint32_t height)
{
	char path[64];
	int ret;

	memset(d, 0, sizeof(*d));
	d->fd = -1;

	if (device && device[0] == '/') {
		ret = open_card(d, device, false);
	} else {
		/* The first card matching the driver name, or with an output. */
		ret = -ENODEV;
		for (int i = 0; i < MAX_CARDS && ret; i++) {
			snprintf(path, sizeof(path), "%s/card%d", DRM_DIR_NAME, i);
			if (access(path, F_OK))
				continue;
			if (open_card(d, path, true))
				continue;
			if (device ? !strcmp(d->driver, device) : has_kms(d->fd)) {
				ret = 0;
				break;
			}
			close(d->fd);
			d->fd = -1;
		}
		if (ret) {
			if (device)
				err("no KMS device with driver \"%s\" in %s", device, DRM_DIR_NAME);
			else
				err("no KMS display device in %s", DRM_DIR_NAME);
			return -ENODEV;
		}
	}
	if (ret)
		return ret;

	/* Atomic implies universal planes; fences exist only in atomic. */
	if (drmSetClientCap(d->fd, DRM_CLIENT_CAP_ATOMIC, 1)) {
		err("%s (driver %s) does not support atomic modesetting: it is not a KMS "
		    "display device, or not a modern one", d->path, d->driver);
		display_close(d);
		return -ENODEV;
	}
	ret = pick_output(d, width, height);
	if (!ret)
		ret = lookup_props(d);
	if (!ret && drmModeCreatePropertyBlob(d->fd, &d->mode, sizeof(d->mode),
					      &d->mode_blob_id)) {
		ret = -errno;
		err("%s: cannot create the mode blob: %s", d->path, strerror(errno));
	}
	if (ret)
		display_close(d);
	return ret;
}

void display_close(struct display *d)
{
	if (d->fd < 0)
		return;
	if (d->mode_blob_id)
		drmModeDestroyPropertyBlob(d->fd, d->mode_blob_id);
	/*
	 * Closing the fd removes our framebuffers; the kernel's fbdev console
	 * takes the screen back.
	 */
	close(d->fd);
	d->fd = -1;
}

/*
 * Drivers that keep scanout buffers in VRAM with drm_gem_vram (bochs-drm,
 * hibmc, vboxvideo) cannot share them: before Linux 6.6 they have no PRIME
 * export; from 6.6 the generic export pins the buffer in system memory,
 * and scanning it out afterwards fails (kernel WARNs in ttm and
 * drm_gem_vram_offset, seen with bochs-drm on 6.12). Do not even try.
 */
static bool can_share_scanout(const struct display *d)
{
	static const char *const vram_drivers[] = { "bochs-drm", "hibmc", "vboxvideo" };

	for (size_t i = 0; i < sizeof(vram_drivers) / sizeof(vram_drivers[0]); i++)
		if (!strcmp(d->driver, vram_drivers[i]))
			return false;
	return true;
}

int buffer_create(struct display *d, struct buffer *b, bool export)
{
	const uint32_t w = d->mode.hdisplay, h = d->mode.vdisplay;
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	uint64_t offset;
	void *map;
	int ret;

	memset(b, 0, sizeof(*b));
	b->dmabuf_fd = -1;
	if (export && !can_share_scanout(d))
		return -EOPNOTSUPP;
	b->width = w;
	b->height = h;

	ret = drmModeCreateDumbBuffer(d->fd, w, h, 32, 0, &b->handle, &b->pitch, &b->size);
	if (ret) {
		err("%s: cannot create a %ux%u dumb buffer: %s", d->path, w, h, strerror(-ret));
		return ret;
	}
	handles[0] = b->handle;
	pitches[0] = b->pitch;
	if (drmModeAddFB2(d->fd, w, h, DRM_FORMAT_XRGB8888, handles, pitches, offsets,
			  &b->fb_id, 0)) {
		ret = -errno;
		err("%s: cannot add an XRGB8888 framebuffer: %s", d->path, strerror(errno));
		goto fail;
	}
	ret = drmModeMapDumbBuffer(d->fd, b->handle, &offset);
	if (ret) {
		err("%s: cannot map a dumb buffer: %s", d->path, strerror(-ret));
		goto fail;
	}
	map = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, (off_t)offset);
	if (map == MAP_FAILED) {
		ret = -errno;
		err("%s: mmap of a dumb buffer: %s", d->path, strerror(errno));
		goto fail;
	}
	b->map = map;
	if (export) {
		ret = drmPrimeHandleToFD(d->fd, b->handle, DRM_CLOEXEC | DRM_RDWR, &b->dmabuf_fd);
		if (ret) {
			ret = -errno ?: -EOPNOTSUPP;
			b->dmabuf_fd = -1;
			/* No PRIME in this driver: no buffer sharing. */
			if (ret == -EOPNOTSUPP || ret == -ENOSYS || ret == -EINVAL)
				ret = -EOPNOTSUPP;
			goto fail;
		}
	}
	return 0;
fail:
	buffer_destroy(d, b);
	return ret;
}

void buffer_destroy(struct display *d, struct buffer *b)
{
	if (b->dmabuf_fd >= 0)
		close(b->dmabuf_fd);
	if (b->map)
		munmap(b->map, b->size);
	if (b->fb_id)
		drmModeRmFB(d->fd, b->fb_id);
	if (b->handle)
		drmModeDestroyDumbBuffer(d->fd, b->handle);
	memset(b, 0, sizeof(*b));
	b->dmabuf_fd = -1;
}

int display_commit(struct display *d, const struct buffer *b, int in_fence_fd,
		   int *out_fence_fd)
{
	const struct display_props *p = &d->props;
	uint32_t flags = DRM_MODE_ATOMIC_NONBLOCK;
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	/* The kernel writes the out-fence fd here during the ioctl. */
	int32_t out_fence = -1;
	int ret = 0;

	if (!req)
		return -ENOMEM;
	if (!d->modeset_done) {
		flags |= DRM_MODE_ATOMIC_ALLOW_MODESET;
		ret |= drmModeAtomicAddProperty(req, d->connector_id, p->conn_crtc_id,
						d->crtc_id) < 0;
		ret |= drmModeAtomicAddProperty(req, d->crtc_id, p->crtc_mode_id,
						d->mode_blob_id) < 0;
		ret |= drmModeAtomicAddProperty(req, d->crtc_id, p->crtc_active, 1) < 0;
	}
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_fb_id, b->fb_id) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_crtc_id, d->crtc_id) < 0;
	/* Source coordinates are 16.16 fixed point; no scaling. */
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_src_x, 0) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_src_y, 0) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_src_w,
					(uint64_t)b->width << 16) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_src_h,
					(uint64_t)b->height << 16) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_crtc_x, 0) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_crtc_y, 0) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_crtc_w, b->width) < 0;
	ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_crtc_h, b->height) < 0;
	/*
	 * The plane waits for this fence before it scans the buffer out. The
	 * kernel takes its own reference in the ioctl; the fd stays ours.
	 */
	if (in_fence_fd >= 0)
		ret |= drmModeAtomicAddProperty(req, d->plane_id, p->plane_in_fence_fd,
						(uint64_t)in_fence_fd) < 0;
	/* Ask for a fence that signals when this commit is done. */
	ret |= drmModeAtomicAddProperty(req, d->crtc_id, p->crtc_out_fence_ptr,
					(uint64_t)(uintptr_t)&out_fence) < 0;
	if (ret) {
		drmModeAtomicFree(req);
		return -ENOMEM;
	}

	if (drmModeAtomicCommit(d->fd, req, flags, NULL)) {
		ret = -errno;
		if (ret == -EACCES)
			err("%s: atomic commit refused: not the DRM master "
			    "(is a display server running?)", d->path);
		else if (ret != -EBUSY)
			err("%s: atomic commit failed: %s", d->path, strerror(errno));
	} else {
		d->modeset_done = true;
		*out_fence_fd = out_fence;	/* now the caller's */
	}
	drmModeAtomicFree(req);
	return ret;
}
