/* SPDX-License-Identifier: MIT */
/**
 * @file kfdsync.h
 * @brief libkfdsync core: AMD KFD events and HSA signals as sync_file fences.
 *
 * The producer's header: contexts, the event loop, capabilities, KFD events
 * and HSA signals exported as fences, and fences imported into events and
 * memory. One line per function here; each topic's man page has the detail
 * (libkfdsync(3) lists them). Other audiences have headers of their own:
 * <kfdsync_fence.h> (sync_file, dma-buf, drm_syncobj, CPU timeline and
 * amdgpu utilities, for any fence), <kfdsync_diag.h> (module info, status,
 * the amdkfd ABI gate), <kfdsync_hsa.h> (ROCr hsa_signal_t wrappers).
 *
 * Conventions (libkfdsync(3), "Conventions"):
 *
 * - **Errors**: 0 or a non-negative value, or a negative errno; errno
 *   itself is not part of the interface.
 * - **Not supported**: `-EOPNOTSUPP` means "the kernel, kfdsync.ko, amdkfd,
 *   the device or this build lacks it", and nothing else does. What is
 *   missing here for another reason fails with the errno that says so (no
 *   module loaded `-ENOENT`, no permission `-EACCES`, /dev/kfd refused
 *   `-ESRCH`). kfdsync_get_caps() tells beforehand, kfdsync_caps_why_not()
 *   why.
 * - **File descriptors**, one rule: an fd passed in is borrowed (never
 *   closed or kept); an fd returned is the caller's, new and close-on-exec,
 *   to close(2). The exceptions, all here: kfdsync_ctx_fd() and
 *   kfdsync_ctx_get_poll_fd() return the context's own fds, which
 *   kfdsync_ctx_free() closes: never close them.
 * - **Times**: timeouts and watchdogs are relative, in nanoseconds (int64_t;
 *   KFDSYNC_TIMEOUT_FOREVER, KFDSYNC_TIMEOUT_POLL, KFDSYNC_WATCHDOG_DEFAULT);
 *   deadlines are absolute CLOCK_MONOTONIC times (uint64_t, *_deadline_ns).
 * - **Flags** are uint32_t, and unknown bits are `-EINVAL`.
 * - **Threads**: every function may be called from any thread, a context's
 *   from several at once (kfdsync_ctx_dispatch() too); only
 *   kfdsync_ctx_free() must not race with other use of its context.
 * - **Structs** have a fixed size and end in reserved space: zeroed on
 *   output, required zero on input (`-EINVAL`).
 *
 * Link with `pkg-config --cflags --libs kfdsync`.
 */
#ifndef KFDSYNC_H
#define KFDSYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/kfdsync.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest fence (sync_file) name in bytes, without the NUL. */
#define KFDSYNC_NAME_MAX 31

/** Version of this library, as in pkg-config. */
#define KFDSYNC_LIB_VERSION_MAJOR 0
#define KFDSYNC_LIB_VERSION_MINOR 2

/** A relative timeout (int64_t ns) that waits forever: any negative value. */
#define KFDSYNC_TIMEOUT_FOREVER ((int64_t)-1)
/** A relative timeout that does not wait: only looks. */
#define KFDSYNC_TIMEOUT_POLL ((int64_t)0)
/** A fence watchdog (int64_t ns) of the module's default: 0 or negative. */
#define KFDSYNC_WATCHDOG_DEFAULT ((int64_t)0)

/**
 * @defgroup ctx Contexts (libkfdsync(3))
 * @{
 */

/** A kfdsync context: one open of /dev/kfdsync (opaque). */
struct kfdsync_ctx;

/** kfdsync_ctx_new_flags(): the dispatch form, no library thread (kfdsync_loop(3)). */
#define KFDSYNC_CTX_DISPATCH (1u << 0)

/** Open a context of the threads form; `-ENOENT` no module, `-EACCES`, `-ENFILE`. */
int kfdsync_ctx_new(struct kfdsync_ctx **ctx);
/** Open a context; @p flags 0 (threads form) or KFDSYNC_CTX_DISPATCH. */
int kfdsync_ctx_new_flags(struct kfdsync_ctx **ctx, uint32_t flags);
/** Stop its relays, end its fences (-ECANCELED), close its fds, free it; NULL is ignored. */
void kfdsync_ctx_free(struct kfdsync_ctx *ctx);
/** The context's /dev/kfdsync fd, for raw ioctls: the context's, never close it. */
int kfdsync_ctx_fd(const struct kfdsync_ctx *ctx);
/** Relay events registered from now on (the default), or not (kfdsync_event(3)). */
int kfdsync_ctx_set_relay(struct kfdsync_ctx *ctx, bool enabled);

