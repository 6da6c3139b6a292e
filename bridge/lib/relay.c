// SPDX-License-Identifier: MIT
/*
 * The export relay: in relay mode (KFDSYNC_SOURCE_RELAY, the module's hooks
 * are not attached) kfdsync.ko does not see amdkfd signal the caller's
 * events, so the library reports them: one thread per relayed event waits on
 * it with libhsakmt and calls KFDSYNC_IOCTL_RELAY_SIGNAL for every wake-up.
 *
 * Why one thread per event, and why no timeout:
 *
 * - A relay must never wait with a timeout. On Linux 6.1, amdkfd loses an
 *   auto-reset signal that lands just as a timed wait expires (set_event()
 *   sees a queued waiter and does not latch the signal, but the waiter has
 *   already chosen TIMEOUT; free_waiters() restores the signal only for
 *   -ERESTARTSYS). See kmod/README.md. So each thread waits forever, on its
 *   event and on a private stop event, with WaitOnAll false.
 * - amdkfd's multi-wait does not say which event fired. With exactly two
 *   events, the stop event and a stop flag written before it is set, a wake
 *   with the flag clear is the relayed event's signal.
 *
 * The thread count is bounded by the module's max_events per context. Each
 * thread has a small stack and blocks every signal; it is stopped by setting
 * its stop event and joined, never cancelled. Nothing polls.
 */
#include <hsakmt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdsync.h"
#include "internal.h"

/* Enough for libhsakmt's wait (it mallocs its arrays) and ASan's frames. */
#define RELAY_STACK_SIZE (256 * 1024)

struct relay {
	struct relay *next;	/* in relays.list, under relays.lock */
	int ctx_fd;
	uint32_t event_id;
	HsaEvent event;		/* our copy: the caller may free theirs */
	HsaEvent *stop_event;	/* manual-reset, set only to end the thread */
	atomic_bool stop;	/* written before stop_event is set */
	pthread_t thread;
	pid_t pid;		/* the process the thread runs in */
};

struct kfdsync_relays {
	pthread_mutex_t lock;	/* protects list and enabled */
	struct relay *list;
	bool enabled;
};

int kfdsync_relays_new(struct kfdsync_relays **out)
{
	struct kfdsync_relays *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	r->enabled = true;
	*out = r;
	return 0;
}

static void *relay_main(void *arg)
{
	struct relay *r = arg;
	HsaEvent *events[2] = { &r->event, r->stop_event };
	struct kfdsync_relay_signal sig = { .event_id = r->event_id };

	for (;;) {
		HSAKMT_STATUS st = hsaKmtWaitOnMultipleEvents(events, 2, false,
							      HSA_EVENTTIMEOUT_INFINITE);

		if (atomic_load(&r->stop))
			break;
		/*
		 * An error (the event was destroyed, /dev/kfd went away) would
		 * come back at once on every retry: end instead of spinning.
		 */
		if (st != HSAKMT_STATUS_SUCCESS)
			break;
		/*
		 * ENOENT (unregistered behind our back), EBUSY (the hooks are
		 * the source after all), EPERM: nothing left to relay.
		 */
		if (kfdsync_ioctl(r->ctx_fd, KFDSYNC_IOCTL_RELAY_SIGNAL, &sig) < 0)
			break;
	}
	return NULL;
}

static void relay_destroy(struct relay *r)
{
	/*
	 * In a child of fork(2) the thread and the amdkfd events do not
	 * exist: joining would wait forever. Only free our copy.
	 */
	if (getpid() != r->pid) {
		free(r);
		return;
	}
	atomic_store(&r->stop, true);
	hsaKmtSetEvent(r->stop_event);
	pthread_join(r->thread, NULL);
	hsaKmtDestroyEvent(r->stop_event);
	hsaKmtCloseKFD();
	free(r);
}

static int relay_create(int ctx_fd, uint32_t event_id, uint64_t slot_addr,
			struct relay **out)
{
	HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };
	sigset_t all, old;
	pthread_attr_t attr;
	HSAKMT_STATUS st;
	struct relay *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->ctx_fd = ctx_fd;
	r->event_id = event_id;
	r->event.EventId = event_id;
	r->event.EventData.EventType = HSA_EVENTTYPE_SIGNAL;
	r->event.EventData.HWData2 = slot_addr;
	atomic_init(&r->stop, false);
	r->pid = getpid();

	/*
	 * Our own reference on libhsakmt's /dev/kfd, for the thread's life
	 * (a second open counts up and says KERNEL_ALREADY_OPENED).
	 */
	st = hsaKmtOpenKFD();
	if (st != HSAKMT_STATUS_SUCCESS && st != HSAKMT_STATUS_KERNEL_ALREADY_OPENED) {
		ret = -ESRCH;
		goto err_free;
	}
	if (hsaKmtCreateEvent(&desc, true, false, &r->stop_event) != HSAKMT_STATUS_SUCCESS) {
		ret = -ENOSPC;
		goto err_close_kfd;
	}

	/*
	 * A signal latched before the registration is not one kfdsync may
	 * count: consume it. A zero timeout cannot lose a later signal here,
	 * since the caller submits the work that signals only after
	 * registering (the documented pattern).
	 */
	hsaKmtWaitOnEvent(&r->event, 0);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, RELAY_STACK_SIZE);
	/* The application's signal handlers never run on our thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&r->thread, &attr, relay_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret)
		goto err_destroy_event;
	*out = r;
	return 0;

err_destroy_event:
	hsaKmtDestroyEvent(r->stop_event);
err_close_kfd:
	hsaKmtCloseKFD();
err_free:
	free(r);
	return ret;
}

int kfdsync_relay_start(struct kfdsync_relays *rs, int ctx_fd, uint32_t event_id,
			uint64_t slot_addr)
{
	struct relay *r;
	int ret = 0;

	pthread_mutex_lock(&rs->lock);
	if (!rs->enabled)
		goto out;
	for (r = rs->list; r; r = r->next)
		if (r->event_id == event_id)
			goto out;	/* cannot happen: registered twice */
	ret = relay_create(ctx_fd, event_id, slot_addr, &r);
	if (ret == 0) {
		r->next = rs->list;
		rs->list = r;
	}
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

void kfdsync_relay_stop(struct kfdsync_relays *rs, uint32_t event_id)
{
	struct relay **p, *r = NULL;

	pthread_mutex_lock(&rs->lock);
	for (p = &rs->list; *p; p = &(*p)->next) {
		if ((*p)->event_id == event_id) {
			r = *p;
			*p = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&rs->lock);
	/* Joined outside the lock: other events' relays stay usable. */
	if (r)
		relay_destroy(r);
}

int kfdsync_relays_enable(struct kfdsync_relays *rs, bool enabled)
{
	pthread_mutex_lock(&rs->lock);
	rs->enabled = enabled;
	pthread_mutex_unlock(&rs->lock);
	return 0;
}

void kfdsync_relays_free(struct kfdsync_relays *rs)
{
	struct relay *r, *next;

	if (!rs)
		return;
	for (r = rs->list; r; r = next) {
		next = r->next;
		relay_destroy(r);
	}
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}
