// SPDX-License-Identifier: MIT
/*
 * HSA signals: a watched condition on the signal's value, woken by its KFD
 * event (export), and imports that store into a signal and set its event.
 * No libhsa-runtime here: amd_signal_t is read at its documented offsets.
 */
#include <string.h>

#include "kfdsync.h"
#include "internal.h"

/* ROCr's amd_signal_t (amd_hsa_signal.h): the fields kfdsync needs. */
#define AMD_SIGNAL_KIND_USER		1
#define AMD_SIGNAL_OFF_KIND		0
#define AMD_SIGNAL_OFF_VALUE		8
#define AMD_SIGNAL_OFF_MAILBOX		16
#define AMD_SIGNAL_OFF_EVENT_ID		24

KFDSYNC_EXPORT int kfdsync_hsa_signal_from_amd_signal(const void *amd_signal,
						      struct kfdsync_hsa_signal *sig)
{
	const unsigned char *p = amd_signal;
	int64_t kind;
	uint64_t mailbox;
	uint32_t event_id;

	if (!p || !sig || (uintptr_t)p % 8)
		return -EINVAL;
	memcpy(&kind, p + AMD_SIGNAL_OFF_KIND, sizeof(kind));
	memcpy(&mailbox, p + AMD_SIGNAL_OFF_MAILBOX, sizeof(mailbox));
	memcpy(&event_id, p + AMD_SIGNAL_OFF_EVENT_ID, sizeof(event_id));
	if (kind != AMD_SIGNAL_KIND_USER || !mailbox || !event_id)
		return -EINVAL;
	memset(sig, 0, sizeof(*sig));
	sig->value = (int64_t *)(uintptr_t)(p + AMD_SIGNAL_OFF_VALUE);
	sig->mailbox = mailbox;
	sig->event_id = event_id;
	return 0;
}

/* Register the signal's event with the context unless it is already. */
static int hsa_signal_register(struct kfdsync_ctx *ctx, const struct kfdsync_hsa_signal *sig)
{
	int ret;

	if (!sig || sig->reserved)
		return -EINVAL;
	/*
	 * Never with a relay: ROCr's own threads wait on the signal's event,
	 * and a relay would take their wake-ups (see kfdsync.h, "The relay").
	 */
	ret = kfdsync_event_register_relay(ctx, sig->event_id, sig->mailbox, NULL, false);
	return ret == -EEXIST ? 0 : ret;
}

static int export_condition(struct kfdsync_ctx *ctx, const struct kfdsync_hsa_signal *sig,
			    enum kfdsync_hsa_condition condition, int64_t compare_value,
			    int64_t watchdog_ns, int eventfd)
{
	struct kfdsync_export_condition arg;
	int fd = kfdsync_ctx_fd(ctx), ret;

	if (fd < 0)
		return fd;
	ret = hsa_signal_register(ctx, sig);
	if (ret < 0)
		return ret;
	memset(&arg, 0, sizeof(arg));
	arg.event_id = sig->event_id;
	arg.flags = eventfd >= 0 ? KFDSYNC_CONDITION_EVENTFD : 0;
	arg.value_addr = (uint64_t)(uintptr_t)sig->value;
	arg.compare_value = compare_value;
	arg.deadline_ns = watchdog_ns > 0 ? (uint64_t)(kfdsync_now_ns() + watchdog_ns) : 0;
	arg.condition = (uint32_t)condition;
	arg.fd = eventfd;
	ret = kfdsync_ioctl(fd, KFDSYNC_IOCTL_EXPORT_CONDITION, &arg);
	return ret < 0 ? ret : arg.fd;
}

KFDSYNC_EXPORT int kfdsync_hsa_signal_export_sync_file(struct kfdsync_ctx *ctx,
						       const struct kfdsync_hsa_signal *sig,
						       enum kfdsync_hsa_condition condition,
						       int64_t compare_value, int64_t watchdog_ns)
{
	return export_condition(ctx, sig, condition, compare_value, watchdog_ns, -1);
}

KFDSYNC_EXPORT int kfdsync_hsa_signal_export_eventfd(struct kfdsync_ctx *ctx,
						     const struct kfdsync_hsa_signal *sig,
						     enum kfdsync_hsa_condition condition,
						     int64_t compare_value, int64_t watchdog_ns,
						     int eventfd)
{
	int ret;

	if (eventfd < 0)
		return -EINVAL;
	ret = export_condition(ctx, sig, condition, compare_value, watchdog_ns, eventfd);
	return ret < 0 ? ret : 0;
}

KFDSYNC_EXPORT int kfdsync_hsa_signal_import_sync_file(struct kfdsync_ctx *ctx,
						       int sync_file_fd,
						       const struct kfdsync_hsa_signal *sig,
						       uint32_t flags, int64_t value,
						       int64_t error_value)
{
	struct kfdsync_import_desc desc;

	if (!sig || sig->reserved || (flags & ~KFDSYNC_HSA_IMPORT_SUBTRACT))
		return -EINVAL;
	memset(&desc, 0, sizeof(desc));
	/* The value first, then the event: a woken waiter finds it written. */
	desc.flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_SET_EVENT;
	if (flags & KFDSYNC_HSA_IMPORT_SUBTRACT)
		desc.flags |= KFDSYNC_IMPORT_SUB;
	desc.event_id = sig->event_id;
	desc.addr = sig->value;
	desc.value = (uint64_t)value;
	desc.error_value = (uint64_t)error_value;
	return kfdsync_import_sync_file(ctx, sync_file_fd, &desc);
}
