// SPDX-License-Identifier: MIT
/* KFD events as sync_files and eventfd wake-ups. */
#include <hsakmt.h>
#include <string.h>

#include "kfdsync.h"
#include "internal.h"

/* In relay mode, the library reports the event's signals (relay.c). */
static int relay_if_needed(struct kfdsync_ctx *ctx, uint32_t event_id, uint64_t slot_addr)
{
	struct kfdsync_event_state st;
	int ret = kfdsync_event_get_state(ctx, event_id, &st);

	if (ret < 0 || st.source != KFDSYNC_SOURCE_RELAY)
		return ret;
	return kfdsync_relay_start(ctx->relays, kfdsync_ctx_fd(ctx), event_id,
				   slot_addr);
}

KFDSYNC_EXPORT int kfdsync_event_add(struct kfdsync_ctx *ctx, uint32_t event_id,
				     uint64_t slot_addr, uint64_t *age)
{
	return kfdsync_event_add_relay(ctx, event_id, slot_addr, age, true);
}

int kfdsync_event_add_relay(struct kfdsync_ctx *ctx, uint32_t event_id,
			    uint64_t slot_addr, uint64_t *age, bool relay)
{
	struct kfdsync_event_register arg;
	int fd = kfdsync_ctx_fd(ctx), ret;

	if (fd < 0)
		return fd;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	arg.slot_addr = slot_addr;
	ret = kfdsync_ioctl(fd, KFDSYNC_IOCTL_EVENT_REGISTER, &arg);
	if (ret < 0)
		return ret;
	ret = relay ? relay_if_needed(ctx, event_id, slot_addr) : 0;
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
	return kfdsync_event_add(ctx, event->EventId, event->EventData.HWData2, age);
}

KFDSYNC_EXPORT int kfdsync_event_remove(struct kfdsync_ctx *ctx, uint32_t event_id)
{
	struct kfdsync_event_unregister arg;
	int fd = kfdsync_ctx_fd(ctx), ret;

	if (fd < 0)
		return fd;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	ret = kfdsync_ioctl(fd, KFDSYNC_IOCTL_EVENT_UNREGISTER, &arg);
	/* Its relay, if any, has nothing left to report. */
	if (ret == 0 || ret == -ENOENT)
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
	memset(&arg, 0, sizeof(arg));
	arg.event_id = event_id;
	ret = kfdsync_ioctl(fd, KFDSYNC_IOCTL_EVENT_QUERY, &arg);
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
	return kfdsync_ioctl(fd, KFDSYNC_IOCTL_RELAY_SIGNAL, &arg);
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
	ret = kfdsync_ioctl(fd, req, &arg);
	return ret < 0 ? ret : arg.fd;
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
