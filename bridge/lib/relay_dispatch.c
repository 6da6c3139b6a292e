// SPDX-License-Identifier: MIT
/*
 * The export relay's dispatch form (KFDSYNC_CTX_DISPATCH): relay mode with
 * no thread of the library. amdkfd offers nothing an event loop can poll
 * for a signal event (no .poll on /dev/kfd), so the relay asks it instead,
 * from the application's thread, with waits that return at once
 * (AMDKFD_IOC_WAIT_EVENTS, timeout 0), on a timer of the context's poll fd
 * (kfdsync_ctx_get_poll_fd()) that runs only while a relayed event has
 * fences that may still be pending.
 *
 * Only with event ages (KFD ioctl 1.14, Linux 6.5+): a wait that passes the
 * age it knows returns the new age whenever the event was set since, so a
 * signal that lands while a probe is being taken down still moves the age
 * that the next probe reads: nothing is lost, and one probe serves up to
 * RELAY_GROUP_MAX events. Without ages a probe can lose such a signal
 * (relay.c, "Never a timeout"), so kfdsync_relay_start() refuses the
 * dispatch form there with -EOPNOTSUPP.
 *
 * A fence exported for an event must not signal on a signal that happened
 * before its age was read: so kfdsync_event_get_state() first reports what
 * amdkfd delivered so far (kfdsync_relay_catch_up()), as the threads form's
 * waiting thread would have. The timer runs while an event has an exported
 * fence whose watchdog has not passed and that kfdsync still counts as
 * pending; each tick probes those events only.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"
#include "relay.h"

/* The poll interval unless kfdsync_ctx_set_dispatch_interval() says otherwise. */
#define DISPATCH_INTERVAL_NS	1000000

static struct dmember *find(struct kfdsync_relays *rs, uint32_t event_id)
{
	for (size_t i = 0; i < rs->n_dm; i++)
		if (rs->dm[i].event_id == event_id)
			return &rs->dm[i];
	return NULL;
}

int kfdsync_dispatch_add(struct kfdsync_relays *rs, uint32_t event_id, uint64_t age)
{
	if (!rs->probe) {
		rs->probe = calloc(RELAY_GROUP_MAX, sizeof(*rs->probe));
		rs->probe_idx = calloc(RELAY_GROUP_MAX, sizeof(*rs->probe_idx));
		if (!rs->probe || !rs->probe_idx)
			return -ENOMEM;
	}
	if (rs->n_dm == rs->cap_dm) {
		size_t cap = rs->cap_dm ? 2 * rs->cap_dm : 16;
		struct dmember *dm = realloc(rs->dm, cap * sizeof(*dm));

		if (!dm)
			return -ENOMEM;
		rs->dm = dm;
		rs->cap_dm = cap;
	}
	rs->dm[rs->n_dm++] = (struct dmember){ .event_id = event_id, .age = age };
	return 0;
}

bool kfdsync_dispatch_remove(struct kfdsync_relays *rs, uint32_t event_id)
{
	struct dmember *m = find(rs, event_id);

	/* Synchronous by nature: no wait of ours outlives a probe. */
	if (!m)
		return false;
	*m = rs->dm[--rs->n_dm];
	atomic_fetch_sub(&rs->ctx->relayed, 1);
	return true;
}

void kfdsync_dispatch_free(struct kfdsync_relays *rs)
{
	/* Closing the timer takes it out of the poll fd too. */
	if (rs->timer_fd >= 0)
		close(rs->timer_fd);
	free(rs->dm);
	free(rs->probe);
	free(rs->probe_idx);
}

/* Start or stop the tick; under rs->lock. 0 or -errno. */
static int timer_set(struct kfdsync_relays *rs, bool on)
{
	int64_t ns = rs->interval_ns ? rs->interval_ns : DISPATCH_INTERVAL_NS;
	struct itimerspec its = { 0 };
	int ret;

	if (on == rs->timer_on)
		return 0;
	if (rs->timer_fd < 0) {
		rs->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (rs->timer_fd < 0)
			return -errno;
		ret = kfdsync_loop_add(rs->ctx, rs->timer_fd, KFDSYNC_LOOP_TIMER);
		if (ret) {
			close(rs->timer_fd);
			rs->timer_fd = -1;
			return ret;
		}
	}
	if (on) {
		its.it_interval.tv_sec = ns / 1000000000;
		its.it_interval.tv_nsec = ns % 1000000000;
		its.it_value = its.it_interval;
	}
	if (timerfd_settime(rs->timer_fd, 0, &its, NULL))
		return -errno;
	rs->timer_on = on;
	return 0;
}

/* The event's fences kfdsync still counts as pending; 0 when it does not know it. */
static uint32_t pending_of(struct kfdsync_relays *rs, uint32_t event_id)
{
	struct kfdsync_event_query q = { .event_id = event_id };

	return kfdsync_ctx_ioctl(rs->ctx->fd, KFDSYNC_IOCTL_EVENT_QUERY, &q) ? 0 : q.pending;
}

