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
 */
#ifndef KFDSYNC_HSA_H
#define KFDSYNC_HSA_H

#include <hsa/hsa.h>

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
 * A sync_file that signals when @p signal satisfies @p condition against
 * @p compare_value (see kfdsync_hsa_signal_export_sync_file()).
 *
 * @return the sync_file fd (the caller closes it), or a negative errno.
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
