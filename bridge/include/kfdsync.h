/* SPDX-License-Identifier: MIT */
/**
 * @file kfdsync.h
 * @brief libkfdsync: AMD KFD events and Linux sync_file fences, bridged.
 *
 * libkfdsync is the userspace side of kfdsync.ko. It opens contexts on
 * /dev/kfdsync and offers the fence plumbing an application, compositor or
 * pipeline needs around them: sync_file merge/wait/inspection, and moving
 * fences between sync_files, dma-bufs (implicit sync) and drm_syncobjs.
 *
 * Conventions, for every function in this header:
 *
 * - **Errors.** A function returns 0 or a non-negative value on success and
 *   a negative errno on failure (e.g. `-ENOENT`); strerror(-ret) describes
 *   it. errno itself is not part of the interface.
 * - **"Not supported"** is always `-EOPNOTSUPP`, whoever lacks the feature:
 *   the kernel (too old for dma-buf sync_files, deadlines, syncobj
 *   eventfds), kfdsync.ko (older than this library: an ioctl it does not
 *   know), amdkfd (no event ages for the dispatch form), a device (no
 *   syncobjs) or this build (no libdrm_amdgpu). kfdsync_ctx_get_caps()
 *   tells up front what is supported and why not (kfdsync_caps_why_not()).
 * - **File descriptors.** Every fd a function returns is new, close-on-exec
 *   and owned by the caller, who closes it with close(2). Every fd passed in
 *   is borrowed: the library never closes or keeps it.
 * - **Timeouts** are relative, in nanoseconds; a negative timeout waits
 *   forever, 0 only polls.
 * - **Threads.** Functions that take no context are thread-safe. A context
 *   may be used from several threads at once; kfdsync_ctx_free() must not
 *   race with any other use of the same context. The library starts
 *   threads of its own only in relay mode, and only for a context of the
 *   threads form (the default; see "The relay" in @ref event and
 *   @ref import): "kfdsync-relay" threads for exports, one
 *   "kfdsync-import" thread for imports that set KFD events. They block
 *   all signals (the application's handlers never run on them); an export
 *   relay thread left with no event to relay is joined before
 *   kfdsync_event_remove() returns, every thread before kfdsync_ctx_free()
 *   returns. A context made with KFDSYNC_CTX_DISPATCH starts none: its
 *   relay work runs in kfdsync_ctx_dispatch(), on the caller's thread
 *   (@ref loop).
 * - **File descriptors the library keeps.** A context holds its
 *   /dev/kfdsync fd; once asked for, a poll fd (an epoll fd) and an eventfd
 *   in it; in relay mode a /dev/kfd fd of the relay's, a timerfd (dispatch
 *   form) or the import thread's wake-up eventfd (threads form), and one
 *   eventfd per pending relayed import. All are close-on-exec and closed by
 *   kfdsync_ctx_free().
 * - **Interrupted calls** (EINTR, EAGAIN from the kernel) are retried.
 * - **Structs** the library fills in or reads have a fixed size and end in
 *   reserved space. The library zeroes it on output and requires it to be
 *   zero on input (`-EINVAL` otherwise: zero-initialise what you pass in).
 *   A later version of the library puts new fields there, with 0 meaning
 *   "not reported" (output) or "the default" (input), so a program built
 *   against either version works with the other. A struct that runs out of
 *   room gets a successor and new functions; the old ones stay.
 * - **Names.** No function or type of this header has a name of
 *   <linux/kfdsync.h>, so both can be included together without confusion:
 *   the uAPI names its argument structs after their ioctls (`struct
 *   kfdsync_event_get_state` is KFDSYNC_IOCTL_EVENT_QUERY's), the library names
 *   functions after their object and a verb of its own
 *   (kfdsync_event_get_state()).
 * - **Fence names** (of sync_files, timeline fences) are at most
 *   KFDSYNC_NAME_MAX (31) bytes: the kernel's 32 with the NUL. A longer name
 *   is refused with `-EINVAL`, never cut.
 *
 * Link with `pkg-config --cflags --libs kfdsync`; a program that also calls
 * libhsakmt itself (hsaKmt*()) links with `pkg-config --cflags --libs
 * kfdsync libhsakmt`, one that uses <kfdsync_hsa.h> with `pkg-config
 * --cflags --libs kfdsync-hsa`. The kernel interface constants (hook bits,
 * info flags) come from <linux/kfdsync.h>, installed with this header.
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

/**
 * @defgroup ctx Contexts
 * A context is one open of /dev/kfdsync, bound to the calling process.
 * @{
 */

/** A kfdsync context (opaque). */
struct kfdsync_ctx;

/**
 * Open a context on /dev/kfdsync, of the threads form (relay work, where
 * there is any, in threads of the library): kfdsync_ctx_new_flags() with
 * no flags.
 *
 * @param[out] ctx  the new context; free it with kfdsync_ctx_free()
 * @return 0, or
 *   - `-ENOENT`: /dev/kfdsync does not exist (kfdsync.ko is not loaded),
 *   - `-EACCES`: no permission on /dev/kfdsync (see the udev rule: group
 *     "render"),
 *   - `-ENFILE`: the module's limit of open contexts is reached,
 *   - `-EINVAL`: @p ctx is NULL,
 *   - another negative errno from open(2).
 */
int kfdsync_ctx_new(struct kfdsync_ctx **ctx);

/**
 * kfdsync_ctx_new_flags(): the dispatch form. The context starts no thread,
 * ever: its relay work (relay mode only) runs in kfdsync_ctx_dispatch(),
 * which the application calls when kfdsync_ctx_get_poll_fd() is readable
 * (@ref loop). For compositors and libraries built around one event loop.
 */
#define KFDSYNC_CTX_DISPATCH (1u << 0)

/**
 * Open a context on /dev/kfdsync; @p flags 0 or KFDSYNC_CTX_DISPATCH, for
 * the context's life.
 *
 * @return 0, `-EINVAL` @p ctx NULL or unknown @p flags, or the errors of
 *   kfdsync_ctx_new().
 */
int kfdsync_ctx_new_flags(struct kfdsync_ctx **ctx, uint32_t flags);

/**
 * Close a context and free it: its relay threads are stopped and joined,
 * its registrations dropped (pending fences end with -ECANCELED), its
 * relayed imports cancelled, every fd it kept closed (the poll fd too).
 * NULL is accepted and ignored.
 */
void kfdsync_ctx_free(struct kfdsync_ctx *ctx);

/**
 * The context's /dev/kfdsync file descriptor, for the raw ioctls of
 * <linux/kfdsync.h>. It stays owned by the context: do not close it.
 * /dev/kfdsync has no poll(2) of its own (poll() would always say
 * "ready", epoll_ctl() refuses it with EPERM): poll kfdsync_ctx_get_poll_fd()
 * instead.
 */
int kfdsync_ctx_fd(const struct kfdsync_ctx *ctx);

/** @} */