/** @} */

/**
 * @defgroup loop Event loops (kfdsync_loop(3))
 * Put the poll fd in the application's loop; when it is readable call
 * kfdsync_ctx_dispatch(), which never blocks. It reports relay failures
 * (both forms) and, in the dispatch form, does the relay's work.
 * @{
 */

/** The context's poll fd (an epoll fd, the same every call): the context's, never close it. */
int kfdsync_ctx_get_poll_fd(struct kfdsync_ctx *ctx);
/** Do what is ready, without blocking, from any thread: signals and imports handled, or a failure once. */
int kfdsync_ctx_dispatch(struct kfdsync_ctx *ctx);
/** Dispatch form: the relay timer's interval, 10 µs to 1 s (0 the default, 1 ms). */
int kfdsync_ctx_set_dispatch_interval(struct kfdsync_ctx *ctx, int64_t interval_ns);

/** @} */

/**
 * @defgroup caps Capabilities (kfdsync_caps(3))
 * Bits of struct kfdsync_caps.supported, each probed, none read from a
 * version number (kfdsync_caps(3) says how).
 * @{
 */
/** The hooks count signals in the kernel (KFDSYNC_SOURCE_HOOKS): no relay. */
#define KFDSYNC_CAP_HOOKS		(1u << 0)
/** This process can open /dev/kfd: KFD events to register (else `-ESRCH`). */
#define KFDSYNC_CAP_EVENTS		(1u << 1)
/** A KFDSYNC_CTX_DISPATCH context relays with no thread (hooks, or event ages). */
#define KFDSYNC_CAP_DISPATCH		(1u << 2)
/** HSA signal exports (KFDSYNC_IOCTL_EXPORT_CONDITION). */
#define KFDSYNC_CAP_HSA			(1u << 3)
/** sync_file imports into memory and KFD events. */
#define KFDSYNC_CAP_IMPORT		(1u << 4)
/** CPU timelines: /dev/kfdsync_timeline can be opened (else `-ENOENT`, `-EACCES`). */
#define KFDSYNC_CAP_TIMELINES		(1u << 5)
/** dma-buf sync_file export and import (DMA_BUF_IOCTL_EXPORT_SYNC_FILE). */
#define KFDSYNC_CAP_DMABUF		(1u << 6)
/** Deadline hints on sync_files (SYNC_IOC_SET_DEADLINE). */
#define KFDSYNC_CAP_DEADLINE		(1u << 7)
/** A DRM render node of this system has syncobjs (DRM_CAP_SYNCOBJ). */
#define KFDSYNC_CAP_SYNCOBJ		(1u << 8)
/** An eventfd on a syncobj point (DRM_IOCTL_SYNCOBJ_EVENTFD) on that node. */
#define KFDSYNC_CAP_SYNCOBJ_EVENTFD	(1u << 9)
/** amdgpu CS fences: this build has libdrm_amdgpu. */
#define KFDSYNC_CAP_AMDGPU		(1u << 10)
/** This library speaks the module's ABI (KFDSYNC_ABI_VERSION). */
#define KFDSYNC_CAP_MODULE_ABI		(1u << 11)
/** The module's amdkfd ABI gate matched the loaded amdgpu: the hooks may attach. */
#define KFDSYNC_CAP_AMDKFD_ABI		(1u << 12)
/** The hooks watch this process's KFD events (else they are relayed). */
#define KFDSYNC_CAP_HOOKS_WATCH		(1u << 13)
/** @} */

/** kfdsync_get_caps(): also open /dev/kfd to ask amdkfd (the process becomes an amdkfd process). */
#define KFDSYNC_CAPS_OPEN_KFD (1u << 0)

/** What is supported, and what was not probed. 368 bytes, for good. */
struct kfdsync_caps {
	uint32_t supported;       /**< KFDSYNC_CAP_* bits */
	uint32_t source;          /**< KFDSYNC_SOURCE_* an event registered now gets */
	uint32_t relay_reason;    /**< KFDSYNC_RELAY_* (why relay mode), 0 with the hooks */
	uint32_t kernel_version;  /**< running kernel, KERNEL_VERSION(a, b, c) */
	uint32_t module_abi;      /**< the module's KFDSYNC_ABI_VERSION */
	uint32_t kfd_version;     /**< amdkfd's ioctl version, major << 16 | minor, or 0 */
	int32_t kfd_error;        /**< why /dev/kfd could not be probed (-errno), or 0 */
	uint32_t amdkfd_verdict;  /**< the gate's KFDSYNC_AMDKFD_ABI_* verdict */
	char relay_detail[64];    /**< why relay mode, in words ("" with the hooks) */
	char amdkfd_abi[16];      /**< the ABI the gate matched, or the closest */
	char amdkfd_reason[192];  /**< the gate's reason, in words ("" for a match) */
	uint32_t unprobed;        /**< KFDSYNC_CAP_* bits not probed (nor supported) */
	uint32_t reserved[15];    /**< zeroed; room for later fields */
};

