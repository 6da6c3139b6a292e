// SPDX-License-Identifier: MIT
/*
 * amdgpu command-submission fences through libdrm_amdgpu: a CS fence as a
 * sync_file, a sync_file as a syncobj a CS can wait on.
 *
 * Built, and tested on their error paths only: the test machines have no
 * amdgpu hardware (the guest's amdgpu is CPU-only, with no render node).
 * Without libdrm_amdgpu at build time, these return -EOPNOTSUPP.
 */
#include <errno.h>
#include <stddef.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"

#ifdef KFDSYNC_HAVE_AMDGPU
#include <amdgpu.h>
#include <amdgpu_drm.h>

/* libdrm_amdgpu returns -errno, or -1 with errno from drmIoctl: normalise. */
static int amdgpu_ret(int ret)
{
	if (ret >= 0)
		return ret;
	return ret == -1 ? -errno : ret;
}

KFDSYNC_EXPORT int kfdsync_amdgpu_fence_export_sync_file(struct amdgpu_device *dev,
							 const struct amdgpu_cs_fence *fence)
{
	struct amdgpu_cs_fence f;
	uint32_t fd = (uint32_t)-1;
	int ret;

	if (!dev || !fence || !fence->context)
		return -EINVAL;
	f = *fence;	/* libdrm's prototype is not const-correct */
	ret = amdgpu_ret(amdgpu_cs_fence_to_handle(dev, &f,
						   AMDGPU_FENCE_TO_HANDLE_GET_SYNC_FILE_FD, &fd));
	if (ret < 0)
		return ret;
	return (int)fd;	/* amdgpu makes it O_CLOEXEC */
}

KFDSYNC_EXPORT int kfdsync_amdgpu_syncobj_from_sync_file(struct amdgpu_device *dev,
							 int sync_file_fd, uint32_t *syncobj)
{
	uint32_t handle;
	int ret;

	if (!dev || !syncobj)
		return -EINVAL;
	/* Checked before the device is used: a clear error for a wrong fd. */
	ret = kfdsync_sync_file_check(sync_file_fd);
	if (ret <= 0)
		return ret == 0 ? -EINVAL : ret;
	ret = amdgpu_ret(amdgpu_cs_create_syncobj2(dev, 0, &handle));
	if (ret < 0)
		return ret;
	ret = amdgpu_ret(amdgpu_cs_syncobj_import_sync_file(dev, handle, sync_file_fd));
	if (ret < 0) {
		amdgpu_cs_destroy_syncobj(dev, handle);
		return ret;
	}
	*syncobj = handle;
	return 0;
}

#else

KFDSYNC_EXPORT int kfdsync_amdgpu_fence_export_sync_file(struct amdgpu_device *dev,
							 const struct amdgpu_cs_fence *fence)
{
	(void)dev;
	(void)fence;
	return -EOPNOTSUPP;
}

KFDSYNC_EXPORT int kfdsync_amdgpu_syncobj_from_sync_file(struct amdgpu_device *dev,
							 int sync_file_fd, uint32_t *syncobj)
{
	(void)dev;
	(void)sync_file_fd;
	(void)syncobj;
	return -EOPNOTSUPP;
}

#endif