/**
 * @defgroup loop Event loops
 * Every context has a poll fd for the application's event loop (poll(2),
 * epoll(7), a Wayland or GLib loop): kfdsync_ctx_get_poll_fd(). When it is
 * readable, call kfdsync_ctx_dispatch(); it never blocks. It becomes
 * readable
 *
 * - when the relay failed (both forms): an event it can no longer relay, or
 *   its /dev/kfd failed. kfdsync_ctx_dispatch() then returns the failure's
 *   errno, once (see "When the relay fails" in @ref event);
 * - in the dispatch form (KFDSYNC_CTX_DISPATCH), also when the relay has
 *   work: a relayed import is done (the library sets its KFD event), or
 *   the relay's timer ticks while relayed events have fences that may
 *   still be pending (it asks amdkfd what they delivered, without
 *   waiting). See "The relay" in @ref event for what the timer costs.
 *
 * In hooks mode there is no relay work: a dispatch-form context then costs
 * nothing and its poll fd only reports failures, like the threads form's.
 * The poll fd is the context's (kfdsync_ctx_free() closes it); an epoll
 * fd, it can be added to another epoll set.
 *
 * The fences themselves are sync_files (or eventfds): poll those for "the
 * work is done" (kfdsync_sync_file_wait_many() waits on several).
 * @{
 */

/**
 * The context's poll fd (made on first call; the same fd every time). It
 * stays owned by the context: do not close it.
 *
 * @return the fd, `-EINVAL` @p ctx is NULL, or a negative errno of
 *   epoll_create1(2) or eventfd(2).
 */
int kfdsync_ctx_get_poll_fd(struct kfdsync_ctx *ctx);

/**
 * Do what the poll fd said is ready, on the caller's thread, without
 * blocking: relayed imports' KFD events are set, relayed events' signals
 * reported (dispatch form), a failure of the relay returned. Calling it
 * when nothing is ready is harmless. May be called from any thread.
 *
 * @return the number of relayed signals and imports handled (0 or more),
 *   or the errno of a failure of the relay that was not reported yet
 *   (`-EIDRM`: amdkfd destroyed a relayed event; another: the relay's
 *   /dev/kfd failed), reported once; `-EINVAL` @p ctx is NULL.
 */
int kfdsync_ctx_dispatch(struct kfdsync_ctx *ctx);

/**
 * Dispatch form: how often the relay's timer ticks while relayed events
 * have fences that may be pending (default 1 ms): a relayed signal is
 * counted up to one interval (plus the loop's own delay) after amdkfd
 * delivered it.
 *
 * @param interval_ns  10 µs to 1 s; 0 restores the default
 * @return 0, `-EINVAL` @p ctx NULL or @p interval_ns out of range,
 *   `-EOPNOTSUPP` the context is of the threads form.
 */
int kfdsync_ctx_set_dispatch_interval(struct kfdsync_ctx *ctx, int64_t interval_ns);

/** @} */

/**
 * @addtogroup ctx
 * @{
 */

/**
 * What kfdsync.ko reports about itself (KFDSYNC_IOCTL_INFO). 144 bytes, for
 * good (see "Structs" above).
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
 * (KFDSYNC_IOCTL_STATUS). 256 bytes, for good (see "Structs" above).
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
 * amdkfd ABI its BTF has. 344 bytes, for good (see "Structs" above).
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
 * @name Capabilities
 * Bits of struct kfdsync_caps.supported. What a missing one makes fail
 * fails with `-EOPNOTSUPP`; kfdsync_caps_why_not() says why it is missing.
 * @{
 */
/** The hooks count signals in the kernel (KFDSYNC_SOURCE_HOOKS): no relay. */
#define KFDSYNC_CAP_HOOKS		(1u << 0)
/** This process can open /dev/kfd: KFD events to register and export. */
#define KFDSYNC_CAP_EVENTS		(1u << 1)
/**
 * A KFDSYNC_CTX_DISPATCH context needs no thread for events registered
 * now: the hooks watch them (KFDSYNC_CAP_HOOKS_WATCH), or amdkfd reports
 * event ages (Linux 6.5+). Without it, kfdsync_event_add() of such a
 * context fails with `-EOPNOTSUPP` for an event that is relayed.
 */
#define KFDSYNC_CAP_DISPATCH		(1u << 2)
/** HSA signal exports and imports (KFDSYNC_IOCTL_EXPORT_CONDITION). */
#define KFDSYNC_CAP_HSA			(1u << 3)
/** sync_file imports into memory and KFD events (@ref import). */
#define KFDSYNC_CAP_IMPORT		(1u << 4)
/** CPU timelines: /dev/kfdsync_timeline can be opened (@ref timeline). */
#define KFDSYNC_CAP_TIMELINES		(1u << 5)
/** dma-buf sync_file export and import (Linux 6.0+, @ref dmabuf). */
#define KFDSYNC_CAP_DMABUF		(1u << 6)
/** Deadline hints on sync_files (Linux 6.4+, kfdsync_sync_file_set_deadline()). */
#define KFDSYNC_CAP_DEADLINE		(1u << 7)
/**
 * The drm_syncobj helpers (@ref syncobj; always: each device says itself
 * whether it has syncobjs, `-EOPNOTSUPP` per call).
 */
#define KFDSYNC_CAP_SYNCOBJ		(1u << 8)
/** An eventfd on a syncobj point (Linux 6.6+, kfdsync_syncobj_eventfd()). */
#define KFDSYNC_CAP_SYNCOBJ_EVENTFD	(1u << 9)
/** amdgpu CS fences (@ref amdgpu): this build has libdrm_amdgpu. */
#define KFDSYNC_CAP_AMDGPU		(1u << 10)
/** This library speaks the module's ABI (KFDSYNC_ABI_VERSION). */
#define KFDSYNC_CAP_MODULE_ABI		(1u << 11)
/**
 * The module's amdkfd ABI gate matched the loaded amdgpu's amdkfd to an ABI
 * kfdsync implements (KFDSYNC_IOCTL_AMDKFD_ABI): the hooks may attach.
 * kfdsync_caps_why_not() gives the gate's reason otherwise (the first
 * mismatch, no BTF, nothing checked).
 */
#define KFDSYNC_CAP_AMDKFD_ABI		(1u << 12)
/**
 * The hooks watch this process's KFD events (KFDSYNC_STATUS_WATCH_SLOTS):
 * they are attached and amdkfd has the process's signal page (made with its
 * first signal event, or the GPU buffer of a discrete GPU). Without it an
 * event registered now is relayed (its source is KFDSYNC_SOURCE_RELAY),
 * which kfdsync_event_add() does by itself.
 */
#define KFDSYNC_CAP_HOOKS_WATCH		(1u << 13)
/** @} */

/**
 * What the module, the kernel, amdkfd and this library support
 * (kfdsync_ctx_get_caps()). 368 bytes, for good (see "Structs" above).
 */
struct kfdsync_caps {
	uint32_t supported;       /**< KFDSYNC_CAP_* bits */
	uint32_t source;          /**< KFDSYNC_SOURCE_* an event registered now gets */
	uint32_t relay_reason;    /**< KFDSYNC_RELAY_* (why relay mode), 0 with the hooks */
	uint32_t kernel_version;  /**< running kernel, KERNEL_VERSION(a, b, c) */
	uint32_t module_abi;      /**< the module's KFDSYNC_ABI_VERSION */
	uint32_t kfd_version;     /**< amdkfd's ioctl version, major << 16 | minor;
				       0 if /dev/kfd cannot be opened */
	int32_t kfd_error;        /**< why /dev/kfd cannot be opened (-errno), or 0 */
	uint32_t amdkfd_verdict;  /**< the amdkfd ABI gate's KFDSYNC_AMDKFD_ABI_*
				       verdict (0, unchecked, also from modules
				       without the gate's report) */
	char relay_detail[64];    /**< why relay mode, in words ("" with the hooks) */
	char amdkfd_abi[16];      /**< the ABI the gate matched, or the closest */
	char amdkfd_reason[192];  /**< the gate's reason, in words: the first
				       mismatch, what is wrong with the BTF, why
				       nothing was checked ("" for a match) */
	uint32_t reserved[16];    /**< zeroed; room for later fields */
};