/**
 * What is supported: @p ctx NULL asks before a context (to choose its form);
 * /dev/kfd only with KFDSYNC_CAPS_OPEN_KFD or if this process has opened it.
 */
int kfdsync_get_caps(struct kfdsync_ctx *ctx, uint32_t flags, struct kfdsync_caps *caps);
/** kfdsync_get_caps(@p ctx, 0, @p caps) of a context. */
int kfdsync_ctx_get_caps(struct kfdsync_ctx *ctx, struct kfdsync_caps *caps);
/** Why @p cap is missing, in words into @p buf; 1 supported, 0 not. */
int kfdsync_caps_why_not(const struct kfdsync_caps *caps, uint32_t cap, char *buf,
			 size_t size);

/**
 * @defgroup event KFD events as fences (kfdsync_event(3))
 * Register a signal event of the process, read its age, export "the next
 * signal after age A" as a sync_file or an eventfd wake-up. Every fence
 * ends in bounded time: signalled, or -ETIMEDOUT (watchdog), -ECANCELED,
 * -EIO, -EFAULT. Where kfdsync's hooks are not attached the library relays
 * (kfdsync_event(3), "The relay").
 * @{
 */

struct _HsaEvent;	/* libhsakmt's HsaEvent */

/** Register a KFD signal event of the caller (@p slot_addr may be 0); its age in @p age. */
int kfdsync_event_add(struct kfdsync_ctx *ctx, uint32_t event_id,
		      uint64_t slot_addr, uint64_t *age);
/** kfdsync_event_add() of a libhsakmt HsaEvent. */
int kfdsync_event_add_hsa(struct kfdsync_ctx *ctx,
			  const struct _HsaEvent *event, uint64_t *age);
/** Unregister an event: its pending fences end with -ECANCELED. */
int kfdsync_event_remove(struct kfdsync_ctx *ctx, uint32_t event_id);

/** A registered event's state. 48 bytes, for good. */
struct kfdsync_event_state {
	uint64_t age;     /**< signals seen since registration */
	int32_t error;    /**< sticky -errno that ends every fence, or 0 */
	uint32_t pending; /**< unsignalled fences exported for it */
	uint32_t source;  /**< KFDSYNC_SOURCE_HOOKS or KFDSYNC_SOURCE_RELAY */
	int32_t last_status; /**< how its last fence ended: 1, a -errno, 0 none yet */
	uint32_t reserved[6]; /**< zeroed; room for later fields */
};

/** Read a registered event's state (its age: read it before submitting the work). */
int kfdsync_event_get_state(struct kfdsync_ctx *ctx, uint32_t event_id,
			    struct kfdsync_event_state *state);
/** Report one signal of a relayed event yourself (relay turned off, HSA signals). */
int kfdsync_event_relay(struct kfdsync_ctx *ctx, uint32_t event_id);
/** A sync_file for the next signal of @p event_id after @p age (the caller's fd). */
int kfdsync_event_export_sync_file(struct kfdsync_ctx *ctx, uint32_t event_id,
				   uint64_t age, int64_t watchdog_ns);
/** Add 1 to the caller's (borrowed) @p eventfd at that signal, or when the fence fails. */
int kfdsync_event_export_eventfd(struct kfdsync_ctx *ctx, uint32_t event_id,
				 uint64_t age, int64_t watchdog_ns, int eventfd);

/** @} */

/**
 * @defgroup hsa HSA signals (kfdsync_hsa(3))
 * An interrupt-capable HSA signal: a 64-bit value and the KFD event that
 * whoever changes it signals. <kfdsync_hsa.h> takes ROCr's hsa_signal_t.
 * @{
 */

/** An interrupt-capable HSA signal, as kfdsync needs it. 40 bytes, for good. */
struct kfdsync_hsa_signal {
	int64_t *value;     /**< the value (amd_signal_t.value), 8-byte aligned */
	uint64_t mailbox;   /**< the event's slot (amd_signal_t.event_mailbox_ptr) */
	uint32_t event_id;  /**< the KFD event (amd_signal_t.event_id) */
	uint32_t reserved[5]; /**< must be 0; room for later fields */
};

