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
 * signal in ROCr. So the export wrappers below first register a hint
 * (kfdsync_hsa_signal_hint_new()) as a ROCr async handler
 * (hsa_amd_signal_async_handler()) with the same condition: while it is
 * registered, ROCr's event thread waits on the signal and every CPU store
 * sets the event; when ROCr sees the condition hold, the hint signals the
 * event once more (which covers a store made before the event thread
 * started waiting) or, in relay mode, reports the signal to kfdsync
 * (kfdsync_event_relay()), so that relay-mode exports end on the condition,
 * not by their watchdog. The value is still the truth: kfdsync checks it
 * in the kernel at every such hint. A hint is inert once its fence's
 * watchdog deadline has passed or its context was freed; ROCr drops its
 * registration when the condition holds or the signal is destroyed (see
 * "Hints" in <kfdsync.h>).
 *
 * Link with `pkg-config --cflags --libs kfdsync-hsa` (libkfdsync and
 * libhsa-runtime64, which has no pkg-config file of its own).
 */
#ifndef KFDSYNC_HSA_H
#define KFDSYNC_HSA_H

#include <errno.h>
#include <string.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

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
 * Register a hint for an export of @p signal (kfdsync.h, "Hints"): ROCr
 * waits on the signal from now on, and calls the hint once the condition
 * holds. 0 and the hint's number in @p hint, or a negative errno.
 */
static inline int kfdsync_hsa_arm_hint_(struct kfdsync_ctx *ctx, hsa_signal_t signal,
					const struct kfdsync_hsa_signal *sig,
					hsa_signal_condition_t condition,
					hsa_signal_value_t compare_value, int64_t watchdog_ns,
					uint64_t *hint)
{
	int ret = kfdsync_hsa_signal_hint_new(ctx, sig, watchdog_ns, hint);

	if (ret < 0)
		return ret;
	if (hsa_amd_signal_async_handler(signal, condition, compare_value,
					 kfdsync_hsa_signal_hint_handler,
					 (void *)(uintptr_t)*hint) != HSA_STATUS_SUCCESS) {
		kfdsync_hsa_signal_hint_cancel(*hint);
		return -EINVAL;
	}
	return 0;
}

/**
 * A sync_file that signals when @p signal satisfies @p condition against
 * @p compare_value (see kfdsync_hsa_signal_export_sync_file()), after
 * arming ROCr's hint (see above).
 *
 * @return the sync_file fd (the caller closes it), `-EINVAL` also when ROCr
 *   refuses the async handler, the errors of kfdsync_hsa_signal_hint_new(),
 *   or a negative errno.
 */
static inline int kfdsync_hsa_export_sync_file(struct kfdsync_ctx *ctx, hsa_signal_t signal,
					       hsa_signal_condition_t condition,
					       hsa_signal_value_t compare_value,
					       int64_t watchdog_ns)
{
	struct kfdsync_hsa_signal sig;
	int ret = kfdsync_hsa_signal_describe(signal, &sig);
	uint64_t hint;

	if (ret < 0)
		return ret;
	/* Before the export: a hint that runs first leaves it born signalled. */
	ret = kfdsync_hsa_arm_hint_(ctx, signal, &sig, condition, compare_value, watchdog_ns,
				    &hint);
	if (ret < 0)
		return ret;
	ret = kfdsync_hsa_signal_export_sync_file(ctx, &sig,
						  (enum kfdsync_hsa_condition)condition,
						  compare_value, watchdog_ns);
	if (ret < 0)
		kfdsync_hsa_signal_hint_cancel(hint);
	return ret;
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
	uint64_t hint;

	if (ret < 0)
		return ret;
	ret = kfdsync_hsa_arm_hint_(ctx, signal, &sig, condition, compare_value, watchdog_ns,
				    &hint);
	if (ret < 0)
		return ret;
	ret = kfdsync_hsa_signal_export_eventfd(ctx, &sig, (enum kfdsync_hsa_condition)condition,
						compare_value, watchdog_ns, eventfd);
	if (ret < 0)
		kfdsync_hsa_signal_hint_cancel(hint);
	return ret;
}

/**
 * Release what the exports of @p signal registered with @p ctx (see
 * kfdsync_hsa_signal_release()): call it before hsa_signal_destroy() of a
 * signal you exported. Its pending fences end with -ECANCELED.
 *
 * @return 0, `-ENOENT` nothing of @p signal is registered, `-EINVAL` not an
 *   interrupt signal.
 */
static inline int kfdsync_hsa_release(struct kfdsync_ctx *ctx, hsa_signal_t signal)
{
	struct kfdsync_hsa_signal sig;
	int ret = kfdsync_hsa_signal_describe(signal, &sig);

	if (ret < 0)
		return ret;
	return kfdsync_hsa_signal_release(ctx, &sig);
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