/**
 * Ask once, up front, what is supported (the shape of libdrm's drmGetCap()
 * and liburing's probes, in one call). It asks the module (INFO, STATUS,
 * the amdkfd ABI gate's verdict, and whether it knows the newer ioctls)
 * and amdkfd (it opens /dev/kfd for its version, as libhsakmt would: the
 * calling process then has an amdkfd process, freed at exit).
 *
 * @return 0, `-EINVAL` for NULL arguments, or the errors of
 *   kfdsync_ctx_get_module_info().
 */
int kfdsync_ctx_get_caps(struct kfdsync_ctx *ctx, struct kfdsync_caps *caps);

/**
 * Why @p cap (one KFDSYNC_CAP_* bit) is missing from @p caps, in words
 * ("Linux 6.1; needs 6.4 or later", "relay mode: hooks=N", ...), into
 * @p buf (at most @p size bytes with the NUL; "" if it is supported).
 *
 * @return 1 supported, 0 not supported, `-EINVAL` NULL @p caps, NULL
 *   @p buf with a non-zero @p size, or @p cap not one known bit.
 */
int kfdsync_caps_why_not(const struct kfdsync_caps *caps, uint32_t cap, char *buf,
			 size_t size);

/**
 * Turn the export relay on (the default) or off for events registered from
 * now on; relays already running are not affected. See "The relay" in
 * @ref event. Turn it off when the application relays signals itself
 * (kfdsync_event_relay()) or must keep waiting on its events with
 * hsaKmtWaitOnEvent(): in relay mode kfdsync then sees only the signals the
 * application relays, and fences of the others end by their watchdog.
 *
 * @return 0, or `-EINVAL` if @p ctx is NULL.
 */
int kfdsync_ctx_set_relay(struct kfdsync_ctx *ctx, bool enabled);

/**
 * Name of one KFDSYNC_HOOK_* bit ("gpu_interrupt", "cpu_set", ...), or NULL
 * for a bit this library does not know. The string is static.
 */
const char *kfdsync_hook_name(uint32_t hook_bit);

/** @} */

/**
 * @defgroup event KFD events as fences
 * A context registers signal events of its own process, created with
 * libhsakmt (hsaKmtCreateEvent()) or ROCr, and exports "the next signal of
 * event E after age A" as a sync_file or an eventfd wake-up.
 *
 * An event's *age* counts the signals kfdsync saw since registration. The
 * race-free pattern: read the age (kfdsync_event_get_state()) before submitting
 * the GPU work that signals the event, then export with that age. If the
 * work already finished, the fence is born signalled; it never signals
 * before the work is done. Every fence ends in bounded time: on the signal,
 * or with -ETIMEDOUT (watchdog), -ECANCELED (event unregistered, context
 * closed, owner exited), -EIO (GPU reset, hardware exception, amdgpu
 * unloaded) or -EFAULT (GPU memory fault).
 *
 * **The relay.** kfdsync learns of signals from hooks on amdkfd
 * (KFDSYNC_SOURCE_HOOKS). Where they are not attached (kfdsync.ko loaded
 * with hooks=N, an amdgpu whose amdkfd ABI kfdsync does not implement
 * (kfdsync_ctx_get_amdkfd_abi()), no kprobes;
 * kfdsync_event_get_state() reports KFDSYNC_SOURCE_RELAY),
 * kfdsync_event_add() hands the event to the context's relay, which asks
 * amdkfd what it delivered to the relayed events with AMDKFD_IOC_WAIT_EVENTS
 * (on a /dev/kfd fd of the library's own) and reports it to the module
 * (KFDSYNC_IOCTL_RELAY_SIGNALS). The relay has one of two forms, chosen
 * when the context is made:
 *
 * - **Threads** (kfdsync_ctx_new(), the default): threads of the library
 *   wait on the relayed events, always without a timeout (on 6.1 a timed
 *   wait can lose an auto-reset signal that lands as it expires), together
 *   with a private wake-up event of each thread. The threads block all
 *   signals, sleep in the kernel while nothing is signalled (no periodic
 *   wake-up), are named "kfdsync-relay", and are stopped and joined when
 *   the last event a thread relays is removed, or by kfdsync_ctx_free().
 * - **Dispatch** (kfdsync_ctx_new_flags() with KFDSYNC_CTX_DISPATCH): no
 *   thread. amdkfd gives nothing an event loop could poll for a signal
 *   event, so the relay asks it with waits that return at once, from
 *   kfdsync_ctx_dispatch() on a timer of the context's poll fd (@ref loop;
 *   every millisecond by default, kfdsync_ctx_set_dispatch_interval()). The
 *   timer runs only while a relayed event has an exported fence that may
 *   still be pending (until that fence signalled or its watchdog passed);
 *   each tick asks about those events only, in one system call per 1024. A
 *   signal is counted at the next tick after it: a fence ends up to one
 *   interval (plus the loop's delay) later than with a thread, never
 *   earlier. kfdsync_event_get_state() first counts what amdkfd delivered
 *   so far, so that the age it returns is as current as a thread's. Needs
 *   event ages (below): without them a wait that does not block can lose a
 *   signal, and kfdsync_event_add() fails with `-EOPNOTSUPP` in relay mode
 *   (KFDSYNC_CAP_DISPATCH says so up front).
 *
 * How many waits, and what the age counts, depends on amdkfd:
 *
 * - **With event ages** (KFD ioctl 1.14, Linux 6.5 and later): amdkfd
 *   counts every time it sets an event and tells a waiter the count. The
 *   relay reports the difference, so the age is exactly the number of
 *   times amdkfd set the event after registration, however many signals
 *   land between two wake-ups. One thread (or one probe of the dispatch
 *   form) serves up to 1024 events; at most 4 threads per context (4095
 *   events).
 * - **Without event ages** (Linux 6.1): amdkfd's multi-event wait says only
 *   that some event fired, while it consumes the pending signal of every
 *   event it waits on; so every relayed event has a thread of its own that
 *   waits on it and its wake-up event only, and reports one signal per
 *   wake-up: signals that land within one wake-up (a burst) count as one,
 *   so later fences of that event wait for signals that already happened
 *   and end by their watchdog (-ETIMEDOUT): late, never early.
 *
 * What the relay consumes, so that an application knows whether it can
 * still wait on its own events: the relay is always queued on every relayed
 * event (but for a moment after each wake-up), so amdkfd wakes it for every
 * signal; an application thread that is already waiting on the event then
 * wakes as well (amdkfd wakes every queued waiter), but the signal does not
 * stay pending: a wait that starts *after* the signal does not see it
 * (unless it passes an event age, with libhsakmt's _Ext waits, ROCr 5.7+).
 * And each relay wait consumes a signal left pending on an auto-reset event
 * (one that landed while no one waited). In return, on kernels with event
 * ages the application's own waits take nothing from the relay's count;
 * without event ages a signal the application's wait consumes first is not
 * counted (late, never early). Hence: relay only events that no other
 * thread waits on, or whose waiters are already waiting when the signal
 * comes; register each event with one context only (two relays would
 * report one signal twice); and relay only auto-reset events (a
 * manual-reset event stays set and would be reported again and again).
 *
 * What the age then guarantees (I1): the age counts what amdkfd delivered,
 * never a signal that did not happen, with two exceptions of amdkfd's own
 * making that no relay can tell from real signals:
 *
 * - amdkfd sets an event twice for one GPU write when two of its interrupt
 *   handlers for the process both see the written slot before either
 *   acknowledges it. Each GPU node has one handler (a work item that never
 *   runs beside itself), so this needs a process on two or more GPU nodes
 *   (two GPUs, or a partitioned GPU) whose handlers run at once, one of them
 *   handling the same event or scanning every slot (an interrupt whose own
 *   slot was already acknowledged) within the other's few instructions
 *   between reading and acknowledging the slot. With event ages the second
 *   set counts as a signal; without, it usually merges into the same
 *   wake-up. A fence exported for the next work may then signal one signal
 *   early. The library does not refuse relay exports on such machines (the
 *   KFD topology lists every GPU of the system, not those the process uses,
 *   so it would refuse every multi-GPU machine), it documents it: there,
 *   prefer kernels where the hooks attach (they count each write once).
 * - With event ages, a relay wait that is interrupted at the moment its
 *   event fires (the process being stopped, traced or frozen) makes amdkfd
 *   restore the auto-reset signal by setting the event again, which moves
 *   the age once more (kfd_wait_on_events(), free_waiters()).
 *
 * Further requirements:
 *
 * - A signal pending on the event (set, nobody waited) when it is
 *   registered is consumed, not counted: submit the work that signals only
 *   after registering (the pattern above).
 * - The relay holds its own fd of /dev/kfd until the context is freed
 *   (libkfdsync calls amdkfd itself, not libhsakmt), and uses one amdkfd
 *   signal event
 *   per running thread (its wake-up event, destroyed with the thread) of
 *   amdkfd's limit of 4095 per process: at most 4 with event ages, one per
 *   relayed event without.
 * - Unregister an event before destroying it (hsaKmtDestroyEvent()); see
 *   below for what happens otherwise.
 * - After fork(2) the child has no relays (nor the context).
 *
 * **When the relay fails.** A relayed event amdkfd destroys (the
 * application destroyed it without unregistering it first) cannot be
 * relayed any more, nor can any event once the relay's /dev/kfd fails. The
 * relay then unregisters each event it lost, so that its pending fences end
 * at once with `-ECANCELED` (as with the hooks when amdkfd destroys an
 * event; later calls for it get `-ENOENT`), and marks the context:
 * kfdsync_ctx_get_poll_fd() becomes readable and the next
 * kfdsync_ctx_dispatch() returns the failure's errno (`-EIDRM` for a
 * destroyed event, else the errno /dev/kfd failed with). The relay of the
 * other events goes on. This holds for both forms.
 *
 * kfdsync_ctx_set_relay() turns the relay off; the application then
 * relays with kfdsync_event_relay(), or the events' fences end by their
 * watchdog.
 *
 * (Before 0.1 was released these functions were kfdsync_event_add(),
 * _register_hsa(), _unregister() and _query(), the names of the uAPI's
 * structs: see "Names" above.)
 * @{
 */