/** Conditions, as ROCr's hsa_signal_condition_t. */
enum kfdsync_hsa_condition {
	KFDSYNC_HSA_EQ = KFDSYNC_CONDITION_EQ,   /**< value == compare_value */
	KFDSYNC_HSA_NE = KFDSYNC_CONDITION_NE,   /**< value != compare_value */
	KFDSYNC_HSA_LT = KFDSYNC_CONDITION_LT,   /**< value < compare_value */
	KFDSYNC_HSA_GTE = KFDSYNC_CONDITION_GTE, /**< value >= compare_value */
};

/** kfdsync_hsa_signal_import_sync_file(): subtract instead of store. */
#define KFDSYNC_HSA_IMPORT_SUBTRACT (1u << 0)

/** Describe the signal whose amd_signal_t is at @p amd_signal (ROCr's hsa_signal_t handle). */
int kfdsync_hsa_signal_from_amd_signal(const void *amd_signal,
				       struct kfdsync_hsa_signal *sig);
/** A sync_file that signals when the value satisfies the condition. */
int kfdsync_hsa_signal_export_sync_file(struct kfdsync_ctx *ctx,
					const struct kfdsync_hsa_signal *sig,
					enum kfdsync_hsa_condition condition,
					int64_t compare_value, int64_t watchdog_ns);
/** Add 1 to the caller's @p eventfd when the value satisfies the condition. */
int kfdsync_hsa_signal_export_eventfd(struct kfdsync_ctx *ctx,
				      const struct kfdsync_hsa_signal *sig,
				      enum kfdsync_hsa_condition condition,
				      int64_t compare_value, int64_t watchdog_ns,
				      int eventfd);
/** Release what exports of @p sig registered: always before hsa_signal_destroy(). */
int kfdsync_hsa_signal_release(struct kfdsync_ctx *ctx, const struct kfdsync_hsa_signal *sig);
/** When the fence ends, store (or subtract) @p value, or @p error_value, and set the event. */
int kfdsync_hsa_signal_import_sync_file(struct kfdsync_ctx *ctx,
					int sync_file_fd,
					const struct kfdsync_hsa_signal *sig,
					uint32_t flags, int64_t value,
					int64_t error_value);

/** @} */

/**
 * @defgroup import Importing fences (kfdsync_import(3))
 * When a sync_file from anywhere ends, kfdsync writes the caller's memory,
 * sets one of its KFD events, and/or fails a registered event.
 * @{
 */

/** What to do when an imported fence ends. 72 bytes, for good. */
struct kfdsync_import_desc {
	uint32_t flags;         /**< KFDSYNC_IMPORT_MEMORY, _MEMORY32, _SUB,
				     _SET_EVENT, _FAIL_EVENT (not _EVENTFD) */
	uint32_t event_id;      /**< SET_EVENT: amdkfd event id to set */
	uint32_t fail_event_id; /**< FAIL_EVENT: registered event that takes the error */
	uint32_t pad;           /**< must be 0 */
	void *addr;             /**< MEMORY: aligned, ordinary writable memory */
	uint64_t value;         /**< MEMORY: stored (subtracted) when it signals */
	uint64_t error_value;   /**< MEMORY: stored (subtracted) when it fails */
	uint64_t reserved[4];   /**< must be 0; room for later fields */
};

/** Act on @p desc when the fence of @p sync_file_fd (borrowed) ends. */
int kfdsync_import_sync_file(struct kfdsync_ctx *ctx, int sync_file_fd,
			     const struct kfdsync_import_desc *desc);
/** Store @p value at @p addr when the fence signals, @p error_value when it fails. */
int kfdsync_import_to_memory(struct kfdsync_ctx *ctx, int sync_file_fd,
			     uint64_t *addr, uint64_t value,
			     uint64_t error_value);
/** Set KFD event @p event_id of the caller when the fence ends. */
int kfdsync_import_to_event(struct kfdsync_ctx *ctx, int sync_file_fd,
			    uint32_t event_id);

/** @} */

#ifdef __cplusplus
}
#endif

/*
 * Until 1.0, for programs written against 0.2's one header: the fence
 * utilities and diagnostics, unless the program asks for the core alone.
 */
#ifndef KFDSYNC_CORE_ONLY
#include <kfdsync_fence.h>
#include <kfdsync_diag.h>
#endif

#endif /* KFDSYNC_H */
