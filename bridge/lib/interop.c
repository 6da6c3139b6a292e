// SPDX-License-Identifier: MIT
/* Fences between sync_files, dma-bufs (implicit sync) and drm_syncobjs. */
#include <errno.h>
#include <linux/dma-buf.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kfdsync.h"
#include "internal.h"

static int dmabuf_flags(uint32_t flags, __u32 *out)
{
	if (!flags || (flags & ~(KFDSYNC_DMABUF_READ | KFDSYNC_DMABUF_WRITE)))
		return -EINVAL;
	*out = 0;
	if (flags & KFDSYNC_DMABUF_READ)
		*out |= DMA_BUF_SYNC_READ;
	if (flags & KFDSYNC_DMABUF_WRITE)
		*out |= DMA_BUF_SYNC_WRITE;
	return 0;
}

/*
 * ENOTTY from a dma-buf sync_file ioctl: a file that is not a dma-buf
 * (-EINVAL), or a dma-buf of a kernel older than 6.0 (-EOPNOTSUPP). A
 * dma-buf lives on the kernel's dmabuf pseudo filesystem.
 */
static int dmabuf_enotty(int dmabuf_fd)
{
	struct statfs sfs;

	return !fstatfs(dmabuf_fd, &sfs) && sfs.f_type == DMA_BUF_MAGIC ? -EOPNOTSUPP : -EINVAL;
}

KFDSYNC_EXPORT int kfdsync_dmabuf_export_sync_file(int dmabuf_fd, uint32_t flags)
{
	struct dma_buf_export_sync_file arg;
	int ret;

	memset(&arg, 0, sizeof(arg));
	ret = dmabuf_flags(flags, &arg.flags);
	if (ret)
		return ret;
	arg.fd = -1;
	ret = kfdsync_ioctl(dmabuf_fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &arg);
	if (ret == -ENOTTY)
		return dmabuf_enotty(dmabuf_fd);
	if (ret < 0)
		return ret;
	return arg.fd;	/* the kernel makes it O_CLOEXEC */
}

KFDSYNC_EXPORT int kfdsync_dmabuf_import_sync_file(int dmabuf_fd, int sync_file_fd,
						   uint32_t flags)
{
	struct dma_buf_import_sync_file arg;
	int ret;

	memset(&arg, 0, sizeof(arg));
	ret = dmabuf_flags(flags, &arg.flags);
	if (ret)
		return ret;
	arg.fd = sync_file_fd;
	ret = kfdsync_ioctl(dmabuf_fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &arg);
	return ret == -ENOTTY ? dmabuf_enotty(dmabuf_fd) : ret;
}

/* libdrm returns -1/errno or -errno depending on the function: normalise. */
static int drm_ret(int ret)
{
	if (ret >= 0)
		return ret;
	return ret == -1 ? -errno : ret;
}

static int syncobj_caps(int drm_fd, bool timeline)
{
	uint64_t cap = 0;

	if (drmGetCap(drm_fd, timeline ? DRM_CAP_SYNCOBJ_TIMELINE : DRM_CAP_SYNCOBJ,
		      &cap) || !cap)
		return -EOPNOTSUPP;
	return 0;
}

KFDSYNC_EXPORT int kfdsync_syncobj_import_sync_file(int drm_fd, uint32_t handle,
						    uint64_t point, int sync_file_fd)
{
	uint32_t tmp;
	int ret, ret2;

	ret = syncobj_caps(drm_fd, point != 0);
	if (ret)
		return ret;
	if (!point)
		return drm_ret(drmSyncobjImportSyncFile(drm_fd, handle, sync_file_fd));

	/* Timeline point: binary syncobj, then transfer its fence. */
	ret = drm_ret(drmSyncobjCreate(drm_fd, 0, &tmp));
	if (ret)
		return ret;
	ret = drm_ret(drmSyncobjImportSyncFile(drm_fd, tmp, sync_file_fd));
	if (!ret)
		ret = drm_ret(drmSyncobjTransfer(drm_fd, handle, point, tmp, 0, 0));
	ret2 = drm_ret(drmSyncobjDestroy(drm_fd, tmp));
	return ret ? ret : ret2;
}

KFDSYNC_EXPORT int kfdsync_syncobj_export_sync_file(int drm_fd, uint32_t handle,
						    uint64_t point)
{
	uint32_t tmp = 0;
	int fd = -1, ret, ret2;

	ret = syncobj_caps(drm_fd, point != 0);
	if (ret)
		return ret;
	if (!point) {
		ret = drm_ret(drmSyncobjExportSyncFile(drm_fd, handle, &fd));
		return ret ? ret : fd;
	}
	ret = drm_ret(drmSyncobjCreate(drm_fd, 0, &tmp));
	if (ret)
		return ret;
	ret = drm_ret(drmSyncobjTransfer(drm_fd, tmp, 0, handle, point, 0));
	if (!ret)
		ret = drm_ret(drmSyncobjExportSyncFile(drm_fd, tmp, &fd));
	ret2 = drm_ret(drmSyncobjDestroy(drm_fd, tmp));
	if (ret)
		return ret;
	if (ret2) {
		close(fd);
		return ret2;
	}
	return fd;
}