struct _HsaEvent;	/* libhsakmt's HsaEvent */

/**
 * Register one of the caller's KFD signal events.
 *
 * @param event_id   the amdkfd event id (HsaEvent.EventId)
 * @param slot_addr  HsaEvent.EventData.HWData2, or 0: only checked for
 *   alignment (kfdsync.ko finds the slot by id, also where the events page
 *   is a discrete GPU's buffer)
 * @param[out] age   the event's age now (0), may be NULL
 *
 * When the event is relayed (relay mode, or the hooks cannot watch it:
 * kfdsync_event_get_state()'s source says which) this also starts the
 * event's relay (see "The relay"); if that fails, the event is unregistered
 * again.
 *
 * @return 0, `-EINVAL` a bad id or a misaligned @p slot_addr,
 *   `-EEXIST` registered already, `-ENOSPC` the
 *   context's limit of events is reached (or, relay mode, no amdkfd event
 *   left for a relay thread's wake-up event, or the relay's 4 threads of
 *   1024 events are full), `-EPERM` the context belongs to another process,
 *   `-ESRCH` relay mode and /dev/kfd cannot be opened,
 *   `-EAGAIN` relay mode and no thread could be started, `-EOPNOTSUPP`
 *   relay mode in the dispatch form and amdkfd has no event ages (see
 *   "The relay"), or another negative errno.
 */
int kfdsync_event_add(struct kfdsync_ctx *ctx, uint32_t event_id,
		      uint64_t slot_addr, uint64_t *age);

/**
 * kfdsync_event_add() for a libhsakmt event (its EventId and
 * EventData.HWData2). `-EOPNOTSUPP` in a libkfdsync built without
 * libhsakmt's header: call kfdsync_event_add() with those two fields.
 */
int kfdsync_event_add_hsa(struct kfdsync_ctx *ctx,
			  const struct _HsaEvent *event, uint64_t *age);

/**
 * Unregister an event; its pending fences end with -ECANCELED. In relay
 * mode, no relay thread waits on the event any more when this returns (so
 * it may be destroyed).
 * @return 0, `-ENOENT` not registered, or another negative errno.
 */
int kfdsync_event_remove(struct kfdsync_ctx *ctx, uint32_t event_id);

/** A registered event's state. 48 bytes, for good (see "Structs" above). */
struct kfdsync_event_state {
	uint64_t age;     /**< signals seen since registration */
	int32_t error;    /**< sticky -errno that ends every fence, or 0 */
	uint32_t pending; /**< unsignalled fences exported for it */
	uint32_t source;  /**< how kfdsync learns of signals: KFDSYNC_SOURCE_HOOKS
			       (kprobes on amdkfd) or KFDSYNC_SOURCE_RELAY */
	int32_t last_status; /**< how the event's last fence ended: 1 signalled,
				  a -errno (-ETIMEDOUT: its watchdog), 0 none
				  yet; what an eventfd export cannot tell */
	uint32_t reserved[6]; /**< zeroed; room for later fields */
};

/**
 * Read a registered event's state.
 * @return 0, `-ENOENT` not registered, or another negative errno.
 */
int kfdsync_event_get_state(struct kfdsync_ctx *ctx, uint32_t event_id,
			    struct kfdsync_event_state *state);

/**
 * Relay mode: report one signal of event @p event_id
 * (KFDSYNC_IOCTL_RELAY_SIGNAL; the relay threads report counts with
 * KFDSYNC_IOCTL_RELAY_SIGNALS). The event's age advances by one, and its
 * fences waiting for that age (or, for HSA signals, whose condition now
 * holds) signal. For applications that wait on their events themselves
 * (kfdsync_ctx_set_relay() off) and for HSA signals exported without the
 * <kfdsync_hsa.h> wrappers: call it after the event fired, or after the
 * signal's value changed. A process vouches for its own events only: a
 * false report can make its own fences signal early, nobody else's.
 *
 * @return 0, `-EBUSY` the hooks are the event's source (kfdsync sees its
 *   signals itself: nothing to relay), `-ENOENT` not registered, or
 *   another negative errno.
 */
int kfdsync_event_relay(struct kfdsync_ctx *ctx, uint32_t event_id);

/**
 * A sync_file for the next signal of @p event_id after @p age.
 *
 * @param watchdog_ns  relative watchdog for this fence; 0 or negative: the
 *   module's default (watchdog_ms); longer than the module's watchdog_max_ms
 *   is capped to it
 * @return the sync_file fd (the caller closes it; its driver is "kfdsync",
 *   its timeline "kfdsync:<pid>:ev<id>"), `-ENOENT` not registered,
 *   `-EINVAL` @p age is in the future, `-ENOSPC` the context's limit of
 *   pending fences is reached, or another negative errno.
 */
