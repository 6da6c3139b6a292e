// SPDX-License-Identifier: MIT
/*
 * What both forms of the export relay stand on (relay.c: the threads form,
 * relay_dispatch.c: the dispatch form): the context's relay state, its own
 * /dev/kfd and amdkfd's waits on it, reporting signals to the module, and
 * giving up an event the relay lost. Calls nothing of either form.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"
#include "relay.h"

int kfdsync_relays_new(struct kfdsync_ctx *ctx, struct kfdsync_relays **out)
{
	struct kfdsync_relays *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->armed_cond, NULL);
	r->ctx = ctx;
	r->enabled = true;
	r->dispatch = kfdsync_ctx_dispatching(ctx);
	r->kfd_fd = -1;
	r->timer_fd = -1;
	atomic_init(&r->have_relay_signals, true);
	*out = r;
	return 0;
}

/* ioctl(2) on /dev/kfd retried on EINTR/EAGAIN, as libhsakmt does. */
int kfdsync_kfd_wait(int kfd_fd, struct kfd_wait_event_data *ev, uint32_t n,
		     uint32_t timeout, uint32_t *result)
{
	struct kfd_wait_events_args a = {
		.events_ptr = (uintptr_t)ev, .num_events = n, .wait_for_all = 0,
		.timeout = timeout,
	};
	int ret = kfdsync_ioctl(kfd_fd, KFD_IOC_WAIT_EVENTS, &a);

	*result = a.wait_result;
	return ret;
}

/* Report @count signals of @event_id; 0, or -errno of the module. */
int kfdsync_relay_report(struct kfdsync_relays *rs, uint32_t event_id, uint64_t count)
{
	int ctx_fd = rs->ctx->fd;

	while (count) {
		uint32_t n = count > INT32_MAX ? INT32_MAX : (uint32_t)count;
		struct kfdsync_relay_signals s = { .event_id = event_id, .count = n };
		int ret = -EOPNOTSUPP;

		if (atomic_load(&rs->have_relay_signals))
			ret = kfdsync_ctx_ioctl(ctx_fd, KFDSYNC_IOCTL_RELAY_SIGNALS, &s);
		if (ret == -EOPNOTSUPP) {
			/* A module without RELAY_SIGNALS: one at a time. */
			struct kfdsync_relay_signal one = { .event_id = event_id };

			atomic_store(&rs->have_relay_signals, false);
			for (uint32_t i = 0; i < n; i++) {
				ret = kfdsync_ctx_ioctl(ctx_fd, KFDSYNC_IOCTL_RELAY_SIGNAL, &one);
				if (ret < 0)
					return ret;
			}
		} else if (ret < 0) {
			return ret;
		}
		count -= n;
	}
	return 0;
}

/*
 * Age mode: amdkfd's age of @event_id now, consuming a latched auto-reset
 * signal (a wait that returns at once). 0 and *@age, or -errno (-EINVAL:
 * amdkfd does not know the event).
 */
int kfdsync_kfd_probe_age(int kfd_fd, uint32_t event_id, uint64_t *age)
{
	struct kfd_wait_event_data ev = { .last_event_age = AGE_UNKNOWN, .event_id = event_id };
	uint32_t result;
	int ret = kfdsync_kfd_wait(kfd_fd, &ev, 1, 0, &result);

	if (ret < 0)
		return ret;
	if (result != KFD_WAIT_COMPLETE || ev.last_event_age == AGE_UNKNOWN)
		return -EPROTO;
	*age = ev.last_event_age;
	return 0;
}

void kfdsync_relay_lost(struct kfdsync_relays *rs, uint32_t event_id, int error)
{
	struct kfdsync_event_unregister arg = { .event_id = event_id };

	/* -ENOENT: the application unregistered it meanwhile; nothing lost. */
	if (kfdsync_ctx_ioctl(rs->ctx->fd, KFDSYNC_IOCTL_EVENT_UNREGISTER, &arg) == 0)
		kfdsync_ctx_fail(rs->ctx, error);
}

int kfdsync_relays_open(struct kfdsync_relays *rs)
{
	struct kfd_get_version_args v = { 0 };
	int fd;

	if (rs->kfd_fd >= 0)
		return 0;
	fd = kfdsync_open_device("/dev/kfd");
	if (fd < 0)
		return -ESRCH;
	rs->kfd_fd = fd;
	rs->ages = !kfdsync_ioctl(fd, KFD_IOC_GET_VERSION, &v) &&
		   (v.major_version > 1 || (v.major_version == 1 && v.minor_version >= 14));
	return 0;
}

int kfdsync_relays_set_event(struct kfdsync_relays *rs, uint32_t event_id)
{
	int ret, fd;

	pthread_mutex_lock(&rs->lock);
	ret = kfdsync_relays_open(rs);
	fd = rs->kfd_fd;
	pthread_mutex_unlock(&rs->lock);
	/* The fd stays open until kfdsync_relays_free(). */
	return ret ? ret : kfdsync_kfd_event_set(fd, event_id);
}

int kfdsync_relays_ages(struct kfdsync_relays *rs)
{
	int ret;

	pthread_mutex_lock(&rs->lock);
	ret = kfdsync_relays_open(rs);
	if (!ret)
		ret = rs->ages;
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

int kfdsync_relays_enable(struct kfdsync_relays *rs, bool enabled)
{
	pthread_mutex_lock(&rs->lock);
	rs->enabled = enabled;
	pthread_mutex_unlock(&rs->lock);
	return 0;
}
