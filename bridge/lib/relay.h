/* SPDX-License-Identifier: MIT */
/*
 * What the two forms of the export relay share (relay_core.c: what both
 * stand on; relay.c: the threads form and the entry points; relay_dispatch.c:
 * the dispatch form). Not installed.
 */
#ifndef KFDSYNC_LIB_RELAY_H
#define KFDSYNC_LIB_RELAY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kfdsync.h"
#include "internal.h"

/*
 * amdkfd's uAPI (<linux/kfd_ioctl.h>, which needs <drm/drm.h> and is not in
 * Debian's linux-libc-dev for userspace), restated: struct kfd_event_data is
 * a 32-byte union (for signal events its first member is last_event_age),
 * a u64, the event id and padding; WAIT_EVENTS' argument is 24 bytes.
 */
struct kfd_wait_event_data {
	union {
		uint8_t exception_data[32];
		uint64_t last_event_age;
	};
	uint64_t kfd_event_data_ext;
	uint32_t event_id;
	uint32_t pad;
};

struct kfd_wait_events_args {
	uint64_t events_ptr;
	uint32_t num_events;
	uint32_t wait_for_all;
	uint32_t timeout;
	uint32_t wait_result;
};

struct kfd_get_version_args {
	uint32_t major_version;
	uint32_t minor_version;
};

#define KFD_IOC_GET_VERSION	_IOR('K', 0x01, struct kfd_get_version_args)
#define KFD_IOC_WAIT_EVENTS	_IOWR('K', 0x0C, struct kfd_wait_events_args)
#define KFD_WAIT_COMPLETE	0
#define KFD_TIMEOUT_INFINITE	0xffffffffU

/* Age mode: events per wait (one thread's, or one probe's of the dispatch form). */
#define RELAY_GROUP_MAX		1024
/* Threads form, age mode: threads per context (4 * 1024 > 4095). */
#define RELAY_MAX_GROUPS	4

/* An age amdkfd cannot report: a probe with it returns the age at once. */
#define AGE_UNKNOWN		UINT64_MAX

/* Dispatch form: one relayed event. */
struct dmember {
	uint32_t event_id;
	uint64_t age;		/* amdkfd's age last reported */
	int64_t until;		/* CLOCK_MONOTONIC: its exported fences have ended by then */
};

struct group;

/*
 * struct kfdsync_relays - a context's export relay
 *
 * @lock protects everything below but @have_relay_signals, and the
 * groups' shared fields (see struct group in relay.c).
 */
struct kfdsync_relays {
	struct kfdsync_ctx *ctx;
	pthread_mutex_t lock;
	pthread_cond_t armed_cond;
	bool enabled;
	bool dispatch;		/* the dispatch form: no thread */
	int kfd_fd;		/* our own /dev/kfd, -1 until the first relay */
	bool ages;		/* amdkfd reports event ages (age mode) */
	atomic_bool have_relay_signals; /* the module has KFDSYNC_IOCTL_RELAY_SIGNALS */
	uint64_t serial;
	/* threads form */
	struct group *groups[RELAY_MAX_GROUPS];	/* age mode */
	size_t n_groups;
	struct group *binary;	/* binary mode: one group per event */
	/* dispatch form (age mode only) */
	struct dmember *dm;
	size_t n_dm, cap_dm;
	struct kfd_wait_event_data *probe;	/* RELAY_GROUP_MAX entries */
	size_t *probe_idx;			/* which dm entry each is */
	int timer_fd;		/* in the context's poll fd; -1 until needed */
	bool timer_on;
	int64_t interval_ns;
	uint32_t watchdog_ms;	/* the context's default watchdog, 0 until read */
};

/* ioctl(2) on /dev/kfd: WAIT_EVENTS over @n events; 0 or -errno, *@result. */
int kfdsync_kfd_wait(int kfd_fd, struct kfd_wait_event_data *ev, uint32_t n,
		     uint32_t timeout, uint32_t *result);
/* Age mode: amdkfd's age of @event_id now (a wait that returns at once). */
int kfdsync_kfd_probe_age(int kfd_fd, uint32_t event_id, uint64_t *age);
/* Report @count signals of @event_id to the module; 0 or -errno. */
int kfdsync_relay_report(struct kfdsync_relays *rs, uint32_t event_id, uint64_t count);
/*
 * The relay can no longer relay @event_id (amdkfd does not know it, or
 * /dev/kfd failed): end its fences now, with -ECANCELED as the hooks do
 * when amdkfd destroys an event, by unregistering it, and record @error
 * for the application (kfdsync_ctx_dispatch()).
 */
void kfdsync_relay_lost(struct kfdsync_relays *rs, uint32_t event_id, int error);
/* The first relay of a context: our /dev/kfd and what amdkfd offers. Under @lock. */
int kfdsync_relays_open(struct kfdsync_relays *rs);

/* relay_dispatch.c, under @lock. */
int kfdsync_dispatch_add(struct kfdsync_relays *rs, uint32_t event_id, uint64_t age);
/* Take @event_id out (and out of ctx->relayed); was it relayed? */
bool kfdsync_dispatch_remove(struct kfdsync_relays *rs, uint32_t event_id);
void kfdsync_dispatch_free(struct kfdsync_relays *rs);

#endif