int kfdsync_event_export_sync_file(struct kfdsync_ctx *ctx, uint32_t event_id,
				   uint64_t age, int64_t watchdog_ns);

/**
 * Signal the caller's eventfd (add 1) at the next signal of @p event_id
 * after @p age, or when that fence ends with an error: for consumers that
 * only need a wake-up and must not hold a dma_fence. The eventfd does not
 * say how the fence ended: kfdsync_event_get_state()'s @c last_status does,
 * for the event's last fence (1 signalled, or its -errno).
 *
 * @param eventfd  an eventfd(2) (borrowed: kfdsync takes its own reference)
 * @return 0, `-EINVAL` not an eventfd, or the errors of
 *   kfdsync_event_export_sync_file().
 */
int kfdsync_event_export_eventfd(struct kfdsync_ctx *ctx, uint32_t event_id,
				 uint64_t age, int64_t watchdog_ns, int eventfd);

/** @} */

/**
 * @defgroup import Importing fences: a fence's end sets an event or memory
 * The other direction: when a sync_file from anywhere (a display's
 * out-fence, another GPU, a CPU timeline) ends, kfdsync writes a value into
 * the caller's memory (a GPU queue waiting with WAIT_REG_MEM proceeds, no
 * CPU involved), sets one of the caller's KFD events (threads in
 * hsaKmtWaitOnEvent() wake), and/or fails a registered event with the
 * fence's error (the error reaches that event's exported fences). See
 * "imports" in <linux/kfdsync.h> for the exact order and rules.
 *
 * Setting a KFD event is done in the kernel where kfdsync's hooks are
 * attached. Otherwise (relay mode) the library does it: the kernel does the
 * rest and signals an eventfd when done, and the library then calls
 * hsaKmtSetEvent(): in the threads form from an import relay thread of the
 * context ("kfdsync-import", started on first need, stopped by
 * kfdsync_ctx_free(), blocking all signals, sleeping in poll(2)
 * otherwise); in the dispatch form from kfdsync_ctx_dispatch(), the
 * eventfd being part of the context's poll fd (@ref loop). Either way the
 * event is set after the memory write, on success and on error alike.
 *
 * Imports end when their fence ends, or are cancelled (nothing written or
 * set) when the context is freed.
 * @{
 */

/**
 * What to do when an imported fence ends. Zero what you do not use, and
 * the reserved space. 72 bytes, for good (see "Structs" above).
 */
struct kfdsync_import_desc {
	uint32_t flags;         /**< KFDSYNC_IMPORT_MEMORY, _MEMORY32, _SUB,
				     _SET_EVENT, _FAIL_EVENT of
				     <linux/kfdsync.h> (not _EVENTFD) */
	uint32_t event_id;      /**< SET_EVENT: amdkfd event id to set */
	uint32_t fail_event_id; /**< FAIL_EVENT: registered event that takes
				     the fence's error */
	uint32_t pad;           /**< must be 0 */
	void *addr;             /**< MEMORY: 8-byte aligned (4 with MEMORY32)
				     ordinary writable memory of the caller */
	uint64_t value;         /**< MEMORY: stored (subtracted with SUB) when
				     the fence signals */
	uint64_t error_value;   /**< MEMORY: stored (subtracted) instead when
				     the fence ends with an error */
	uint64_t reserved[4];   /**< must be 0; room for later fields */
};

/**
 * Act on @p desc when the fence of @p sync_file_fd ends.
 *
 * @param sync_file_fd  borrowed; may be closed as soon as this returns
 * @return 0, or
 *   - `-EINVAL`: not a sync_file, bad flags or fields, misaligned address,
 *     a value too wide for MEMORY32,
 *   - `-EFAULT`: @p desc->addr is not writable ordinary memory,
 *   - `-ENOENT`: @p desc->fail_event_id is not registered,
 *   - `-ESRCH`: SET_EVENT, but the process has not opened /dev/kfd,
 *   - `-ENOSPC`: the context's limit of pending imports is reached,
 *   - `-EAGAIN`: relay mode, and the relay thread could not be started,
 *   - `-EOPNOTSUPP`: kfdsync.ko has no imports (KFDSYNC_CAP_IMPORT),
 *   - another negative errno.
 */
int kfdsync_import_sync_file(struct kfdsync_ctx *ctx, int sync_file_fd,
			     const struct kfdsync_import_desc *desc);

/**
 * Store @p value at @p addr when the fence signals, @p error_value when it
 * ends with an error (a 64-bit KFDSYNC_IMPORT_MEMORY import).
 */
int kfdsync_import_to_memory(struct kfdsync_ctx *ctx, int sync_file_fd,
			     uint64_t *addr, uint64_t value,
			     uint64_t error_value);

/**
 * Set KFD event @p event_id of the calling process when the fence ends (a
 * KFDSYNC_IMPORT_SET_EVENT import).
 */
int kfdsync_import_to_event(struct kfdsync_ctx *ctx, int sync_file_fd,
			    uint32_t event_id);

/** @} */

/**
 * @defgroup timeline CPU timelines
 * sw_sync-compatible timelines (/dev/kfdsync_timeline) for producers only
 * userspace can see: a CPU stage, a decoder, another device's completion.
 * A timeline counts up from 0; a fence for value V signals when the
 * timeline reaches V. Freeing the timeline signals its pending fences with
 * -ENOENT; the module's watchdog signals fences that wait too long with
 * -ETIMEDOUT.
 * @{
 */

/** A CPU timeline (opaque). */
struct kfdsync_timeline;

/**
 * Create a timeline, at value 0.
 *
 * @return 0, `-ENOENT` kfdsync.ko is not loaded, `-EACCES` no permission on
 *   /dev/kfdsync_timeline, `-ENFILE` the module's limit of timelines is
 *   reached, `-EINVAL` @p tl is NULL, or another negative errno.
 */
int kfdsync_timeline_new(struct kfdsync_timeline **tl);

/**
 * Free a timeline; its pending fences signal with -ENOENT. NULL is
 * accepted and ignored.
 */
void kfdsync_timeline_free(struct kfdsync_timeline *tl);

/**
 * A sync_file that signals when the timeline reaches @p value (already
 * signalled if it has). Asking twice for one value gives the same fence.
 *
 * @param name  name of the sync_file, at most 31 bytes; NULL for "kfdsync"
 * @return the sync_file fd (the caller closes it), `-ENOSPC` the timeline's
 *   limit of pending fences is reached, `-EINVAL` bad arguments (a name
 *   longer than 31 bytes), or another negative errno.
 */
int kfdsync_timeline_create_fence(struct kfdsync_timeline *tl, uint32_t value,
				  const char *name);

/**
 * Advance the timeline by @p step, signalling every fence it passes. As
 * with sw_sync, values are 32-bit and compared with wrap-around.
 *
 * @return 0, `-EINVAL` for NULL, or another negative errno.
 */
int kfdsync_timeline_inc(struct kfdsync_timeline *tl, uint32_t step);

/** @} */

/**
 * @defgroup sync_file sync_file utilities
 * These work on any sync_file, whoever made it.
 * @{
 */

/**
 * Is @p fd a sync_file?
 * @return 1 yes, 0 an open fd of another kind, `-EBADF` not an open fd.
 */
int kfdsync_sync_file_check(int fd);

/**
 * Merge two sync_files into a new one that signals when both have.
 *
 * @param name  name of the new sync_file, at most 31 bytes; NULL for
 *   "kfdsync-merge"
 * @return the new sync_file fd (the caller closes it), `-EINVAL` if the
 *   name is longer than 31 bytes (checked first) or either fd is not a
 *   sync_file, `-EBADF` if either is not open, or another negative errno.
 */
