/* SPDX-License-Identifier: MIT */
/**
 * @file kfdsync_hsa.h
 * @brief libkfdsync over ROCr's hsa_signal_t (header only).
 *
 * Thin inline wrappers of the @ref hsa functions of <kfdsync.h> that take
 * an hsa_signal_t. Including this header needs ROCr's headers (<hsa/hsa.h>,
 * Debian's libhsa-runtime-dev); libkfdsync itself does not link
 * libhsa-runtime. In ROCr an hsa_signal_t's handle is the address of its
 * amd_signal_t. Only interrupt-capable signals (ROCr's default for
 * hsa_signal_create()) have a KFD event; others give `-EINVAL`.
 *
 * The hint. kfdsync checks a signal's value when its KFD event is signalled.
 * A GPU completion always signals it, but ROCr (5.2) sets the event on a CPU
 * store or subtract only while some thread of the process waits on the
 * signal in ROCr. So the export wrappers below first register a ROCr async
 * handler (hsa_amd_signal_async_handler()) with the same condition: while it
 * is registered, ROCr's event thread waits on the signal and every CPU store
 * sets the event; when ROCr sees the condition hold, the handler sets the
 * event once more (hsaKmtSetEvent(), which covers a store made before the
 * event thread started waiting) and unregisters itself. The value is still
 * the truth: kfdsync checks it in the kernel at every such hint. Do not
 * destroy a signal while such a handler may still be registered (its
 * condition has not held yet): as with any ROCr async handler. Link with
 * libhsa-runtime64 and libhsakmt.
 */
#ifndef KFDSYNC_HSA_H
#define KFDSYNC_HSA_H

#include <errno.h>
#include <string.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsakmt.h>

#include <kfdsync.h>

#ifdef __cplusplus
extern "C" {
#endif

/** kfdsync_hsa_signal_from_amd_signal() of an hsa_signal_t. */
static inline int kfdsync_hsa_signal_describe(hsa_signal_t signal,
					      struct kfdsync_hsa_signal *sig)
{
	return kfdsync_hsa_signal_from_amd_signal((const void *)(uintptr_t)signal.handle, sig);
}

/*
 * ROCr async handler: the condition held; set the signal's KFD event so that
 * kfdsync looks at the value, and stop.
 */
static inline bool kfdsync_hsa_hint_handler_(hsa_signal_value_t value, void *arg)
{
	HsaEvent ev;

	(void)value;
	memset(&ev, 0, sizeof(ev));
	ev.EventId = (HSA_EVENTID)(uintptr_t)arg;
	ev.EventData.EventType = HSA_EVENTTYPE_SIGNAL;
	hsaKmtSetEvent(&ev);
	return false;
}

/* Make ROCr set the signal's event on CPU stores until the condition holds. */
static inline int kfdsync_hsa_arm_hint_(hsa_signal_t signal, const struct kfdsync_hsa_signal *sig,
					hsa_signal_condition_t condition,
					hsa_signal_value_t compare_value)
{
	if (hsa_amd_signal_async_handler(signal, condition, compare_value,
					 kfdsync_hsa_hint_handler_,
					 (void *)(uintptr_t)sig->event_id) != HSA_STATUS_SUCCESS)
		return -EINVAL;
	return 0;
}

/**
 * A sync_file that signals when @p signal satisfies @p condition against
 * @p compare_value (see kfdsync_hsa_signal_export_sync_file()), after
 * arming ROCr's hint (see above).
 *
 * @return the sync_file fd (the caller closes it), `-EINVAL` also when ROCr
 *   refuses the async handler, or a negative errno.
 */
static inline int kfdsync_hsa_export_sync_file(struct kfdsync_ctx *ctx, hsa_signal_t signal,
					       hsa_signal_condition_t condition,
					       hsa_signal_value_t compare_value,
					       int64_t watchdog_ns)
{
	struct kfdsync_hsa_signal sig;
	int ret = kfdsync_hsa_signal_describe(signal, &sig);

	if (ret < 0)
		return ret;
	ret = kfdsync_hsa_arm_hint_(signal, &sig, condition, compare_value);
	if (ret < 0)
		return ret;
	return kfdsync_hsa_signal_export_sync_file(ctx, &sig,
						   (enum kfdsync_hsa_condition)condition,
						   compare_value, watchdog_ns);
}

/**
 * Add 1 to @p eventfd when @p signal satisfies the condition (see
 * kfdsync_hsa_signal_export_eventfd()).
 */
static inline int kfdsync_hsa_export_eventfd(struct kfdsync_ctx *ctx, hsa_signal_t signal,
					     hsa_signal_condition_t condition,
					     hsa_signal_value_t compare_value,
					     int64_t watchdog_ns, int eventfd)
{
	struct kfdsync_hsa_signal sig;
	int ret = kfdsync_hsa_signal_describe(signal, &sig);

	if (ret < 0)
		return ret;
	ret = kfdsync_hsa_arm_hint_(signal, &sig, condition, compare_value);
	if (ret < 0)
		return ret;
	return kfdsync_hsa_signal_export_eventfd(ctx, &sig, (enum kfdsync_hsa_condition)condition,
						 compare_value, watchdog_ns, eventfd);
}

/**
 * When the fence of @p sync_file_fd ends, store @p value into @p signal
 * (subtract it with KFDSYNC_HSA_IMPORT_SUBTRACT), @p error_value on error,
 * and wake its waiters (see kfdsync_hsa_signal_import_sync_file()).
 */
static inline int kfdsync_hsa_import_sync_file(struct kfdsync_ctx *ctx, int sync_file_fd,
					       hsa_signal_t signal, uint32_t flags,
					       hsa_signal_value_t value,
					       hsa_signal_value_t error_value)
{
	struct kfdsync_hsa_signal sig;
	int ret = kfdsync_hsa_signal_describe(signal, &sig);

	if (ret < 0)
		return ret;
	return kfdsync_hsa_signal_import_sync_file(ctx, sync_file_fd, &sig, flags, value,
						   error_value);
}

#ifdef __cplusplus
}
#endif

#endif /* KFDSYNC_HSA_H */