void kfdsync_relay_exported(struct kfdsync_relays *rs, uint32_t event_id, int64_t deadline_ns)
{
	struct dmember *m;

	pthread_mutex_lock(&rs->lock);
	m = rs->dispatch ? find(rs, event_id) : NULL;
	if (!m)
		goto out;
	if (!deadline_ns) {
		/* The module's default watchdog, the context's for its life. */
		if (!rs->watchdog_ms) {
			struct kfdsync_info info = { 0 };

			if (!kfdsync_ctx_ioctl(rs->ctx->fd, KFDSYNC_IOCTL_INFO, &info))
				rs->watchdog_ms = info.watchdog_ms;
			if (!rs->watchdog_ms)
				rs->watchdog_ms = 60000;
		}
		deadline_ns = kfdsync_now_ns() + (int64_t)rs->watchdog_ms * 1000000;
	}
	/* Born signalled (its work is done): nothing to watch for it. */
	if (!pending_of(rs, event_id))
		goto out;
	if (deadline_ns > m->until)
		m->until = deadline_ns;
	if (timer_set(rs, true))
		kfdsync_ctx_fail(rs->ctx, -ENOMEM);
out:
	pthread_mutex_unlock(&rs->lock);
}

/*
 * Probe @n events of rs->probe (built from rs->dm by the caller) once.
 * Reports what moved; an event amdkfd no longer knows is lost; a failure of
 * /dev/kfd itself loses every event. Returns the signals reported. Under
 * rs->lock; rs->dm may shrink (the caller rebuilds its probes after).
 */
static int probe_events(struct kfdsync_relays *rs, size_t n)
{
	uint32_t result = 0;
	int ret, count = 0;

	ret = kfdsync_kfd_wait(rs->kfd_fd, rs->probe, (uint32_t)n, 0, &result);
	if (ret == -EINVAL || ret == -EIO) {
		/* One event is unknown: find it, probe by probe. */
		for (size_t i = 0; i < n; i++) {
			struct dmember *m = find(rs, rs->probe[i].event_id);
			uint64_t age;

			if (!m)
				continue;
			ret = kfdsync_kfd_probe_age(rs->kfd_fd, m->event_id, &age);
			if (ret == -EINVAL || ret == -EIO) {
				uint32_t id = m->event_id;

				kfdsync_dispatch_remove(rs, id);
				kfdsync_relay_lost(rs, id, -EIDRM);
			} else if (ret < 0) {
				break;
			} else if (age != m->age) {
				if (!kfdsync_relay_report(rs, m->event_id, age - m->age))
					count++;
				m->age = age;
			}
		}
		if (ret >= 0 || ret == -EINVAL || ret == -EIO)
			return count;
	}
	if (ret < 0 && ret != -ENOMEM) {
		/* /dev/kfd failed: nothing can be relayed any more. */
		while (rs->n_dm) {
			uint32_t id = rs->dm[0].event_id;

			kfdsync_dispatch_remove(rs, id);
			kfdsync_relay_lost(rs, id, ret);
		}
		return count;
	}
	if (ret < 0 || result != KFD_WAIT_COMPLETE)
		return count;
	for (size_t i = 0; i < n; i++) {
		struct dmember *m = &rs->dm[rs->probe_idx[i]];
		uint64_t now = rs->probe[i].last_event_age;

		if (now == m->age)
			continue;
		if (!kfdsync_relay_report(rs, m->event_id, now - m->age))
			count++;
		m->age = now;
		/* Every fence of it ended: stop watching until the next export. */
		if (!pending_of(rs, m->event_id))
			m->until = 0;
	}
	return count;
}

void kfdsync_relay_catch_up(struct kfdsync_relays *rs, uint32_t event_id)
{
	struct dmember *m;

	pthread_mutex_lock(&rs->lock);
	m = rs->dispatch ? find(rs, event_id) : NULL;
	if (m) {
		memset(rs->probe, 0, sizeof(rs->probe[0]));
		rs->probe[0].event_id = m->event_id;
		rs->probe[0].last_event_age = m->age;
		rs->probe_idx[0] = (size_t)(m - rs->dm);
		probe_events(rs, 1);
	}
	pthread_mutex_unlock(&rs->lock);
}

int kfdsync_relays_dispatch(struct kfdsync_relays *rs)
{
	int64_t now = kfdsync_now_ns();
	bool watching = false;
	uint64_t ticks;
	size_t i = 0;
	int count = 0;

	pthread_mutex_lock(&rs->lock);
	if (!rs->dispatch || rs->timer_fd < 0)
		goto out;
	/* The tick's count is of no interest: each probe reads amdkfd's ages. */
	if (read(rs->timer_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		kfdsync_ctx_fail(rs->ctx, -errno);
	while (i < rs->n_dm) {
		size_t n = 0, before = rs->n_dm;

		for (; i < rs->n_dm && n < RELAY_GROUP_MAX; i++) {
			struct dmember *m = &rs->dm[i];

			if (m->until <= now) {
				m->until = 0;
				continue;
			}
			memset(&rs->probe[n], 0, sizeof(rs->probe[n]));
			rs->probe[n].event_id = m->event_id;
			rs->probe[n].last_event_age = m->age;
			rs->probe_idx[n++] = i;
		}
		if (!n)
			break;
		count += probe_events(rs, n);
		/* Events were lost (and dropped): start over, ages are absolute. */
		if (rs->n_dm != before)
			i = 0;
	}
	for (i = 0; i < rs->n_dm; i++)
		watching |= rs->dm[i].until > now;
	if (timer_set(rs, watching))
		kfdsync_ctx_fail(rs->ctx, -ENOMEM);
out:
	pthread_mutex_unlock(&rs->lock);
	return count;
}

int kfdsync_relays_set_interval(struct kfdsync_relays *rs, int64_t interval_ns)
{
	bool on;
	int ret;

	pthread_mutex_lock(&rs->lock);
	rs->interval_ns = interval_ns;
	on = rs->timer_on;
	/* A running timer takes the new interval at once. */
	rs->timer_on = false;
	ret = on ? timer_set(rs, true) : 0;
	pthread_mutex_unlock(&rs->lock);
	return ret;
}