int kfdsync_sync_file_merge(const char *name, int fd1, int fd2);

/**
 * Wait until a sync_file ends, and say how.
 *
 * @param timeout_ns  relative timeout; negative waits forever, 0 only looks
 * @param[out] status  how it ended: 1 signalled, or the error it ended with
 *   (a -errno: -ETIMEDOUT for a kfdsync watchdog, -ECANCELED, -EIO, ...);
 *   0 (pending) with `-ETIME`. May be NULL.
 * @return 0 ended (see @p status), `-ETIME` timed out, `-EINVAL` not a
 *   sync_file, `-EBADF` not open, or another negative errno.
 */
int kfdsync_sync_file_wait_status(int fd, int64_t timeout_ns, int32_t *status);

/**
 * Wait until a sync_file ends; kfdsync_sync_file_wait_status() without the
 * status: 0 also when the fence ended with an error.
 */
int kfdsync_sync_file_wait(int fd, int64_t timeout_ns);

/** kfdsync_sync_file_wait_many(): wait until every fence has ended (else any one). */
#define KFDSYNC_WAIT_ALL (1u << 0)

/**
 * Wait on several sync_files at once, with one timeout for the whole wait
 * (the shape of drmSyncobjWait()): until any of them has ended, or with
 * KFDSYNC_WAIT_ALL until every one has. A fence that ended with an error
 * has ended; @p status says which did how.
 *
 * @param fds  @p count sync_files, borrowed
 * @param flags  0 (any) or KFDSYNC_WAIT_ALL
 * @param timeout_ns  for the whole wait; negative waits forever, 0 only
 *   looks
 * @param[out] status  @p count entries (may be NULL): 1 signalled, 0 still
 *   pending, or the -errno the fence ended with; filled in also with
 *   `-ETIME`
 * @return the number of fences that have ended (at least 1; @p count with
 *   KFDSYNC_WAIT_ALL), `-ETIME` the timeout passed first, `-EINVAL` bad
 *   arguments (NULL @p fds, @p count 0, unknown @p flags) or an fd that is
 *   not a sync_file, `-EBADF` one is not open, `-ENOMEM`, or another
 *   negative errno.
 */
int kfdsync_sync_file_wait_many(const int *fds, unsigned int count, uint32_t flags,
				int64_t timeout_ns, int32_t *status);

/** One fence inside a sync_file. 96 bytes, for good (see "Structs" above). */
struct kfdsync_fence_status {
	char driver[32];       /**< driver that made it, e.g. "kfdsync", "vgem" */
	char timeline[32];     /**< its timeline's name */
	int32_t status;        /**< 1 signalled, 0 pending, < 0 error (-errno) */
	uint32_t pad;          /**< zeroed */
	uint64_t timestamp_ns; /**< CLOCK_MONOTONIC time it signalled, or 0 */
	uint64_t reserved[2];  /**< zeroed; room for later fields */
};

/** A sync_file as a whole. 64 bytes, for good (see "Structs" above). */
struct kfdsync_sync_file_status {
	char name[32];       /**< the sync_file's name */
	int32_t status;      /**< 1 all signalled, 0 pending, < 0 an error */
	uint32_t num_fences; /**< fences it holds */
	uint32_t reserved[6]; /**< zeroed; room for later fields */
};

/**
 * Report a sync_file's state and, optionally, its fences.
 *
 * @param[out] st      the sync_file as a whole (may be NULL)
 * @param[out] fences  up to @p max_fences entries (may be NULL if
 *   @p max_fences is 0)
 * @return the number of fences in the sync_file (which may exceed
 *   @p max_fences: then only the first @p max_fences were filled in),
 *   `-EINVAL` not a sync_file or bad arguments, `-EBADF`, `-ENOMEM`, or
 *   another negative errno.
 */
int kfdsync_sync_file_get_status(int fd, struct kfdsync_sync_file_status *st,
				 struct kfdsync_fence_status *fences,
				 unsigned int max_fences);

/**
 * Add a sync_file to an accumulated fence, where -1 means "no fence yet"
 * (the shape of libdrm's sync_accumulate()): gather the fences a step must
 * wait for (several producers, the releases of several buffers) into one.
 *
 * If @p *acc is -1 it becomes a new descriptor of @p fd's sync_file (a
 * close-on-exec dup); otherwise a new sync_file that signals when both
 * have (kfdsync_sync_file_merge()) replaces @p *acc, and the previous
 * @p *acc is closed. A fence that ends with an error after the merge makes
 * the merged sync_file end with that error; but the kernel leaves fences
 * that have already signalled out of a merge, so the error of a fence that
 * had already failed is lost: then the return value is 1, and the caller
 * must carry the error itself.
 *
 * @param name  name of a merged sync_file (at most KFDSYNC_NAME_MAX bytes,
 *   checked first, also when no merge happens); NULL for "kfdsync-merge"
 * @param[in,out] acc  -1 or a sync_file fd owned by the caller, who closes
 *   the final one; on failure it is left unchanged (and still open)
 * @param fd  borrowed; may be closed as soon as this returns
 * @return 0; 1 if an input had already ended with an error that the merged
 *   sync_file therefore does not carry; `-EINVAL` @p acc is NULL, @p *acc
 *   is below -1, @p name is too long, or either fd is not a sync_file,
 *   `-EBADF` either is not open, or another negative errno.
 */
int kfdsync_sync_file_accumulate(const char *name, int *acc, int fd);

/**
 * Tell the fences of a sync_file when their consumer would like them
 * signalled (SYNC_IOC_SET_DEADLINE, Linux 6.4+): a compositor's next
 * vblank, say, so that a driver that supports deadlines can raise its
 * clocks. Only a hint: it never changes when or how a fence signals.
 * Fences whose driver has no deadline support ignore it, kfdsync's event
 * and HSA fences among them; kfdsync's CPU timeline fences keep the
 * earliest one for the timeline's producer (KFDSYNC_TL_IOC_GET_DEADLINE).
 * Setting one on a signalled fence is allowed and does nothing.
 *
 * @param deadline_ns  absolute CLOCK_MONOTONIC time, in nanoseconds (not a
 *   relative timeout: clock_gettime(CLOCK_MONOTONIC) plus the time left)
 * @return 0, `-EINVAL` not a sync_file, `-EBADF` not open, `-EOPNOTSUPP`
 *   the kernel is older than 6.4, or another negative errno.
 */
int kfdsync_sync_file_set_deadline(int fd, uint64_t deadline_ns);

/** @} */

/**
 * @defgroup dmabuf dma-buf implicit sync
 * Move fences between a sync_file and a dma-buf's reservation object
 * (DMA_BUF_IOCTL_EXPORT_SYNC_FILE / IMPORT_SYNC_FILE, Linux 6.0+). This is
 * how a fence reaches compositors and drivers that use implicit sync.
 * @{
 */

/** Access a dma-buf fence is for: wait for writers only. */
#define KFDSYNC_DMABUF_READ  (1u << 0)
/** Access a dma-buf fence is for: wait for readers and writers. */
#define KFDSYNC_DMABUF_WRITE (1u << 1)

/**
 * A sync_file of the fences a reader (KFDSYNC_DMABUF_READ) or a writer
 * (KFDSYNC_DMABUF_WRITE) of the buffer would wait for now.
 *
 * @return the sync_file fd (the caller closes it), `-EINVAL` for bad flags
 *   or if @p dmabuf_fd is not a dma-buf, `-EOPNOTSUPP` the kernel is older
 *   than 6.0, or another negative errno.
 */
