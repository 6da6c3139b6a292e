/* SPDX-License-Identifier: MIT */
/*
 * The few amdkfd (/dev/kfd) ioctls tests use directly. <linux/kfd_ioctl.h>
 * cannot be included in userspace on Debian (it needs <drm/drm.h>), so the
 * definitions are restated here from the kernel's uAPI (KFD ioctl 1.14+ for
 * event ages).
 */
#ifndef KFDSYNC_TESTS_KFD_RAW_H
#define KFDSYNC_TESTS_KFD_RAW_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

struct kfd_raw_get_version_args {
	uint32_t major_version;
	uint32_t minor_version;
};

/* struct kfd_event_data: a 32-byte union, its signal member the age. */
struct kfd_raw_event_data {
	union {
		uint8_t exception_data[32];
		uint64_t last_event_age;
	};
	uint64_t kfd_event_data_ext;
	uint32_t event_id;
	uint32_t pad;
};

struct kfd_raw_wait_events_args {
	uint64_t events_ptr;
	uint32_t num_events;
	uint32_t wait_for_all;
	uint32_t timeout;
	uint32_t wait_result;
};

struct kfd_raw_create_event_args {
	uint64_t event_page_offset;
	uint32_t event_trigger_data;
	uint32_t event_type;
	uint32_t auto_reset;
	uint32_t node_id;
	uint32_t event_id;
	uint32_t event_slot_index;
};

struct kfd_raw_event_id_args {
	uint32_t event_id;
	uint32_t pad;
};

#define KFD_RAW_EVENT_SIGNAL		0

#define KFD_RAW_IOC_GET_VERSION	_IOR('K', 0x01, struct kfd_raw_get_version_args)
#define KFD_RAW_IOC_CREATE_EVENT	_IOWR('K', 0x08, struct kfd_raw_create_event_args)
#define KFD_RAW_IOC_DESTROY_EVENT	_IOW('K', 0x09, struct kfd_raw_event_id_args)
#define KFD_RAW_IOC_SET_EVENT		_IOW('K', 0x0A, struct kfd_raw_event_id_args)
#define KFD_RAW_IOC_WAIT_EVENTS	_IOWR('K', 0x0C, struct kfd_raw_wait_events_args)

/* Whether amdkfd reports event ages (KFD ioctl 1.14, Linux 6.5+). */
static inline bool kfd_raw_has_event_age(int kfd)
{
	struct kfd_raw_get_version_args v = { 0 };

	return !ioctl(kfd, KFD_RAW_IOC_GET_VERSION, &v) &&
	       (v.major_version > 1 || v.minor_version >= 14);
}

/*
 * amdkfd's own age of signal event @id: the times it set the event. The
 * query activates at once (it asks with an age the event cannot have) and
 * so consumes a pending auto-reset signal. 0 on failure.
 */
static inline uint64_t kfd_raw_event_age(int kfd, uint32_t id)
{
	struct kfd_raw_event_data ev = { .last_event_age = UINT64_MAX, .event_id = id };
	struct kfd_raw_wait_events_args a = {
		.events_ptr = (uintptr_t)&ev, .num_events = 1, .timeout = 0,
	};

	if (ioctl(kfd, KFD_RAW_IOC_WAIT_EVENTS, &a))
		return 0;
	return ev.last_event_age == UINT64_MAX ? 0 : ev.last_event_age;
}

#endif /* KFDSYNC_TESTS_KFD_RAW_H */
