/* SPDX-License-Identifier: MIT */
/*
 * Raw ioctl wrappers for /dev/kfdsync, /dev/kfdsync_timeline and sync_files,
 * for tests of the kernel interface itself (not through libkfdsync). Every
 * function returns 0, a non-negative value (an fd, a status), or -errno.
 */
#ifndef KFDSYNC_TESTS_KFDSYNC_RAW_H
#define KFDSYNC_TESTS_KFDSYNC_RAW_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kfdsync.h>
#include <linux/kfdsync_timeline.h>
#include <linux/sync_file.h>

#include "tap.h"

#define RAW_KFDSYNC_DEV		"/dev/kfdsync"

/*
 * Check that a call returning 0 / a value / -errno returned @want:
 *	tap_ret(raw_register(fd, 0, 0), -EINVAL, "register_id_zero");
 */
#define tap_ret(expr, want, ...)					\
	({								\
		int __r = (expr), __w = (want);				\
		if (__r != __w)						\
			tap_diag("got %d (%s), expected %d (%s)", __r,	\
				 __r < 0 ? strerror(-__r) : "ok", __w,	\
				 __w < 0 ? strerror(-__w) : "ok");	\
		tap_ok(__r == __w, __VA_ARGS__);			\
	})

static inline int raw_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	return ret < 0 ? -errno : ret;
}

static inline int raw_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * The slot address a test registers: @slot, or 0 in the "_noslot" runs
 * (KFDSYNC_TEST_NO_SLOT set by the launcher kfdsync_no_slot.c): the shape
 * of a discrete GPU's caller, whose events page is a GPU buffer with no
 * /dev/kfd events mapping to name. kfdsync finds the slot by id either way.
 */
static inline uint64_t raw_slot(uint64_t slot)
{
	return getenv("KFDSYNC_TEST_NO_SLOT") ? 0 : slot;
}

static inline int raw_register(int fd, uint32_t id, uint64_t slot)
{
	struct kfdsync_event_register a = { .event_id = id, .slot_addr = raw_slot(slot) };

	return raw_ioctl(fd, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
}

static inline int raw_unregister(int fd, uint32_t id)
{
	struct kfdsync_event_unregister a = { .event_id = id };

	return raw_ioctl(fd, KFDSYNC_IOCTL_EVENT_UNREGISTER, &a);
}

static inline int raw_query(int fd, uint32_t id, struct kfdsync_event_query *q)
{
	memset(q, 0, sizeof(*q));
	q->event_id = id;
	return raw_ioctl(fd, KFDSYNC_IOCTL_EVENT_QUERY, q);
}

/* The event's age, or UINT64_MAX if the query fails. */
static inline uint64_t raw_age(int fd, uint32_t id)
{
	struct kfdsync_event_query q;

	return raw_query(fd, id, &q) ? UINT64_MAX : q.age;
}

/* A sync_file fd for the next signal after @age, or -errno. */
static inline int raw_export(int fd, uint32_t id, uint64_t age, uint64_t deadline_ns)
{
	struct kfdsync_export a = { .event_id = id, .age = age, .deadline_ns = deadline_ns };
	int ret = raw_ioctl(fd, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, &a);

	return ret < 0 ? ret : a.fd;
}

static inline int raw_export_eventfd(int fd, uint32_t id, uint64_t age, int efd)
{
	struct kfdsync_export a = { .event_id = id, .age = age, .fd = efd };

	return raw_ioctl(fd, KFDSYNC_IOCTL_EXPORT_EVENTFD, &a);
}

static inline int raw_relay(int fd, uint32_t id)
{
	struct kfdsync_relay_signal a = { .event_id = id };

	return raw_ioctl(fd, KFDSYNC_IOCTL_RELAY_SIGNAL, &a);
}

static inline int raw_relays(int fd, uint32_t id, uint32_t count)
{
	struct kfdsync_relay_signals a = { .event_id = id, .count = count };

	return raw_ioctl(fd, KFDSYNC_IOCTL_RELAY_SIGNALS, &a);
}

/* A condition fence's sync_file fd, or -errno. */
static inline int raw_condition(int fd, uint32_t id, const void *value, uint32_t cond,
				int64_t compare, uint64_t deadline_ns)
{
	struct kfdsync_export_condition a = {
		.event_id = id, .value_addr = (uintptr_t)value, .condition = cond,
		.compare_value = compare, .deadline_ns = deadline_ns,
	};
	int ret = raw_ioctl(fd, KFDSYNC_IOCTL_EXPORT_CONDITION, &a);

	return ret < 0 ? ret : a.fd;
}

/* Import @fence: write @value (64-bit) at @addr when it ends. */
static inline int raw_import_memory(int fd, int fence, void *addr, uint64_t value,
				    uint64_t error_value)
{
	struct kfdsync_import a = {
		.fd = fence, .flags = KFDSYNC_IMPORT_MEMORY, .addr = (uintptr_t)addr,
		.value = value, .error_value = error_value,
	};

	return raw_ioctl(fd, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &a);
}

static inline int raw_status(int fd, struct kfdsync_status *st)
{
	memset(st, 0, sizeof(*st));
	return raw_ioctl(fd, KFDSYNC_IOCTL_STATUS, st);
}

static inline int raw_info(int fd, struct kfdsync_info *info)
{
	memset(info, 0, sizeof(*info));
	return raw_ioctl(fd, KFDSYNC_IOCTL_INFO, info);
}

/* SYNC_IOC_FILE_INFO's status: 1 signalled, 0 pending, <0 error; -1000-errno. */
static inline int raw_fence_status(int fd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return info.status;
}

/* 1 if @fd is readable (the fence ended) within @ms, else 0. */
static inline int raw_wait(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int ret;

	do
		ret = poll(&p, 1, ms);
	while (ret < 0 && errno == EINTR);
	return ret == 1 && (p.revents & POLLIN);
}

/* SYNC_IOC_MERGE of @a and @b: a new fd, or -errno. */
static inline int raw_merge(int a, int b)
{
	struct sync_merge_data m = { .fd2 = b };
	int ret;

	strcpy(m.name, "merge");
	ret = raw_ioctl(a, SYNC_IOC_MERGE, &m);
	return ret < 0 ? ret : m.fence;
}

/* A fence of timeline @tl for @value: a new sync_file fd, or -errno. */
static inline int raw_tl_fence(int tl, uint32_t value)
{
	struct kfdsync_tl_create_fence a = { .value = value };
	int ret;

	strcpy(a.name, "test");
	ret = raw_ioctl(tl, KFDSYNC_TL_IOC_CREATE_FENCE, &a);
	return ret < 0 ? ret : a.fence;
}

static inline int raw_tl_inc(int tl, uint32_t inc)
{
	return raw_ioctl(tl, KFDSYNC_TL_IOC_INC, &inc);
}

static inline int64_t raw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif /* KFDSYNC_TESTS_KFDSYNC_RAW_H */