int kfdsync_dmabuf_export_sync_file(int dmabuf_fd, unsigned int flags);

/**
 * Add a sync_file's fences to a dma-buf: with KFDSYNC_DMABUF_WRITE as a
 * write (everyone waits), with KFDSYNC_DMABUF_READ as a read (writers wait).
 *
 * @return 0, `-EINVAL` for bad flags, a non-sync_file, or if @p dmabuf_fd
 *   is not a dma-buf, `-EOPNOTSUPP` the kernel is older than 6.0, or
 *   another negative errno.
 */
int kfdsync_dmabuf_import_sync_file(int dmabuf_fd, int sync_file_fd,
				    unsigned int flags);

/** @} */

/**
 * @defgroup syncobj drm_syncobj
 * Move fences between sync_files and drm_syncobjs on a DRM device fd
 * (libdrm). Timeline points go through a temporary binary syncobj.
 * @{
 */

/**
 * Put a sync_file's fence into a syncobj: replace a binary syncobj's fence
 * (@p point 0), or add it as timeline point @p point.
 *
 * @return 0, `-EOPNOTSUPP` if the device has no (timeline) syncobjs,
 *   `-ENOENT` no such handle, `-EINVAL` not a sync_file, or another negative
 *   errno.
 */
int kfdsync_syncobj_import_sync_file(int drm_fd, uint32_t handle,
				     uint64_t point, int sync_file_fd);

/**
 * A sync_file for a binary syncobj's fence (@p point 0) or a timeline
 * point.
 *
 * @return the sync_file fd (the caller closes it), `-EOPNOTSUPP` as above,
 *   `-ENOENT` no such handle, `-EINVAL` no fence there yet, or another
 *   negative errno.
 */
int kfdsync_syncobj_export_sync_file(int drm_fd, uint32_t handle,
				     uint64_t point);

/** kfdsync_syncobj_eventfd(): when a fence is attached, not when it signals. */
#define KFDSYNC_SYNCOBJ_WAIT_AVAILABLE (1u << 0)

/**
 * Signal an eventfd (add 1) when a timeline point of a syncobj signals
 * (DRM_IOCTL_SYNCOBJ_EVENTFD, Linux 6.6+): a poll(2)-able wait for, say, a
 * compositor's wp_linux_drm_syncobj_v1 release point, with no thread
 * blocked in DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT.
 *
 * With KFDSYNC_SYNCOBJ_WAIT_AVAILABLE the eventfd is signalled as soon as
 * a fence is attached to the point, pending or not: then
 * kfdsync_syncobj_export_sync_file() can turn it into a sync_file (e.g.
 * for kfdsync_import_to_memory(), so a GPU queue waits for it instead of
 * the CPU). The eventfd is signalled once, at once if the point is there
 * already; a point that never comes never signals it (a fence attached
 * later to a lower point does not either). A fence that ends with an error
 * counts as signalled.
 *
 * @param handle  a syncobj of @p drm_fd; @p point 0 means a binary
 *   syncobj's fence
 * @param flags  0 or KFDSYNC_SYNCOBJ_WAIT_AVAILABLE
 * @param eventfd  an eventfd(2), borrowed: the kernel takes its own
 *   reference until it signals it or the syncobj is destroyed
 * @return 0, `-EINVAL` bad @p flags or @p eventfd is not an eventfd,
 *   `-EBADF` @p eventfd is not open, `-ENOENT` no such handle,
 *   `-EOPNOTSUPP` the device has no timeline syncobjs (or @p drm_fd is not
 *   a DRM device) or the kernel is older than 6.6, or another negative
 *   errno.
 */
int kfdsync_syncobj_eventfd(int drm_fd, uint32_t handle, uint64_t point,
			    unsigned int flags, int eventfd);

/** @} */

/**
 * @defgroup hsa HSA signals
 * An interrupt-capable HSA signal (what ROCr's hsa_signal_create() makes,
 * and what HIP events and streams sit on) is a signed 64-bit value in the
 * process's memory paired with a KFD signal event whose slot is the
 * signal's mailbox: whoever changes the value signals the event afterwards.
 * These functions take a struct kfdsync_hsa_signal, so that libkfdsync
 * does not depend on libhsa-runtime; <kfdsync_hsa.h> fills one in from an
 * hsa_signal_t.
 *
 * Export: "the signal's value satisfies a condition" as a sync_file or an
 * eventfd wake-up (KFDSYNC_IOCTL_EXPORT_CONDITION). The event is only the
 * hint, the value the truth: a fence whose condition already holds is born
 * signalled, otherwise it signals at the first signal of the event that
 * finds the condition true. The fence ends like every kfdsync fence
 * (watchdog, errors; see @ref event). Whoever changes the value must signal
 * the event afterwards: a GPU completion does; ROCr 5.2's CPU stores do only
 * while a thread waits on the signal in ROCr, which the <kfdsync_hsa.h>
 * wrappers arrange (with a *hint*, below).
 *
 * **Relay mode** (see "The relay" in @ref event): kfdsync then sees no
 * signal of the event, and the library starts no relay thread for it
 * (ROCr's own threads wait on it, and a relay would take their wake-ups).
 * The <kfdsync_hsa.h> wrappers relay through their hint instead: when ROCr
 * sees the condition hold, the hint reports a signal
 * (kfdsync_event_relay()) and kfdsync checks the value. A program that uses
 * the functions below directly calls kfdsync_event_relay() itself after it
 * changed the value (or after the GPU did); otherwise its fences end by
 * their watchdog.
 *
 * **Hints** (kfdsync_hsa_signal_hint_new()): what the <kfdsync_hsa.h>
 * wrappers register as a ROCr async handler per export. ROCr calls it once
 * when the signal's condition holds; it then signals the event (hooks mode:
 * hsaKmtSetEvent(), which kfdsync's cpu_set hook sees) or reports a signal
 * (relay mode). A hint lives as long as its fence can: it is inert once its
 * fence's watchdog deadline has passed, once kfdsync_ctx_free() freed its
 * context, or after it ran once, and it holds no memory ROCr could see
 * freed: ROCr gets a number, not a pointer. ROCr itself (5.2) has no way to
 * withdraw an async handler: its registration stays in ROCr's list until
 * the condition holds (then the inert hint does nothing and is dropped) or
 * the signal is destroyed (ROCr drops it without calling it).
 *
 * Import: when a sync_file ends, store a value into the signal (or
 * subtract one from it) and set its KFD event, so that GPU waiters (on
 * the memory) and CPU waiters (hsa_signal_wait_*(), on the event) proceed
 * (a kfdsync_import_sync_file() with KFDSYNC_IMPORT_MEMORY and
 * KFDSYNC_IMPORT_SET_EVENT).
 * @{
 */

/**
 * An interrupt-capable HSA signal, as kfdsync needs it. 40 bytes, for good
 * (see "Structs" above).
 */
struct kfdsync_hsa_signal {
	int64_t *value;     /**< the value (amd_signal_t.value), 8-byte aligned */
	uint64_t mailbox;   /**< the event's slot (amd_signal_t.event_mailbox_ptr) */
	uint32_t event_id;  /**< the KFD event (amd_signal_t.event_id) */
	uint32_t reserved[5]; /**< must be 0; room for later fields */
};

