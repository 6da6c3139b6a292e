/* SPDX-License-Identifier: MIT */
/*
 * vgem in the test guest: a real fence from another driver, signalled on
 * request. vgem's uAPI (drm/vgem_drm.h) is not in Debian's userspace headers,
 * hence the definitions here. Needs libdrm.
 */
#ifndef KFDSYNC_TESTS_VGEM_H
#define KFDSYNC_TESTS_VGEM_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <xf86drm.h>

struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE 0x1
#define IOCTL_VGEM_FENCE_ATTACH DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define IOCTL_VGEM_FENCE_SIGNAL DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

/* A DRM node of driver @want (any if NULL): card or render node; fd or -1. */
static inline int drm_open_driver(const char *want, bool render)
{
	char path[64];

	for (int i = 0; i < 16; i++) {
		drmVersionPtr v;
		int fd;

		snprintf(path, sizeof(path), render ? "/dev/dri/renderD%d" : "/dev/dri/card%d",
			 render ? 128 + i : i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && (!want || !strcmp(v->name, want))) {
			drmFreeVersion(v);
			return fd;
		}
		drmFreeVersion(v);
		close(fd);
	}
	return -1;
}

/*
 * vgem signals a fence by itself once it is this old (VGEM_FENCE_TIMEOUT in
 * drivers/gpu/drm/vgem/vgem_fence.c, 10 * HZ from the attach), and its
 * signal ioctl then fails with ETIMEDOUT.
 */
#define VGEM_FENCE_SELF_SIGNAL_NS 10000000000LL

/*
 * A vgem buffer, its dma-buf and (if asked) vgem's write fence on it, with
 * the CLOCK_MONOTONIC time just before the fence was attached.
 */
struct vgem_buffer {
	uint32_t handle;
	int dmabuf;
	uint32_t fence;
	int64_t fence_made_ns;
};

static inline int64_t vgem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Could vgem have signalled @b's fence by itself by now? */
static inline bool vgem_fence_may_have_expired(const struct vgem_buffer *b)
{
	return vgem_now_ns() - b->fence_made_ns >= VGEM_FENCE_SELF_SIGNAL_NS;
}

static inline bool vgem_buffer_new(int vgem, struct vgem_buffer *b, bool fence)
{
	struct drm_mode_create_dumb dumb = { .width = 64, .height = 64, .bpp = 32 };
	struct vgem_fence_attach attach = { .flags = VGEM_FENCE_WRITE };

	memset(b, 0, sizeof(*b));
	b->dmabuf = -1;
	if (drmIoctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb))
		return false;
	b->handle = dumb.handle;
	if (drmPrimeHandleToFD(vgem, b->handle, DRM_CLOEXEC | DRM_RDWR, &b->dmabuf))
		return false;
	if (!fence)
		return true;
	attach.handle = b->handle;
	b->fence_made_ns = vgem_now_ns();
	if (drmIoctl(vgem, IOCTL_VGEM_FENCE_ATTACH, &attach))
		return false;
	b->fence = attach.out_fence;
	return true;
}

static inline bool vgem_fence_signal(int vgem, uint32_t fence)
{
	struct vgem_fence_signal sig = { .fence = fence };

	return drmIoctl(vgem, IOCTL_VGEM_FENCE_SIGNAL, &sig) == 0;
}

/* vgem's write fence as a sync_file (what a reader must wait for); fd or -1. */
static inline int vgem_buffer_sync_file(const struct vgem_buffer *b)
{
	struct dma_buf_export_sync_file arg = { .flags = DMA_BUF_SYNC_READ, .fd = -1 };

	if (drmIoctl(b->dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &arg))
		return -1;
	return arg.fd;
}

static inline void vgem_buffer_free(int vgem, struct vgem_buffer *b)
{
	if (b->dmabuf >= 0)
		close(b->dmabuf);
	if (b->handle) {
		struct drm_gem_close c = { .handle = b->handle };

		drmIoctl(vgem, DRM_IOCTL_GEM_CLOSE, &c);
	}
	memset(b, 0, sizeof(*b));
	b->dmabuf = -1;
}

#endif /* KFDSYNC_TESTS_VGEM_H */
