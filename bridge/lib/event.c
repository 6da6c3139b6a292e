// SPDX-License-Identifier: MIT
/* KFD events as sync_files and eventfd wake-ups. */
#include <string.h>

#ifdef KFDSYNC_HAVE_HSAKMT
#include <hsakmt.h>
#endif

#include "kfdsync.h"
#include "internal.h"

KFDSYNC_EXPORT int kfdsync_event_add(struct kfdsync_ctx *ctx, uint32_t event_id,
				     uint64_t slot_addr, uint64_t *age)
{
	return kfdsync_event_add_relay(ctx, event_id, slot_addr, age, true);
}

/*
 * REGISTER, asking for the event's source in the reply (one system call);
 * a module that does not know KFDSYNC_REGISTER_REPORT refuses the flag
 * (EINVAL): then without it, and the source from EVENT_QUERY, from then on.
 * The source (KFDSYNC_SOURCE_*) or -errno.
 */
static int event_register(struct kfdsync_ctx *ctx, struct kfdsync_event_register *arg)
{
	struct kfdsync_event_query q;
	int ret;

	if (ctx->register_reply != 0) {
		arg->flags = KFDSYNC_REGISTER_REPORT;
		ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_EVENT_REGISTER, arg);
		if (ret == 0 && (arg->flags & (KFDSYNC_REGISTER_HOOKS | KFDSYNC_REGISTER_RELAY))) {
			ctx->register_reply = 1;
			return arg->flags & KFDSYNC_REGISTER_HOOKS ? KFDSYNC_SOURCE_HOOKS :
								     KFDSYNC_SOURCE_RELAY;
		}
		if (ret == 0)	/* unregistered by another thread meanwhile */
			return -ENOENT;
		if (ret != -EINVAL || ctx->register_reply == 1)
			return ret;
	}
	arg->flags = 0;
	ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_EVENT_REGISTER, arg);
	if (ret < 0)
		return ret;
	ctx->register_reply = 0;
	memset(&q, 0, sizeof(q));
	q.event_id = arg->event_id;
	ret = kfdsync_ctx_ioctl(ctx->fd, KFDSYNC_IOCTL_EVENT_QUERY, &q);
	return ret < 0 ? ret : (int)q.source;
}

int kfdsync_event_add_relay(struct kfdsync_ctx *ctx, uint32_t event_id,
			    uint64_t slot_addr, uint64_t *age, bool relay)
{
	struct kfdsync_event_register arg;
	int source, ret = 0;

	if (!ctx)
		return -EINVAL;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	arg.slot_addr = slot_addr;
	source = event_register(ctx, &arg);
	if (source < 0)
		return source;
	/* In relay mode, the library reports the event's signals (relay.c). */
	if (relay && source == KFDSYNC_SOURCE_RELAY)
		ret = kfdsync_relay_start(ctx->relays, event_id);
	if (ret < 0) {
		kfdsync_event_remove(ctx, event_id);
		return ret;
	}
	if (age)
		*age = arg.age;
	return 0;
}

KFDSYNC_EXPORT int kfdsync_event_add_hsa(struct kfdsync_ctx *ctx,
					 const struct _HsaEvent *event, uint64_t *age)
{
	if (!event)
		return -EINVAL;
#ifdef KFDSYNC_HAVE_HSAKMT
	return kfdsync_event_add(ctx, event->EventId, event->EventData.HWData2, age);
#else
	/* Built without libhsakmt's header: struct HsaEvent is unknown here. */
	(void)ctx;
	(void)age;
	return -EOPNOTSUPP;
#endif
}

KFDSYNC_EXPORT int kfdsync_event_remove(struct kfdsync_ctx *ctx, uint32_t event_id)
{
	struct kfdsync_event_unregister arg;
	int fd = kfdsync_ctx_fd(ctx), ret;

	if (fd < 0)
		return fd;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	ret = kfdsync_ctx_ioctl(fd, KFDSYNC_IOCTL_EVENT_UNREGISTER, &arg);
	/* Its relay, if any, has nothing left to report (with the hooks: none). */
	if ((ret == 0 || ret == -ENOENT) && atomic_load(&ctx->relayed))
		kfdsync_relay_stop(ctx->relays, event_id);
	return ret;
}

KFDSYNC_EXPORT int kfdsync_event_get_state(struct kfdsync_ctx *ctx, uint32_t event_id,
					   struct kfdsync_event_state *state)
{
	struct kfdsync_event_query arg;
	int fd = kfdsync_ctx_fd(ctx), ret;

	if (fd < 0)
		return fd;
	if (!state)
		return -EINVAL;
	/*
	 * Dispatch form: what amdkfd delivered so far is counted before the
	 * age is read, as a relay thread would have counted it.
	 */
	if (kfdsync_ctx_dispatching(ctx) && atomic_load(&ctx->relayed))
		kfdsync_relay_catch_up(ctx->relays, event_id);
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	ret = kfdsync_ctx_ioctl(fd, KFDSYNC_IOCTL_EVENT_QUERY, &arg);
	if (ret < 0)
		return ret;
	memset(state, 0, sizeof(*state));
	state->age = arg.age;
	state->error = arg.error;
	state->pending = arg.pending;
	state->source = arg.source;
	state->last_status = arg.last_status;
	return 0;
}

KFDSYNC_EXPORT int kfdsync_event_relay(struct kfdsync_ctx *ctx, uint32_t event_id)
{
	struct kfdsync_relay_signal arg;
	int fd = kfdsync_ctx_fd(ctx);

	if (fd < 0)
		return fd;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	return kfdsync_ctx_ioctl(fd, KFDSYNC_IOCTL_RELAY_SIGNAL, &arg);
}

/* The module takes absolute CLOCK_MONOTONIC deadlines; 0 is its default. */
static uint64_t watchdog_deadline(int64_t watchdog_ns)
{
	if (watchdog_ns <= 0)
		return 0;
	return (uint64_t)kfdsync_now_ns() + (uint64_t)watchdog_ns;
}

static int export(struct kfdsync_ctx *ctx, unsigned long req, uint32_t event_id,
		  uint64_t age, int64_t watchdog_ns, int eventfd)
{
	struct kfdsync_export arg;
	int fd = kfdsync_ctx_fd(ctx), ret;

	if (fd < 0)
		return fd;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	arg.age = age;
	arg.deadline_ns = watchdog_deadline(watchdog_ns);
	arg.fd = eventfd;
	ret = kfdsync_ctx_ioctl(fd, req, &arg);
	if (ret < 0)
		return ret;
	/*
	 * Dispatch form: the relay watches the event while the fence may pend.
	 * With the hooks nothing is relayed, and no relay code runs.
	 */
	if (kfdsync_ctx_dispatching(ctx) && atomic_load(&ctx->relayed))
		kfdsync_relay_exported(ctx->relays, event_id, (int64_t)arg.deadline_ns);
	return arg.fd;
}

KFDSYNC_EXPORT int kfdsync_event_export_sync_file(struct kfdsync_ctx *ctx, uint32_t event_id,
						  uint64_t age, int64_t watchdog_ns)
{
	return export(ctx, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, event_id, age, watchdog_ns, -1);
}

KFDSYNC_EXPORT int kfdsync_event_export_eventfd(struct kfdsync_ctx *ctx, uint32_t event_id,
						uint64_t age, int64_t watchdog_ns, int eventfd)
{
	int ret;

	if (eventfd < 0)
		return -EINVAL;
	ret = export(ctx, KFDSYNC_IOCTL_EXPORT_EVENTFD, event_id, age, watchdog_ns, eventfd);
	return ret < 0 ? ret : 0;
}
