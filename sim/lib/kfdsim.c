// SPDX-License-Identifier: MIT
/*
 * kfdsim.c - userspace side of the GPU simulator; see kfdsim.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "kfdsim.h"

/* ioctl() returning 0 or -errno, retried when a signal interrupted it. */
static int sim_ioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

int64_t kfdsim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int kfdsim_open(void)
{
	int fd = open(KFDSIM_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int kfdsim_info(int fd, struct kfdsim_info *info)
{
	memset(info, 0, sizeof(*info));
	return sim_ioctl(fd, KFDSIM_IOC_INFO, info);
}

int kfdsim_queue_create(int fd, uint32_t ring_dwords, uint32_t *queue_id, uint32_t *pasid)
{
	struct kfdsim_queue_create args = { .ring_dwords = ring_dwords };
	int ret = sim_ioctl(fd, KFDSIM_IOC_QUEUE_CREATE, &args);

	if (ret)
		return ret;
	*queue_id = args.queue_id;
	if (pasid)
		*pasid = args.pasid;
	return 0;
}

int kfdsim_queue_destroy(int fd, uint32_t queue_id)
{
	struct kfdsim_queue_destroy args = { .queue_id = queue_id };

	return sim_ioctl(fd, KFDSIM_IOC_QUEUE_DESTROY, &args);
}

int kfdsim_submit(int fd, uint32_t queue_id, const uint32_t *dwords, uint32_t count,
		  uint32_t flags, uint64_t *end_pos)
{
	struct kfdsim_submit args = {
		.queue_id = queue_id,
		.flags = flags,
		.dwords = (uintptr_t)dwords,
		.count_dwords = count,
	};
	int ret = sim_ioctl(fd, KFDSIM_IOC_SUBMIT, &args);

	if (!ret && end_pos)
		*end_pos = args.end_pos;
	return ret;
}

int kfdsim_submit_buf(int fd, uint32_t queue_id, const struct pm4_buf *b, uint64_t *end_pos)
{
	if (b->overflow)
		return -ENOSPC;
	if (!b->len)
		return -EINVAL;
	return kfdsim_submit(fd, queue_id, b->dw, (uint32_t)b->len, 0, end_pos);
}

int kfdsim_queue_status(int fd, uint32_t queue_id, struct kfdsim_queue_status *st)
{
	memset(st, 0, sizeof(*st));
	st->queue_id = queue_id;
	return sim_ioctl(fd, KFDSIM_IOC_QUEUE_STATUS, st);
}

int kfdsim_queue_wait(int fd, uint32_t queue_id, uint64_t pos, int64_t timeout_ms)
{
	struct kfdsim_queue_wait args = {
		.queue_id = queue_id,
		.pos = pos,
		.timeout_ns = timeout_ms < 0 ? INT64_MAX :
			      kfdsim_now_ns() + timeout_ms * 1000000,
	};

	/* The deadline is absolute: retrying after a signal keeps it. */
	return sim_ioctl(fd, KFDSIM_IOC_QUEUE_WAIT, &args);
}

int kfdsim_inject(int fd, uint32_t queue_id, uint32_t what)
{
	struct kfdsim_inject args = { .queue_id = queue_id, .flags = what };

	return sim_ioctl(fd, KFDSIM_IOC_INJECT, &args);
}

int kfdsim_debug_warn(int fd)
{
	return sim_ioctl(fd, KFDSIM_IOC_DEBUG_WARN, NULL);
}

const char *kfdsim_state_name(uint32_t state)
{
	switch (state) {
	case KFDSIM_QUEUE_RUNNING:
		return "running";
	case KFDSIM_QUEUE_ERROR:
		return "error";
	case KFDSIM_QUEUE_HUNG:
		return "hung";
	default:
		return "unknown";
	}
}
