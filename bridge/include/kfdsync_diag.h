/* SPDX-License-Identifier: MIT */
/**
 * @file kfdsync_diag.h
 * @brief libkfdsync diagnostics: what kfdsync.ko says about itself.
 *
 * For tools and bug reports (kfdsync-info(1) prints all of it): the
 * module's info, its status and the caller's user's limits, the amdkfd ABI
 * gate's verdict, hook names. A program that only needs to know what works
 * asks kfdsync_get_caps() (<kfdsync.h>) instead. Same conventions as
 * <kfdsync.h>; link with `pkg-config --cflags --libs kfdsync`.
 */
#ifndef KFDSYNC_DIAG_H
#define KFDSYNC_DIAG_H

#include <kfdsync.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @addtogroup ctx
 * @{
 */
/**
 * What kfdsync.ko reports about itself (KFDSYNC_IOCTL_INFO). 144 bytes, for
 * good (see "Structs" in <kfdsync.h>).
 */
struct kfdsync_module_info {
	uint32_t abi_version;     /**< KFDSYNC_ABI_VERSION of the module */
	uint32_t kernel_version;  /**< running kernel, KERNEL_VERSION(a, b, c) */
	/** Running kernel's release string, NUL-terminated (the uAPI's size:
	    uname(2)'s 65 bytes, rounded up) */
	char release[KFDSYNC_RELEASE_LEN];
	uint32_t hooks;           /**< KFDSYNC_HOOK_* bits attached now */
	uint32_t hooks_supported; /**< KFDSYNC_HOOK_* bits this module knows */
	uint32_t flags;           /**< KFDSYNC_INFO_* bits */
	uint32_t max_contexts;    /**< open contexts, module-wide */
	uint32_t max_events;      /**< registered events per context */
	uint32_t max_fences;      /**< pending fences per context */
	uint32_t watchdog_ms;     /**< default fence watchdog */
	uint32_t watchdog_max_ms; /**< longest per-fence watchdog */
	uint32_t reserved[8];     /**< zeroed; room for later fields */
};

/**
 * Ask the module about itself. A module of another ABI is reported as it
 * is (@c abi_version); kfdsync_ctx_get_caps() then lacks
 * KFDSYNC_CAP_MODULE_ABI.
 *
 * @return 0, `-EINVAL` for NULL arguments, or a negative errno from the
 *   ioctl.
 */
int kfdsync_ctx_get_module_info(struct kfdsync_ctx *ctx,
				struct kfdsync_module_info *info);

/** Size of the strings of struct kfdsync_module_status, NUL included. */
#define KFDSYNC_STATUS_TEXT 64

/**
 * Where the module's signals come from and what the caller's user holds
 * (KFDSYNC_IOCTL_STATUS). 256 bytes, for good (see "Structs" in <kfdsync.h>).
 */
struct kfdsync_module_status {
	uint32_t source;            /**< KFDSYNC_SOURCE_* an event registered now gets */
	uint32_t relay_reason;      /**< KFDSYNC_RELAY_*, 0 with the hooks */
	uint32_t hooks;             /**< KFDSYNC_HOOK_* bits attached now */
	uint32_t watch;             /**< KFDSYNC_STATUS_WATCH_* bits of the caller (0 from older modules) */
	uint64_t hooks_missed;      /**< hook hits the kernel missed (0 normally) */
	uint32_t user_contexts;     /**< open contexts of the caller's user */
	uint32_t user_timelines;    /**< open CPU timelines of the user */
	uint32_t user_events;       /**< registered events of the user */
	uint32_t user_fences;       /**< pending fences of the user */
	uint32_t max_user_contexts; /**< the per-user limits */
	uint32_t max_user_timelines;
	uint32_t max_user_events;
	uint32_t max_user_fences;
	uint32_t max_contexts;      /**< open contexts, system-wide */
	uint32_t max_timelines;     /**< open CPU timelines, system-wide */
	char detail[KFDSYNC_STATUS_TEXT];   /**< why relay mode, in words */
	char verified[KFDSYNC_STATUS_TEXT]; /**< amdkfd ABIs the module implements */
	uint32_t reserved[16];      /**< zeroed; room for later fields */
};

/**
 * Ask the module where its signals come from and, in relay mode, why (the
 * hooks are attached only to an amdgpu whose BTF has an amdkfd ABI the
 * module implements, all or none: kfdsync_ctx_get_amdkfd_abi()), and what
 * the caller's user holds against which limits.
 *
 * @return 0, `-EINVAL` for NULL arguments, `-EOPNOTSUPP` from a module
 *   without KFDSYNC_IOCTL_STATUS, or a negative errno from the ioctl.
 */
int kfdsync_ctx_get_module_status(struct kfdsync_ctx *ctx,
				  struct kfdsync_module_status *status);

/** Sizes of the strings of struct kfdsync_amdkfd_abi_info, NUL included. */
#define KFDSYNC_ABI_NAME_TEXT 16
#define KFDSYNC_ABI_LIST_TEXT 64
#define KFDSYNC_ABI_REASON_TEXT 192

/**
 * The module's verdict on the loaded amdgpu (KFDSYNC_IOCTL_AMDKFD_ABI): which
 * amdkfd ABI its BTF has. 344 bytes, for good (see "Structs" in <kfdsync.h>).
 */
struct kfdsync_amdkfd_abi_info {
	uint32_t verdict;  /**< KFDSYNC_AMDKFD_ABI_* of <linux/kfdsync.h> */
	uint32_t pad;      /**< zeroed */
	char abi[KFDSYNC_ABI_NAME_TEXT];                /**< matched, or closest */
	char implemented[KFDSYNC_ABI_LIST_TEXT];        /**< ABIs the module has */
	char reason[KFDSYNC_ABI_REASON_TEXT];           /**< first difference, or why */
	uint32_t reserved[16]; /**< zeroed; room for later fields */
};

/**
 * Ask the module which amdkfd ABI the loaded amdgpu has: the module attaches
 * its hooks only when amdgpu's own BTF matches, exactly, an ABI it
 * implements (the prototypes of every amdkfd function it calls or probes,
 * the structure facts it relies on), whatever the kernel's version.
 * @p abi gets the verdict (KFDSYNC_AMDKFD_ABI_MATCH, _MISMATCH, _NO_BTF, or
 * _UNCHECKED with no amdgpu or hooks=N), the ABI matched or the closest
 * one, the ABIs the module implements and, for a mismatch, the first
 * difference in words ("kfd_lookup_process_by_pasid takes 2 arguments, ABI
 * 6.12 has 1").
 *
 * @return 0, `-EINVAL` for NULL arguments, `-EOPNOTSUPP` from a module
 *   without KFDSYNC_IOCTL_AMDKFD_ABI, or a negative errno from the ioctl.
 */
int kfdsync_ctx_get_amdkfd_abi(struct kfdsync_ctx *ctx,
			       struct kfdsync_amdkfd_abi_info *abi);

/**
 * Name of one KFDSYNC_HOOK_* bit ("gpu_interrupt", "cpu_set", ...), or NULL
 * for a bit this library does not know. The string is static.
 */
const char *kfdsync_hook_name(uint32_t hook_bit);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* KFDSYNC_DIAG_H */
