/* SPDX-License-Identifier: MIT */
/**
 * @file kfdsync_hsa.h
 * @brief libkfdsync over ROCr's hsa_signal_t (header only).
 *
 * Thin inline wrappers of the @ref hsa functions of <kfdsync.h> that take
 * an hsa_signal_t, and the hint plumbing they use. Including this header needs ROCr's headers (<hsa/hsa.h>,
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
 * "Hints" below).
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

/**
 * @name Hints
 * The plumbing of the export wrappers below, public for them only (their
 * symbols are libkfdsync's).
 *
 * A hint (kfdsync_hsa_signal_hint_new()) is what the wrappers register as
 * a ROCr async handler per export. ROCr calls it once when the signal's condition holds; it then signals the event (hooks mode:
 * hsaKmtSetEvent(), which kfdsync's cpu_set hook sees) or reports a signal
 * (relay mode). A hint lives as long as its fence can: it is inert once its
 * fence's watchdog deadline has passed, once kfdsync_ctx_free() freed its
 * context, or after it ran once, and it holds no memory ROCr could see
 * freed: ROCr gets a number, not a pointer. ROCr itself (5.2) has no way to
 * withdraw an async handler: its registration stays in ROCr's list until
 * the condition holds (then the inert hint does nothing and is dropped) or
 * the signal is destroyed (ROCr drops it without calling it).
 * @{
 */

/**
 * A hint for an export of @p sig with watchdog @p watchdog_ns (as given to
 * the export), to register as a ROCr async handler:
 * `hsa_amd_signal_async_handler(signal, condition, compare_value,
 * kfdsync_hsa_signal_hint_handler, (void *)(uintptr_t)*hint)`. The
 * <kfdsync_hsa.h> wrappers do exactly that; see "Hints".
 *
 * @param[out] hint  the hint's number (never 0, never reused)
 * @return 0, `-EINVAL` NULL or bad arguments (@p sig->reserved not 0),
 *   `-ENOMEM`, or the errors of kfdsync_ctx_get_module_info().
 */
int kfdsync_hsa_signal_hint_new(struct kfdsync_ctx *ctx,
				const struct kfdsync_hsa_signal *sig,
				int64_t watchdog_ns, uint64_t *hint);

/**
 * ROCr's hsa_amd_signal_handler for a hint (hsa_signal_value_t is int64_t):
 * signal or relay the hint's event if the hint is still live, then forget
 * it. Returns false (ROCr then drops the handler). Safe to call with a hint
 * that is gone.
 */
bool kfdsync_hsa_signal_hint_handler(int64_t value, void *hint);

/**
 * Make a hint inert now (e.g. when ROCr refused to register it, or the
 * export failed). Unknown or spent hints are ignored.
 */
void kfdsync_hsa_signal_hint_cancel(uint64_t hint);

/** @} */

/*
 * The export wrappers' one body: a hint armed first (a hint that runs first
 * leaves the fence born signalled), then the export, a sync_file when
 * @p eventfd is -1; the hint made inert if the export fails.
 */
static inline int kfdsync_hsa_export_(struct kfdsync_ctx *ctx, hsa_signal_t signal,
				      hsa_signal_condition_t condition,
				      hsa_signal_value_t compare_value, int64_t watchdog_ns,
				      int eventfd)
{
	enum kfdsync_hsa_condition cond = (enum kfdsync_hsa_condition)condition;
	struct kfdsync_hsa_signal sig;
	uint64_t hint;
	int ret = kfdsync_hsa_signal_describe(signal, &sig);

	if (ret < 0)
		return ret;
	ret = kfdsync_hsa_signal_hint_new(ctx, &sig, watchdog_ns, &hint);
	if (ret < 0)
		return ret;
	if (hsa_amd_signal_async_handler(signal, condition, compare_value,
					 kfdsync_hsa_signal_hint_handler,
					 (void *)(uintptr_t)hint) != HSA_STATUS_SUCCESS) {
		kfdsync_hsa_signal_hint_cancel(hint);
		return -EINVAL;
	}
	ret = eventfd < 0 ?
	      kfdsync_hsa_signal_export_sync_file(ctx, &sig, cond, compare_value, watchdog_ns) :
	      kfdsync_hsa_signal_export_eventfd(ctx, &sig, cond, compare_value, watchdog_ns,
						eventfd);
	if (ret < 0)
		kfdsync_hsa_signal_hint_cancel(hint);
	return ret;
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
	return kfdsync_hsa_export_(ctx, signal, condition, compare_value, watchdog_ns, -1);
}

/**
 * Add 1 to @p eventfd when @p signal satisfies the condition (see
 * kfdsync_hsa_signal_export_eventfd()); `-EBADF` for a negative @p eventfd.
 */
static inline int kfdsync_hsa_export_eventfd(struct kfdsync_ctx *ctx, hsa_signal_t signal,
					     hsa_signal_condition_t condition,
					     hsa_signal_value_t compare_value,
					     int64_t watchdog_ns, int eventfd)
{
	if (eventfd < 0)
		return -EBADF;
	return kfdsync_hsa_export_(ctx, signal, condition, compare_value, watchdog_ns, eventfd);
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
