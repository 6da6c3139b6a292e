// SPDX-License-Identifier: MIT
/* CPU timelines on /dev/kfdsync_timeline (sw_sync-compatible uAPI). */
#include <linux/kfdsync_timeline.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"

struct kfdsync_timeline {
	int fd;
};

KFDSYNC_EXPORT int kfdsync_timeline_new(struct kfdsync_timeline **out)
{
	struct kfdsync_timeline *tl;
	int fd;

	if (!out)
		return -EINVAL;
	fd = kfdsync_open_device(KFDSYNC_TL_DEVICE);
	if (fd < 0)
		return fd;
	tl = calloc(1, sizeof(*tl));
	if (!tl) {
		close(fd);
		return -ENOMEM;
	}
	tl->fd = fd;
	*out = tl;
	return 0;
}

KFDSYNC_EXPORT void kfdsync_timeline_free(struct kfdsync_timeline *tl)
{
	if (!tl)
		return;
	close(tl->fd);
	free(tl);
}

KFDSYNC_EXPORT int kfdsync_timeline_create_fence(struct kfdsync_timeline *tl,
						 uint32_t value, const char *name)
{
	struct kfdsync_tl_create_fence arg;
	int ret;

	if (!tl)
		return -EINVAL;
	if (!name)
		name = "kfdsync";
	/* The kernel refuses them too; one rule (kfdsync.h, "Fence names"). */
	_Static_assert(sizeof(arg.name) == KFDSYNC_NAME_MAX + 1, "name size");
	if (strnlen(name, KFDSYNC_NAME_MAX + 1) > KFDSYNC_NAME_MAX)
		return -EINVAL;
	memset(&arg, 0, sizeof(arg));
	arg.value = value;
	strcpy(arg.name, name);
	ret = kfdsync_ioctl(tl->fd, KFDSYNC_TL_IOC_CREATE_FENCE, &arg);
	return ret < 0 ? ret : arg.fence;	/* the module makes it O_CLOEXEC */
}

KFDSYNC_EXPORT int kfdsync_timeline_inc(struct kfdsync_timeline *tl, uint32_t step)
{
	if (!tl)
		return -EINVAL;
	return kfdsync_ioctl(tl->fd, KFDSYNC_TL_IOC_INC, &step);
}