/**
 * Describe the HSA signal whose amd_signal_t is at @p amd_signal (for ROCr,
 * the hsa_signal_t handle): value at offset 8, event_mailbox_ptr at 16,
 * event_id at 24 (ROCr's amd_hsa_signal.h).
 *
 * @return 0, or `-EINVAL`: @p amd_signal or @p sig is NULL or misaligned,
 *   the signal is not a user signal (amd_signal_t.kind 1, not a doorbell),
 *   or it has no KFD event (event_id or mailbox 0: not interrupt-capable).
 */
int kfdsync_hsa_signal_from_amd_signal(const void *amd_signal,
				       struct kfdsync_hsa_signal *sig);

/** Conditions, as ROCr's hsa_signal_condition_t. */
enum kfdsync_hsa_condition {
	KFDSYNC_HSA_EQ = KFDSYNC_CONDITION_EQ,   /**< value == compare_value */
	KFDSYNC_HSA_NE = KFDSYNC_CONDITION_NE,   /**< value != compare_value */
	KFDSYNC_HSA_LT = KFDSYNC_CONDITION_LT,   /**< value < compare_value */
	KFDSYNC_HSA_GTE = KFDSYNC_CONDITION_GTE, /**< value >= compare_value */
};

/**
 * A sync_file that signals when @p sig's value satisfies @p condition
 * against @p compare_value. Registers the signal's event with the context
 * first if it is not registered, never with a relay: ROCr's threads wait
 * on that event themselves (see "The relay" in @ref event, and "Relay
 * mode" above). The registration stays, for later exports of the signal,
 * until kfdsync_hsa_signal_release() (or kfdsync_event_remove(), or
 * kfdsync_ctx_free()): release every signal you exported before you
 * destroy it (see there).
 *
 * @param watchdog_ns  as for kfdsync_event_export_sync_file()
 * @return the sync_file fd (the caller closes it), or
 *   - `-EINVAL`: bad @p condition, misaligned value, @p sig->reserved not 0,
 *     or the mailbox is not the event's slot in the caller's KFD events page,
 *   - `-EFAULT`: the value is not ordinary memory of the caller,
 *   - `-ENOSPC`: the context's limit of pending fences (or events) is reached,
 *   - another negative errno.
 */
int kfdsync_hsa_signal_export_sync_file(struct kfdsync_ctx *ctx,
					const struct kfdsync_hsa_signal *sig,
					enum kfdsync_hsa_condition condition,
					int64_t compare_value, int64_t watchdog_ns);

/**
 * Signal the caller's @p eventfd (add 1) when @p sig's value satisfies the
 * condition, or when the fence ends with an error.
 *
 * @return 0, `-EINVAL` not an eventfd, or the errors of
 *   kfdsync_hsa_signal_export_sync_file().
 */
int kfdsync_hsa_signal_export_eventfd(struct kfdsync_ctx *ctx,
				      const struct kfdsync_hsa_signal *sig,
				      enum kfdsync_hsa_condition condition,
				      int64_t compare_value, int64_t watchdog_ns,
				      int eventfd);

/**
 * Release what exports of @p sig registered with the context (its KFD
 * event; kfdsync_event_remove() of @p sig->event_id, and its hints made
 * inert): the signal's fences still pending end with -ECANCELED. Call it
 * once the signal is exported no more, and always before
 * hsa_signal_destroy(): ROCr (5.2) may hand a destroyed signal's memory and
 * KFD event to the next signal it creates, and a fence still exported for
 * the old signal would then end by the new signal's value (bridge_hsa
 * shows it); and each registration counts against the context's limit of
 * events (max_events) until released.
 *
 * @return 0, `-EINVAL` NULL or bad arguments (@p sig->reserved not 0),
 *   `-ENOENT` nothing of @p sig is registered.
 */
int kfdsync_hsa_signal_release(struct kfdsync_ctx *ctx, const struct kfdsync_hsa_signal *sig);

/** kfdsync_hsa_signal_import_sync_file(): subtract instead of store. */
#define KFDSYNC_HSA_IMPORT_SUBTRACT (1u << 0)

/**
 * When the fence of @p sync_file_fd ends, store @p value into @p sig (or
 * subtract it, with KFDSYNC_HSA_IMPORT_SUBTRACT; an atomic 64-bit
 * operation), @p error_value instead if the fence ends with an error, then
 * set the signal's KFD event, as hsa_signal_store_screlease() or
 * hsa_signal_subtract_screlease() would.
 *
 * @param sync_file_fd  borrowed; may be closed as soon as this returns
 * @param flags  0 or KFDSYNC_HSA_IMPORT_SUBTRACT
 * @return 0, or the errors of kfdsync_import_sync_file().
 */
int kfdsync_hsa_signal_import_sync_file(struct kfdsync_ctx *ctx,
					int sync_file_fd,
					const struct kfdsync_hsa_signal *sig,
					uint32_t flags, int64_t value,
					int64_t error_value);

/**
 * A hint for an export of @p sig with watchdog @p watchdog_ns (as given to
 * the export), to register as a ROCr async handler:
 * `hsa_amd_signal_async_handler(signal, condition, compare_value,
 * kfdsync_hsa_signal_hint_handler, (void *)(uintptr_t)*hint)`. The
 * <kfdsync_hsa.h> wrappers do exactly that; see "Hints" above.
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

/**
 * @defgroup amdgpu amdgpu command submissions (libdrm_amdgpu)
 * Fences of the amdgpu graphics/compute command submission path (not KFD):
 * a CS fence as a sync_file, and a sync_file as a syncobj that a CS waits
 * on (an AMDGPU_CHUNK_ID_SYNCOBJ_IN dependency of amdgpu_cs_submit_raw2()).
 * @p dev is libdrm_amdgpu's amdgpu_device_handle; include <amdgpu.h> for
 * it. These functions are built and their argument checks tested, but not
 * tested on amdgpu hardware (the project's test machines have none).
 * A libkfdsync built without libdrm_amdgpu returns `-EOPNOTSUPP` from them.
 * @{
 */

struct amdgpu_device;	/* libdrm_amdgpu's amdgpu_device_handle points to one */
struct amdgpu_cs_fence;

/**
 * A sync_file for an amdgpu CS fence (amdgpu_cs_fence_to_handle(),
 * AMDGPU_FENCE_TO_HANDLE_GET_SYNC_FILE_FD).
 *
 * @param fence  the submission's fence, as amdgpu_cs_submit() filled in
 *   its context, ip_type, ring and fence (sequence number)
 * @return the sync_file fd (the caller closes it), `-EINVAL` @p dev or
 *   @p fence (or its context) is NULL, `-EOPNOTSUPP` no libdrm_amdgpu, or
 *   another negative errno from amdgpu (e.g. `-ENOENT` no such context).
 */
int kfdsync_amdgpu_fence_export_sync_file(struct amdgpu_device *dev,
					  const struct amdgpu_cs_fence *fence);

/**
 * A new binary syncobj of @p dev holding @p sync_file_fd's fence, for a
 * command submission to wait on. The caller destroys it with
 * amdgpu_cs_destroy_syncobj().
 *
 * @param sync_file_fd  borrowed; checked before @p dev is used
 * @param[out] syncobj  the new syncobj handle
 * @return 0, `-EINVAL` NULL @p dev or @p syncobj, or @p sync_file_fd is not
 *   a sync_file, `-EBADF` it is not open, `-EOPNOTSUPP` no libdrm_amdgpu,
 *   or another negative errno from amdgpu.
 */
int kfdsync_amdgpu_syncobj_from_sync_file(struct amdgpu_device *dev,
					  int sync_file_fd, uint32_t *syncobj);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* KFDSYNC_H */
