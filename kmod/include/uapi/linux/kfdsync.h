/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * kfdsync: AMD KFD events as dma_fence / sync_file.
 *
 * This is the single definition of the /dev/kfdsync interface; the kernel
 * module and libkfdsync both build against it.
 *
 * Conventions: fixed-size __u32/__u64 fields only, no enums or bitfields,
 * every struct has an explicit @flags field (unknown bits are rejected with
 * -EINVAL) and explicit padding (must be zero), structs are sized to a
 * multiple of 8 bytes so that 32-bit and 64-bit callers share one layout.
 * A changed struct gets a new ioctl number, never a version field.
 */

#ifndef _UAPI_LINUX_KFDSYNC_H
#define _UAPI_LINUX_KFDSYNC_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * DOC: opening /dev/kfdsync
 *
 * Every open() is a context bound to the calling process (its thread group
 * and address space); closing it ends the context. open() fails with
 * EINVAL from a task without an address space, EMFILE when the caller's
 * user (effective uid) has max_user_contexts contexts open, or, in a user
 * namespace, when its owner has (see "limits"), ENFILE at max_contexts
 * system-wide unless the caller has CAP_SYS_ADMIN, ENOMEM.
 * /dev/kfdsync_timeline's open() fails likewise, with max_user_timelines
 * and max_timelines.
 */

/**
 * DOC: limits
 *
 * What one person can take, so that nobody can deny the others (module
 * parameters, taken by a context or timeline when it is opened):
 *
 * - Per user: contexts, timelines, registered events, pending fences and
 *   pending imports are counted per effective uid, each within its
 *   max_user_* limit. A process in a user namespace is charged twice: to
 *   its own uid, and to an owner found from its outermost user namespace
 *   below the initial one, each within the same limit: the user who made
 *   that namespace (a rootless container), or, if root made it (LXD,
 *   Incus, Docker's userns-remap, systemd-nspawn -U, Kubernetes pods with
 *   user namespaces), a pseudo-owner that is that namespace itself. So a
 *   range of subordinate uids adds nothing to its owner's share, each of
 *   root's containers counts as one user, and none of them uses up root's
 *   own share.
 * - System-wide: max_contexts and max_timelines bind every caller without
 *   CAP_SYS_ADMIN (in the initial user namespace); whatever the others
 *   hold, such a caller can still open the devices, within its own
 *   per-user limits.
 * - Pinned memory (imports to memory, condition fences) is charged to the
 *   pinner's RLIMIT_MEMLOCK (its user's locked_vm, ENOMEM beyond), unless
 *   it has CAP_IPC_LOCK: the whole folio a pin holds in memory, once per
 *   user however many of its words are pinned. A word of a transparent
 *   huge page or of a hugetlb page is 2 MiB (or more) of RLIMIT_MEMLOCK,
 *   not 4 KiB; keep such words in small pages (MADV_NOHUGEPAGE) to pin
 *   little. The same pages are charged a second time, against the same
 *   RLIMIT_MEMLOCK, to the pinner's user and to its namespace's owner (as
 *   above): what all the subordinate uids of one container pin through
 *   kfdsync together stays within one RLIMIT_MEMLOCK (the largest any of
 *   its processes has: they cannot raise their hard limit), not one per
 *   uid.
 */

/**
 * DOC: fdinfo
 *
 * /proc/PID/fdinfo/FD of an open /dev/kfdsync describes its context, one
 * "key:\tvalue" line per key after the VFS's own (pos, flags, ...), as DRM
 * drivers describe their clients (Documentation/gpu/drm-usage-stats.rst).
 * procfs decides who may read it (the fd's process's own user, or a
 * process allowed to ptrace it). The keys are ABI: keys are only ever
 * added, never changed or removed, so a reader ignores keys it does not
 * know. Values are decimal unless noted:
 *
 * kfdsync-context:
 *	the context's id, unique while the module is loaded
 * kfdsync-tgid:
 *	the process that opened it, in the reader's pid namespace (0 if
 *	not visible there)
 * kfdsync-uid:
 *	the user charged for it (the opener's effective uid), in the
 *	reader's user namespace
 * kfdsync-source:
 *	"hooks" or "relay", the module's current signal source
 * kfdsync-events, kfdsync-pending, kfdsync-imports:
 *	registered events, pending fences, pending imports
 * kfdsync-max-events, kfdsync-max-fences, kfdsync-max-imports,
 * kfdsync-watchdog-ms, kfdsync-watchdog-max-ms:
 *	the limits the context took at open
 * kfdsync-event-<id>:
 *	one line per registered event, by id (so at most 4095): space
 *	separated "field=value" pairs, fields only ever added:
 *	source=hooks|relay, age=<signals counted>, slot=<the slot's value,
 *	0x%016llx, or "-" when not read (relay events)>, pending=<pending
 *	fences>, error=<0 or the sticky -errno>, last=<how the last fence
 *	ended: 1 signalled, -errno, 0 none yet>
 *
 * /dev/kfdsync_timeline's keys are in <linux/kfdsync_timeline.h>.
 * <debugfs>/kfdsync is for people and may change.
 */

/**
 * DOC: ABI version
 *
 * KFDSYNC_ABI_VERSION is reported by KFDSYNC_IOCTL_INFO. It is bumped only
 * for incompatible changes of existing ioctls; new ioctls are discovered by
 * trying them (-ENOTTY means "not supported by this module").
 */
#define KFDSYNC_ABI_VERSION		1

/**
 * DOC: ioctl numbers
 *
 * kfdsync uses the ioctl type 'J', numbers 0x00 - 0x3F. 'J' has no entry in
 * the 6.1 kernel's Documentation/userspace-api/ioctl/ioctl-number.rst and no
 * user in the 6.1 and 6.12 uAPI headers.
 */
#define KFDSYNC_IOCTL_BASE		'J'

/**
 * DOC: hooks
 *
 * The amdkfd functions kfdsync can attach to (kprobes on amdgpu.ko), as
 * bits of &kfdsync_info.hooks and &kfdsync_info.hooks_supported:
 *
 * KFDSYNC_HOOK_GPU_INTERRUPT:
 *	set_event_from_interrupt(): amdkfd acknowledges a slot a GPU wrote
 *	and sets its event, while handling a GPU interrupt.
 * KFDSYNC_HOOK_CPU_SET:
 *	set_event() called by kfd_set_event(): a process set an event
 *	(AMDKFD_IOC_SET_EVENT).
 * KFDSYNC_HOOK_HW_EXCEPTION:
 *	kfd_signal_hw_exception_event(): hardware exception of a process.
 * KFDSYNC_HOOK_VM_FAULT:
 *	kfd_signal_vm_fault_event(): GPU memory fault of a process.
 * KFDSYNC_HOOK_RESET:
 *	kfd_signal_reset_event(): GPU reset.
 * KFDSYNC_HOOK_POISON:
 *	kfd_signal_poison_consumed_event(): RAS poison consumed by a process.
 * KFDSYNC_HOOK_DESTROY:
 *	kfd_event_destroy(): a process destroyed an event.
 * KFDSYNC_HOOK_FREE:
 *	kfd_event_free_process(): amdkfd frees a process's events and signal
 *	page.
 * KFDSYNC_HOOK_UNWRITTEN:
 *	kfd_signal_event_interrupt() with signal_mailbox_updated false
 *	(amdkfd 7.1 and later; gfx 12.1's end of pipe): a GPU signal that
 *	wrote no slot.
 * KFDSYNC_HOOK_TERMINATE:
 *	kfd_signal_process_terminate_event() (amdkfd 7.0 and later, with the
 *	7.1 ABI): the process's GPU was unplugged; its fences end with
 *	-ENODEV.
 *
 * Which hooks exist depends on the amdkfd ABI the loaded amdgpu has
 * (&kfdsync_info.hooks_supported). Hooks are all or nothing: either every
 * hook of that ABI is attached (%KFDSYNC_SOURCE_HOOKS) or none is
 * (%KFDSYNC_SOURCE_RELAY).
 */
#define KFDSYNC_HOOK_GPU_INTERRUPT	0x01U
#define KFDSYNC_HOOK_CPU_SET		0x02U
#define KFDSYNC_HOOK_HW_EXCEPTION	0x04U
#define KFDSYNC_HOOK_VM_FAULT		0x08U
#define KFDSYNC_HOOK_RESET		0x10U
#define KFDSYNC_HOOK_POISON		0x20U
#define KFDSYNC_HOOK_DESTROY		0x40U
#define KFDSYNC_HOOK_FREE		0x80U
#define KFDSYNC_HOOK_UNWRITTEN		0x100U
#define KFDSYNC_HOOK_TERMINATE		0x200U

/**
 * DOC: info flags
 *
 * Bits of &kfdsync_info.info_flags:
 *
 * KFDSYNC_INFO_AMDKFD_PRESENT:
 *	amdgpu.ko, which carries amdkfd, is loaded (or loading). Set even
 *	with hooks=N: it tells whether /dev/kfd can exist, not whether kfdsync
 *	uses it.
 * KFDSYNC_INFO_RELAY_FORCED:
 *	The module parameter hooks=N forces relay mode: kfdsync attaches no
 *	hooks, even when amdgpu is loaded, and userspace must relay signals.
 * KFDSYNC_INFO_AMDKFD_UNVERIFIED:
 *	The loaded amdgpu.ko's BTF matches no amdkfd ABI kfdsync implements,
 *	or it has no BTF kfdsync can read (see "amdkfd ABI verdicts"): it
 *	attaches nothing and calls nothing of amdkfd's; relay mode.
 *	KFDSYNC_IOCTL_AMDKFD_ABI says why.
 */
#define KFDSYNC_INFO_AMDKFD_PRESENT	0x01U
#define KFDSYNC_INFO_RELAY_FORCED	0x02U
#define KFDSYNC_INFO_AMDKFD_UNVERIFIED	0x04U

/*
 * Size of &kfdsync_info.release: a Linux release string is at most 64
 * characters (__NEW_UTS_LEN), plus the terminating NUL, rounded up to 8.
 */
#define KFDSYNC_RELEASE_LEN		72

/**
 * struct kfdsync_info - what the module is and what it attached to
 * @flags:		In: must be 0.
 * @pad:		In: must be 0.
 * @abi_version:	Out: %KFDSYNC_ABI_VERSION of the module.
 * @kernel_version:	Out: LINUX_VERSION_CODE the module was built for,
 *			KERNEL_VERSION(major, minor, min(sublevel, 255)).
 * @hooks:		Out: KFDSYNC_HOOK_* bits attached right now. Hooks
 *			come and go with amdgpu.ko; a hook that could not be
 *			attached is simply not set.
 * @hooks_supported:	Out: KFDSYNC_HOOK_* bits this module attaches to
 *			the loaded amdgpu: those of the amdkfd ABI the gate
 *			matched (or judged closest); with no verdict, every
 *			hook this module knows.
 * @info_flags:		Out: KFDSYNC_INFO_* bits.
 * @max_contexts:	Out: limit of open contexts of one user (module
 *			parameter max_user_contexts); system-wide limits are
 *			in &struct kfdsync_status.
 * @max_events:		Out: limit of events one context may register.
 * @max_fences:		Out: limit of unsignalled fences one context may
 *			have exported at a time.
 * @watchdog_ms:	Out: default watchdog of an exported fence, in
 *			milliseconds: a fence still unsignalled after this
 *			long is signalled with -ETIMEDOUT.
 * @watchdog_max_ms:	Out: upper bound of a per-fence watchdog override,
 *			in milliseconds.
 * @release:		Out: release of the running kernel (the release
 *			uname(2) reports outside any UTS namespace), NUL
 *			terminated.
 *
 * @max_events, @max_fences, @watchdog_ms and @watchdog_max_ms are the values
 * of the context the ioctl is called on: a context takes them from the module
 * parameters when it is opened and keeps them for its lifetime.
 *
 * @release is an inline array rather than a pointer and a size: it is short
 * and bounded by the kernel, and a fixed array keeps the ioctl a single copy
 * with one layout for 32-bit and 64-bit callers.
 */
struct kfdsync_info {
	__u32 flags;
	__u32 pad;
	__u32 abi_version;
	__u32 kernel_version;
	__u32 hooks;
	__u32 hooks_supported;
	__u32 info_flags;
	__u32 max_contexts;
	__u32 max_events;
	__u32 max_fences;
	__u32 watchdog_ms;
	__u32 watchdog_max_ms;
	char release[KFDSYNC_RELEASE_LEN];
};

/**
 * DOC: KFDSYNC_IOCTL_INFO - describe the module and its hooks
 *
 * Takes a &struct kfdsync_info with @flags and @pad zero and fills in every
 * other field. Any process that can open /dev/kfdsync may call it.
 *
 * Return: 0 on success, or -1 with errno set to:
 *
 * - EFAULT: the argument is not readable and writable memory.
 * - EINVAL: &kfdsync_info.flags or &kfdsync_info.pad is not zero.
 * - ENOTTY: the request is not an ioctl of this module (another type,
 *   number, direction or size): what every kfdsync ioctl returns for
 *   requests it does not know.
 */
#define KFDSYNC_IOCTL_INFO \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x00, struct kfdsync_info)

/**
 * DOC: events
 *
 * A context registers amdkfd signal events of its own process
 * (KFDSYNC_IOCTL_EVENT_REGISTER) and then exports fences for them. Every
 * registered event has an *age*: the number of signals kfdsync has seen since
 * the registration (0 at registration; a signal already pending in the slot
 * at registration time counts before age 0). "The next signal of event E
 * after age A" is the fence kfdsync exports for (E, A): it signals once the
 * age exceeds A, and is born signalled when it already does. Take A from
 * KFDSYNC_IOCTL_EVENT_QUERY (or the registration) *before* submitting the GPU
 * work that signals the event, export afterwards: the export is then
 * race-free, however early the work completes.
 *
 * Each registered event is one fence context (fences of different events are
 * unordered), with the target age as the 64-bit seqno. The fences' timeline
 * name is "kfdsync:<tgid>:ev<event id>", their driver name "kfdsync".
 *
 * Every fence ends: on the signal, or with an error (its status in
 * SYNC_IOC_FILE_INFO, the eventfd is signalled either way):
 *
 * - -ETIMEDOUT: the fence's watchdog expired (module parameter watchdog_ms,
 *   or a per-export deadline, capped at watchdog_max_ms from now), or that
 *   of a fence of the same event at the same or a higher seqno (see below).
 * - -ECANCELED: the event was unregistered, the context closed, the owning
 *   process's address space went away, or amdkfd destroyed the event (its
 *   id may then be reused by another event: kfdsync never lets that one
 *   signal these fences). That holds for a destroy that starts
 *   (AMDKFD_IOC_DESTROY_EVENT is called) after KFDSYNC_IOCTL_EVENT_REGISTER
 *   returned; see there for one that starts before.
 * - -EIO: hardware exception, RAS poison or GPU reset affecting the owner,
 *   amdkfd freeing the owner's events, or amdgpu (amdkfd) unloaded. After
 *   amdgpu comes back, the context registers the new amdkfd's events (an
 *   id still registered from before must be unregistered first).
 * - -EFAULT: GPU memory (VM) fault of the owner.
 *
 * The errors other than -ETIMEDOUT are sticky: once an event ended with
 * one, every later export of it is born signalled with that error.
 *
 * What kfdsync guarantees:
 *
 * - I1, never early. A fence signals (without error) only after the
 *   signal it stands for happened: with the hooks, after amdkfd
 *   acknowledged the GPU's write of the slot or set the event from the CPU
 *   (see "sources", also for the one exception a process can make for
 *   itself: a set through a /dev/kfd descriptor kept across execve()); in
 *   relay mode, after the owner relayed it.
 * - I2, always ends. Every fence ends within its watchdog at the latest,
 *   and the module cannot be unloaded while any of its fences exists.
 *   What ends fences never waits for memory: the watchdog's, the imports'
 *   and the slot layer's workers have rescuer threads (WQ_MEM_RECLAIM),
 *   and the paths that end fences allocate nothing.
 * - I3, each signal counted once. With the hooks, every write of the slot
 *   amdkfd acknowledges counts exactly once, and every successful CPU set;
 *   a write that lands while amdkfd is acknowledging the previous one is
 *   one signal with it (amdkfd itself sees one). A hook hit the kernel
 *   missed (KFDSYNC_IOCTL_STATUS.hooks_missed; recursion, not seen in
 *   normal operation) may be a signal not counted: its fence then ends by
 *   its watchdog, never early.
 * - I4, order. All fences of an event share one fence context, seqno =
 *   target age; they end in seqno order: when a fence ends with an error
 *   (its watchdog), every pending fence of that event at or below its
 *   seqno ends with it, and a fence exported later at or below that seqno
 *   is born with -ETIMEDOUT. Condition fences have contexts of their own.
 * - I5, resources follow references. A fence nobody holds any more leaves
 *   its event and counts against no limit. Limits are per context and per
 *   user (module parameters max_user_*: contexts, timelines, events,
 *   pending fences, imports; a user namespace's uids count for its owner
 *   too), so one user cannot deny another, and the system-wide limits
 *   never deny CAP_SYS_ADMIN; pinned memory (imports, conditions) is
 *   charged to the user's RLIMIT_MEMLOCK, the whole folio it holds, unless
 *   the caller has CAP_IPC_LOCK. See "limits".
 *
 * These hold while the system's kprobes fire. kfdsync attaches no hook when
 * they do not (KFDSYNC_RELAY_KPROBES_OFF), and where it reads a slot on its
 * own (registration, fdinfo's slot=, debugfs) it checks first that a probe
 * of its own fires: while root has disarmed every kprobe (debugfs
 * kprobes/enabled) or turned ftrace off, registrations go to the relay and
 * nothing reads a slot. It cannot see the switch thrown between two such
 * checks: the hooks then stop silently, the one for amdkfd freeing a
 * process's signal page too, and a GPU signal counted after kprobes are
 * armed again may read a page amdkfd freed meanwhile. Unload kfdsync (or
 * amdgpu) first.
 */

/**
 * DOC: sources
 *
 * What counts the signals of a registered event, see
 * KFDSYNC_IOCTL_EVENT_QUERY. It is decided when the event is registered,
 * by what is active then, and never changes for that event.
 *
 * KFDSYNC_SOURCE_HOOKS:
 *	kfdsync's hooks on amdkfd (every KFDSYNC_HOOK_* attached), for an
 *	event whose slot they can watch (see KFDSYNC_IOCTL_EVENT_REGISTER). A GPU
 *	signal is a write of the event's slot that amdkfd acknowledges while
 *	handling an interrupt: each such write counts once, also when two
 *	interrupt handlers find it at once (amdkfd then sets the event
 *	twice); a second write that lands while amdkfd is acknowledging the
 *	first is overwritten by amdkfd and is one signal with it, for amdkfd
 *	as for kfdsync. A CPU signal is a successful kfd_set_event() (the
 *	SET_EVENT ioctl), counted for the registered event of that id of the
 *	process whose address space the setter runs in: a process that
 *	kept a /dev/kfd descriptor across execve() and sets an event through
 *	it (amdkfd then sets the event of the process before the exec) counts
 *	a signal for the event of the same id of its new image, if one is
 *	registered. To tell its counted writes from new ones, kfdsync
 *	replaces a written slot value with 0xfffffffffffffffe, which amdkfd
 *	still reads as signalled; programs must not give that value meaning.
 *	kfdsync counts a signal at most once and never one that did not
 *	happen (but for that set through a descriptor kept across
 *	execve()): a fence never signals before the signal it stands for.
 * KFDSYNC_SOURCE_RELAY:
 *	The hooks were not attached (hooks=N, an amdgpu whose amdkfd ABI
 *	kfdsync does not implement, kprobes unavailable), or they cannot
 *	watch this event's slot (no signal page yet): the process reports the
 *	signals amdkfd delivers to it, typically from a thread that waits on
 *	the events (KFDSYNC_IOCTL_RELAY_SIGNAL, KFDSYNC_IOCTL_RELAY_SIGNALS).
 *	The age then counts what amdkfd delivered, which is the truth only
 *	as far as amdkfd's own count is: amdkfd may signal an event twice for
 *	one GPU write when two of the process's interrupt handlers run at
 *	once (a process with queues on two GPUs), which a relay cannot tell
 *	from two writes. A relay consumes auto-reset signals: only relay
 *	events no other thread waits on, or manual-reset events.
 */
#define KFDSYNC_SOURCE_HOOKS		1U
#define KFDSYNC_SOURCE_RELAY		2U

/* Largest amdkfd signal event id + 1 (KFD_SIGNAL_EVENT_LIMIT). */
#define KFDSYNC_EVENT_ID_LIMIT		4096U

/**
 * DOC: register flags
 *
 * Bits of &kfdsync_event_register.flags:
 *
 * KFDSYNC_REGISTER_REPORT:
 *	In: report the registered event's source in @flags on return (below),
 *	so that the caller does not need KFDSYNC_IOCTL_EVENT_QUERY to learn
 *	it. Modules older than this flag refuse it (EINVAL, unknown flags);
 *	callers then register without it and query.
 * KFDSYNC_REGISTER_HOOKS, KFDSYNC_REGISTER_RELAY:
 *	Out, with KFDSYNC_REGISTER_REPORT: the event's source (see "sources"),
 *	exactly one of them: KFDSYNC_REGISTER_HOOKS for %KFDSYNC_SOURCE_HOOKS,
 *	KFDSYNC_REGISTER_RELAY for %KFDSYNC_SOURCE_RELAY. Neither is set only
 *	if another thread of the caller unregistered the event before the
 *	ioctl returned. In: ignored, so that a caller may pass the struct of
 *	an earlier call again; without KFDSYNC_REGISTER_REPORT @flags is
 *	returned as 0.
 */
#define KFDSYNC_REGISTER_REPORT		0x1U
#define KFDSYNC_REGISTER_HOOKS		0x2U
#define KFDSYNC_REGISTER_RELAY		0x4U

/**
 * struct kfdsync_event_register - argument of KFDSYNC_IOCTL_EVENT_REGISTER
 * @event_id:	In: amdkfd event id (HsaEvent.EventId), 1 to 4095.
 * @flags:	In: 0 or KFDSYNC_REGISTER_REPORT (see "register flags"). Out:
 *		with KFDSYNC_REGISTER_REPORT, the event's source.
 * @slot_addr:	In: the event's signal slot in the caller's address space,
 *		as libhsakmt reports it in HsaEvent.EventData.HWData2, or 0:
 *		only checked for alignment (kfdsync finds the slot by
 *		@event_id; the field stays for the ABI).
 * @age:	Out: the event's age, always 0 after a registration.
 *
 * The reply thus holds everything a caller needs to export the event's
 * next signal (its age) and to know who counts it (its source), in one
 * system call. The struct's size and the ioctl's number are those of ABI 1's
 * first modules: programs built against either header work with either
 * module.
 */
struct kfdsync_event_register {
	__u32 event_id;
	__u32 flags;
	__u64 slot_addr;
	__u64 age;
};

/**
 * DOC: KFDSYNC_IOCTL_EVENT_REGISTER - watch one of the caller's KFD events
 *
 * Registers a signal event of the calling process with the context.
 *
 * With the hooks active, kfdsync finds the event's slot by @event_id in
 * amdkfd's own state for the calling process: amdkfd's kernel mapping of
 * the process's signal page, whether amdkfd allocated that page (a system
 * without a discrete GPU) or libhsakmt gave it a GPU buffer (every discrete
 * GPU, where there is no /dev/kfd events mapping at all). Whatever
 * @slot_addr says (0, the buffer's address, a /dev/kfd mapping, another
 * event's slot) the event counts the writes of its own slot only. kfdsync
 * reads the slot, also after the process unmapped it, until amdkfd
 * destroys the event or frees the process (then its fences end, see
 * "events").
 *
 * An event the hooks cannot watch is counted by the relay instead, and the
 * reply says so (KFDSYNC_REGISTER_RELAY): the calling process has no
 * amdkfd process, or amdkfd has no signal page for it yet (it makes one
 * with the process's first signal event). KFDSYNC_IOCTL_STATUS's
 * KFDSYNC_STATUS_WATCH_SLOTS tells beforehand. No valid event is refused:
 * EINVAL is for malformed arguments only.
 *
 * kfdsync cannot tell whether amdkfd knows the id: the registration
 * counts the signals of whatever event has @event_id in the process from
 * now on, until amdkfd destroys it (its fences then end, -ECANCELED). An
 * id amdkfd never created, or whose event it destroyed before, therefore
 * never signals until amdkfd gives the id to a new event, whose signals
 * then count. The same holds when another thread of the process destroys
 * the event while this ioctl runs (amdkfd's destroy started before it
 * returned): the registration may outlive the destroy and count the event
 * that takes the id next. A destroy that starts after it returned always
 * ends the registration.
 *
 * In relay mode every event is counted by the relay.
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable and writable memory.
 * - EINVAL: unknown @flags (see "register flags"); @event_id 0 or not below
 *   %KFDSYNC_EVENT_ID_LIMIT; @slot_addr not 8-byte aligned; with the
 *   hooks: the caller's amdkfd process is being freed.
 * - EPERM: the caller is not the process that opened the context, or the
 *   context's address space went away.
 * - EEXIST: @event_id is already registered with this context.
 * - ENOSPC: the context has max_events events registered, or the user
 *   max_user_events.
 * - ENOMEM: out of memory.
 */
#define KFDSYNC_IOCTL_EVENT_REGISTER \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x01, struct kfdsync_event_register)

/**
 * struct kfdsync_event_unregister - argument of KFDSYNC_IOCTL_EVENT_UNREGISTER
 * @event_id:	In: a registered event id.
 * @flags:	In: must be 0.
 */
struct kfdsync_event_unregister {
	__u32 event_id;
	__u32 flags;
};

/**
 * DOC: KFDSYNC_IOCTL_EVENT_UNREGISTER - stop watching an event
 *
 * Its unsignalled fences end with -ECANCELED; fences held elsewhere stay
 * valid objects. The id may be registered again (a new fence context).
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable memory.
 * - EINVAL: unknown @flags.
 * - EPERM: the caller is not the process that opened the context.
 * - ENOENT: @event_id is not registered with this context.
 */
#define KFDSYNC_IOCTL_EVENT_UNREGISTER \
	_IOW(KFDSYNC_IOCTL_BASE, 0x02, struct kfdsync_event_unregister)

/**
 * struct kfdsync_event_query - argument of KFDSYNC_IOCTL_EVENT_QUERY
 * @event_id:	In: a registered event id.
 * @flags:	In: must be 0.
 * @age:	Out: signals seen since the registration.
 * @error:	Out: 0, or the sticky error (-errno) the event ended with.
 * @pending:	Out: unsignalled fences of the event.
 * @source:	Out: KFDSYNC_SOURCE_* that counts the event's signals.
 * @last_status: Out: how the event's last fence ended: 1 signalled, a
 *		-errno (for example -ETIMEDOUT: its watchdog), 0 if none ended
 *		yet. An eventfd export does not tell success from error: this
 *		does, for the last one. (Called pad, and always 0, in ABI 1's
 *		first modules.)
 */
struct kfdsync_event_query {
	__u32 event_id;
	__u32 flags;
	__u64 age;
	__s32 error;
	__u32 pending;
	__u32 source;
	__s32 last_status;
};

/**
 * DOC: KFDSYNC_IOCTL_EVENT_QUERY - an event's age and state
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable and writable memory.
 * - EINVAL: unknown @flags.
 * - EPERM: the caller is not the process that opened the context.
 * - ENOENT: @event_id is not registered with this context.
 */
#define KFDSYNC_IOCTL_EVENT_QUERY \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x03, struct kfdsync_event_query)

/**
 * struct kfdsync_export - argument of KFDSYNC_IOCTL_EXPORT_SYNC_FILE and
 *			   KFDSYNC_IOCTL_EXPORT_EVENTFD
 * @event_id:	In: a registered event id.
 * @flags:	In: must be 0.
 * @age:	In: the fence signals at the first signal after this age; at
 *		most the current age.
 * @deadline_ns: In: absolute CLOCK_MONOTONIC time at which the watchdog
 *		ends the fence with -ETIMEDOUT; 0 for now + watchdog_ms. A
 *		later deadline is capped at now + watchdog_max_ms (not an
 *		error); an earlier one is honoured.
 * @fd:		KFDSYNC_IOCTL_EXPORT_SYNC_FILE: out, a new sync_file fd
 *		(O_CLOEXEC) that the caller owns and closes.
 *		KFDSYNC_IOCTL_EXPORT_EVENTFD: in, an eventfd of the caller;
 *		kfdsync adds 1 to it when the fence ends (signal or error)
 *		and holds its own reference to it until then.
 * @pad:	In: must be 0.
 */
struct kfdsync_export {
	__u32 event_id;
	__u32 flags;
	__u64 age;
	__u64 deadline_ns;
	__s32 fd;
	__u32 pad;
};

/**
 * DOC: KFDSYNC_IOCTL_EXPORT_SYNC_FILE - the next signal as a sync_file
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable and writable memory.
 * - EINVAL: unknown @flags, non-zero @pad, @age greater than the event's
 *   age.
 * - EPERM: the caller is not the process that opened the context.
 * - ENOENT: @event_id is not registered with this context.
 * - ENOSPC: the context has max_fences unsignalled fences, or the user
 *   max_user_fences.
 * - EMFILE: the caller has no free file descriptor.
 * - ENOMEM: out of memory.
 */
#define KFDSYNC_IOCTL_EXPORT_SYNC_FILE \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x04, struct kfdsync_export)

/**
 * DOC: KFDSYNC_IOCTL_EXPORT_EVENTFD - the next signal as an eventfd wake-up
 *
 * The same fence as KFDSYNC_IOCTL_EXPORT_SYNC_FILE, kept inside kfdsync:
 * when it ends, the eventfd &kfdsync_export.fd is signalled (once; a fence
 * born signalled signals it before the ioctl returns). The eventfd does not
 * tell success from error; &kfdsync_event_query.last_status tells how the
 * event's last fence ended.
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable memory.
 * - EINVAL: unknown @flags, non-zero @pad, @age greater than the event's
 *   age, or &kfdsync_export.fd is not an eventfd.
 * - EBADF: &kfdsync_export.fd is not an open file descriptor.
 * - EPERM: the caller is not the process that opened the context.
 * - ENOENT: @event_id is not registered with this context.
 * - ENOSPC: the context has max_fences unsignalled fences, or the user
 *   max_user_fences.
 * - ENOMEM: out of memory.
 */
#define KFDSYNC_IOCTL_EXPORT_EVENTFD \
	_IOW(KFDSYNC_IOCTL_BASE, 0x05, struct kfdsync_export)

/**
 * struct kfdsync_relay_signal - argument of KFDSYNC_IOCTL_RELAY_SIGNAL
 * @event_id:	In: a registered event id.
 * @flags:	In: must be 0.
 */
struct kfdsync_relay_signal {
	__u32 event_id;
	__u32 flags;
};

/**
 * DOC: KFDSYNC_IOCTL_RELAY_SIGNAL - report a signal of one's own event
 *
 * For an event counted by the relay (&kfdsync_event_query.source is
 * %KFDSYNC_SOURCE_RELAY) the process tells kfdsync that amdkfd signalled
 * @event_id: the age advances by one and fences waiting for it signal. A
 * process vouches only for its own events (the context is bound to it); it
 * can make its own fences signal early, never another process's.
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable memory.
 * - EINVAL: unknown @flags.
 * - EPERM: the caller is not the process that opened the context.
 * - ENOENT: @event_id is not registered with this context.
 * - EBUSY: the event is counted by the hooks; relayed signals are refused.
 */
#define KFDSYNC_IOCTL_RELAY_SIGNAL \
	_IOW(KFDSYNC_IOCTL_BASE, 0x06, struct kfdsync_relay_signal)

/**
 * struct kfdsync_relay_signals - argument of KFDSYNC_IOCTL_RELAY_SIGNALS
 * @event_id:	In: a registered event id.
 * @flags:	In: must be 0.
 * @count:	In: signals amdkfd delivered, 1 to 2^31 - 1.
 * @pad:	In: must be 0.
 */
struct kfdsync_relay_signals {
	__u32 event_id;
	__u32 flags;
	__u32 count;
	__u32 pad;
};

/**
 * DOC: KFDSYNC_IOCTL_RELAY_SIGNALS - report several signals at once
 *
 * KFDSYNC_IOCTL_RELAY_SIGNAL for @count signals: for a relay that learns
 * how many signals amdkfd delivered (the event age of amdkfd's
 * AMDKFD_IOC_WAIT_EVENTS, KFD ioctl 1.14 and later), not only that some
 * did.
 *
 * Return: 0, or -1 with errno as for KFDSYNC_IOCTL_RELAY_SIGNAL, and
 * EINVAL for a @count of 0 or above 2^31 - 1, or non-zero @pad.
 */
#define KFDSYNC_IOCTL_RELAY_SIGNALS \
	_IOW(KFDSYNC_IOCTL_BASE, 0x0a, struct kfdsync_relay_signals)

/**
 * DOC: imports
 *
 * KFDSYNC_IOCTL_IMPORT_SYNC_FILE is the other direction: when a fence from
 * anywhere (a display's out-fence, another GPU, a kfdsync timeline) ends,
 * kfdsync acts on the caller's behalf, in this order:
 *
 * 1. %KFDSYNC_IMPORT_FAIL_EVENT, only if the fence ended with an error:
 *    the context's registered event &kfdsync_import.fail_event_id takes the
 *    fence's error as its sticky error, so its exported fences end with it
 *    (see "events"). Done before anything below can let work run, so the
 *    error reaches the consumers of that event, never a success.
 * 2. %KFDSYNC_IMPORT_MEMORY: a value is written to &kfdsync_import.addr in
 *    the caller's memory, as a GPU queue waiting with WAIT_REG_MEM (or an
 *    HSA signal waiter) expects: &kfdsync_import.value if the fence
 *    signalled, &kfdsync_import.error_value if it ended with an error. The
 *    page is pinned at import (pin_user_pages(FOLL_WRITE | FOLL_LONGTERM),
 *    its folio charged to the user's RLIMIT_MEMLOCK, see "limits") and
 *    released afterwards; the write is a single aligned 64-bit store, or
 *    32-bit with %KFDSYNC_IMPORT_MEMORY32, made atomically. With
 *    %KFDSYNC_IMPORT_SUB the value is atomically subtracted instead of
 *    stored (an HSA completion signal counts down).
 * 3. %KFDSYNC_IMPORT_SET_EVENT: amdkfd event &kfdsync_import.event_id of the
 *    caller's process is set, as AMDKFD_IOC_SET_EVENT would, so threads in
 *    hsaKmtWaitOnEvent() wake. Set on success and on error alike: a waiter
 *    that must tell them apart imports to memory as well. This is done in
 *    the kernel, by calling amdkfd's kfd_set_event(), only where kfdsync's
 *    hooks are attached (KFDSYNC_SOURCE_HOOKS); otherwise the ioctl fails
 *    with EOPNOTSUPP and the caller sets the event itself when the fence
 *    ends (libkfdsync does so with a relay thread, see below).
 * 4. %KFDSYNC_IMPORT_EVENTFD: 1 is added to the eventfd
 *    &kfdsync_import.eventfd, after the actions above are done: the
 *    completion notice a userspace relay needs to set an event in the right
 *    order (after the memory write), or a poll(2)-able "import done".
 *
 * The memory write is made as the fence signals (in its signalling
 * context), except when FAIL_EVENT must pass an error on first; the other
 * actions run in a kernel worker shortly after. An import is done exactly
 * once. Closing the context cancels every import whose fence has not ended:
 * nothing is written or set, the pins are released; it waits for the
 * context's own imports in progress, never for other contexts'. An import
 * holds a reference to the fence until then; the sync_file fd itself may
 * be closed at once.
 */
#define KFDSYNC_IMPORT_MEMORY		0x01U
#define KFDSYNC_IMPORT_MEMORY32		0x02U
#define KFDSYNC_IMPORT_SUB		0x04U
#define KFDSYNC_IMPORT_SET_EVENT	0x08U
#define KFDSYNC_IMPORT_FAIL_EVENT	0x10U
#define KFDSYNC_IMPORT_EVENTFD		0x20U

/**
 * struct kfdsync_import - argument of KFDSYNC_IOCTL_IMPORT_SYNC_FILE
 * @fd:		In: a sync_file; borrowed (kfdsync takes its own reference
 *		to the fence).
 * @flags:	In: KFDSYNC_IMPORT_* bits; at least one of MEMORY, SET_EVENT,
 *		FAIL_EVENT and EVENTFD. MEMORY32 and SUB need MEMORY.
 * @addr:	In, MEMORY: address in the caller's own writable memory,
 *		8-byte aligned (4 with MEMORY32). Anonymous memory (private
 *		or shared) and shmem (memfd, POSIX and SysV shared memory,
 *		tmpfs) only: not a shared mapping of another file (its page
 *		would be written behind its filesystem), not a device (VM_IO
 *		or VM_PFNMAP) mapping. A private mapping of a file gets the
 *		process's own copy of the page at import. Must be 0 without
 *		MEMORY.
 * @value:	In, MEMORY: written (subtracted, with SUB) when the fence
 *		signals. Must fit in 32 bits with MEMORY32; 0 without MEMORY.
 * @error_value: In, MEMORY: written (subtracted) instead when the fence
 *		ends with an error. Same rules as @value.
 * @event_id:	In, SET_EVENT: amdkfd event id of the caller's process, 1 to
 *		%KFDSYNC_EVENT_ID_LIMIT - 1; 0 without SET_EVENT. An id that
 *		amdkfd does not know (or that cannot be set from the CPU) is
 *		not detected at import; setting it then fails silently.
 * @fail_event_id: In, FAIL_EVENT: an event registered with this context;
 *		0 without FAIL_EVENT.
 * @eventfd:	In, EVENTFD: an eventfd of the caller, signalled once when
 *		the import is done (kfdsync holds its own reference until
 *		then; it is not signalled for a cancelled import); 0 without
 *		EVENTFD.
 * @pad:	In: must be 0.
 */
struct kfdsync_import {
	__s32 fd;
	__u32 flags;
	__u64 addr;
	__u64 value;
	__u64 error_value;
	__u32 event_id;
	__u32 fail_event_id;
	__s32 eventfd;
	__u32 pad;
};

/**
 * DOC: KFDSYNC_IOCTL_IMPORT_SYNC_FILE - act when a fence ends
 *
 * See "imports". A context has at most max_imports (module parameter)
 * imports whose fence has not ended yet. A fence that has already ended is
 * acted on at once (still from the worker: the ioctl may return first).
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable memory; or, with MEMORY, @addr is
 *   not mapped, not writable, or not anonymous or shmem memory of the
 *   caller.
 * - EBADF: @fd is not an open file descriptor.
 * - EBADF: &kfdsync_import.eventfd is not an open file descriptor.
 * - EINVAL: @fd is not a sync_file; &kfdsync_import.eventfd is not an
 *   eventfd; unknown or inconsistent @flags; a field set that its flag does
 *   not use; non-zero @pad; @addr misaligned; @value or @error_value wider
 *   than 32 bits with MEMORY32; @event_id out of range.
 * - ENOENT: FAIL_EVENT's @fail_event_id is not registered with this context.
 * - EOPNOTSUPP: SET_EVENT while the hooks are not the source (relay mode):
 *   kfdsync cannot set amdkfd events itself.
 * - ESRCH: SET_EVENT, but the caller has no amdkfd process (never opened
 *   /dev/kfd, or already released it).
 * - EPERM: the caller is not the process that opened the context, or the
 *   context's address space went away.
 * - ENOSPC: the context has max_imports imports pending, or the user
 *   max_user_imports.
 * - ENOMEM: out of memory, or, with MEMORY, the folio of the page would
 *   exceed the user's RLIMIT_MEMLOCK (see "limits").
 */
#define KFDSYNC_IOCTL_IMPORT_SYNC_FILE \
	_IOW(KFDSYNC_IOCTL_BASE, 0x07, struct kfdsync_import)

/**
 * DOC: conditions
 *
 * KFDSYNC_IOCTL_EXPORT_CONDITION exports "a 64-bit value in the caller's
 * memory satisfies a condition" as a fence: the shape of an HSA signal
 * (ROCr's hsa_signal_t, an amd_signal_t whose value is paired with a KFD
 * event whose slot is the signal's mailbox). The registered event
 * &kfdsync_export_condition.event_id is only the wake-up hint; the value is
 * the truth. kfdsync pins the value's page at export
 * (pin_user_pages(FOLL_WRITE | FOLL_LONGTERM), so that it is the page the
 * process itself writes, also for a page never written yet; charged to
 * the user's RLIMIT_MEMLOCK) and reads the value through a kernel mapping: at
 * export (a condition that already holds gives a fence born
 * signalled) and at every signal of the event (every advance of its age,
 * see "events"), until the fence ends. The pin is released when the fence
 * ends. Whoever changes the value must signal the event afterwards, as a
 * GPU completion signal does (ROCr 5.2's hsa_signal_store_*() and
 * hsa_signal_subtract_*() do so only while a thread waits on the signal in
 * ROCr); a change without a signal is noticed at the next signal, and a
 * value that satisfies the condition only between two signals is missed.
 *
 * The value is a signed 64-bit integer (hsa_signal_value_t), compared with
 * &kfdsync_export_condition.compare_value by one of (the values of ROCr's
 * hsa_signal_condition_t):
 *
 * KFDSYNC_CONDITION_EQ:	value == compare_value
 * KFDSYNC_CONDITION_NE:	value != compare_value
 * KFDSYNC_CONDITION_LT:	value < compare_value
 * KFDSYNC_CONDITION_GTE:	value >= compare_value
 *
 * Each such fence is its own fence context (seqno 1): fences of different
 * conditions are unordered. The timeline name is the event's. A condition
 * fence ends like every exported fence: signalled, or with -ETIMEDOUT (its
 * watchdog), or with the event's sticky errors (see "events"), and counts
 * against max_fences while unsignalled.
 *
 * Flags of &kfdsync_export_condition.flags:
 *
 * KFDSYNC_CONDITION_EVENTFD:
 *	&kfdsync_export_condition.fd is an eventfd of the caller (in), signalled
 *	once when the fence ends, as KFDSYNC_IOCTL_EXPORT_EVENTFD does; without
 *	it a new sync_file is returned in it (out).
 */
#define KFDSYNC_CONDITION_EQ		0U
#define KFDSYNC_CONDITION_NE		1U
#define KFDSYNC_CONDITION_LT		2U
#define KFDSYNC_CONDITION_GTE		3U

#define KFDSYNC_CONDITION_EVENTFD	0x01U

/**
 * struct kfdsync_export_condition - argument of KFDSYNC_IOCTL_EXPORT_CONDITION
 * @event_id:	In: a registered event id: the hint (for an HSA signal,
 *		amd_signal_t.event_id).
 * @flags:	In: KFDSYNC_CONDITION_EVENTFD or 0.
 * @value_addr:	In: address of the 64-bit value in the caller's own memory,
 *		8-byte aligned (for an HSA signal, the address of
 *		amd_signal_t.value, i.e. the signal's handle + 8). Writable
 *		anonymous or shmem memory only, as &kfdsync_import.addr.
 * @compare_value: In: the value the condition compares with.
 * @deadline_ns: In: as &kfdsync_export.deadline_ns.
 * @condition:	In: KFDSYNC_CONDITION_EQ, _NE, _LT or _GTE.
 * @fd:		Without KFDSYNC_CONDITION_EVENTFD: out, a new sync_file fd
 *		(O_CLOEXEC) that the caller owns and closes. With it: in, an
 *		eventfd of the caller.
 */
struct kfdsync_export_condition {
	__u32 event_id;
	__u32 flags;
	__u64 value_addr;
	__s64 compare_value;
	__u64 deadline_ns;
	__u32 condition;
	__s32 fd;
};

/**
 * DOC: KFDSYNC_IOCTL_EXPORT_CONDITION - "value satisfies condition" as a fence
 *
 * See "conditions".
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable and writable memory; or
 *   @value_addr is not mapped writable anonymous or shmem memory of the
 *   caller.
 * - EINVAL: unknown @flags; @condition not one of KFDSYNC_CONDITION_*;
 *   @value_addr not 8-byte aligned; with KFDSYNC_CONDITION_EVENTFD,
 *   &kfdsync_export_condition.fd is not an eventfd.
 * - EBADF: with KFDSYNC_CONDITION_EVENTFD, &kfdsync_export_condition.fd is
 *   not an open file descriptor.
 * - EPERM: the caller is not the process that opened the context.
 * - ENOENT: @event_id is not registered with this context.
 * - ENOSPC: the context has max_fences unsignalled fences, or the user
 *   max_user_fences.
 * - EMFILE: the caller has no free file descriptor.
 * - ENOMEM: out of memory, or the folio of the page would exceed the
 *   user's RLIMIT_MEMLOCK (see "limits").
 */
#define KFDSYNC_IOCTL_EXPORT_CONDITION \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x08, struct kfdsync_export_condition)

/**
 * DOC: relay reasons
 *
 * Why the hooks are not the source, in &kfdsync_status.relay_reason
 * (0 while they are):
 *
 * KFDSYNC_RELAY_FORCED:	the module parameter hooks=N.
 * KFDSYNC_RELAY_NO_AMDGPU:	amdgpu.ko is not loaded.
 * KFDSYNC_RELAY_UNVERIFIED:	the loaded amdgpu.ko's BTF matches no
 *				amdkfd ABI kfdsync implements (or
 *				assume_unverified=Y).
 * KFDSYNC_RELAY_MISSING:	an amdkfd function kfdsync calls or probes
 *				was not found, or a hook did not attach.
 * KFDSYNC_RELAY_NOT_FTRACE:	a hook would not be ftrace-based (its
 *				handler would run in NMI-like context).
 * KFDSYNC_RELAY_NO_BTF:	amdgpu.ko has no BTF kfdsync can read, or it
 *				does not parse.
 * KFDSYNC_RELAY_INLINED:	a function kfdsync probes is also compiled
 *				elsewhere (a .part/.isra/.constprop/.cold
 *				clone, or a second function of its name), or
 *				a call kfdsync relies on does not reach it:
 *				some signals would pass unseen.
 * KFDSYNC_RELAY_KPROBES_OFF:	kprobes are disabled system-wide
 *				(/sys/kernel/debug/kprobes/enabled).
 *
 * KFDSYNC_IOCTL_AMDKFD_ABI has the gate's whole verdict.
 */
#define KFDSYNC_RELAY_FORCED		1U
#define KFDSYNC_RELAY_NO_AMDGPU		2U
#define KFDSYNC_RELAY_UNVERIFIED	3U
#define KFDSYNC_RELAY_MISSING		4U
#define KFDSYNC_RELAY_NOT_FTRACE	5U
#define KFDSYNC_RELAY_NO_BTF		6U
#define KFDSYNC_RELAY_INLINED		7U
#define KFDSYNC_RELAY_KPROBES_OFF	8U

/* Size of &kfdsync_status's strings, NUL included. */
#define KFDSYNC_STATUS_TEXT_LEN		64

/**
 * struct kfdsync_status - the module's source of signals and the caller's
 *			   usage, argument of KFDSYNC_IOCTL_STATUS
 * @flags:		In: must be 0.
 * @pad:		In: must be 0.
 * @source:		Out: KFDSYNC_SOURCE_* an event registered now gets.
 * @relay_reason:	Out: KFDSYNC_RELAY_*, 0 with the hooks.
 * @hooks:		Out: KFDSYNC_HOOK_* attached.
 * @watch:		Out: KFDSYNC_STATUS_WATCH_* bits for the calling
 *			process. (Called pad2, and always 0, in ABI 1's first
 *			modules.)
 * @hooks_missed:	Out: hook hits the kernel's kprobe core missed since
 *			kfdsync was loaded (recursion): each may be a signal
 *			that was not counted (its fence then ends by its
 *			watchdog). 0 in normal operation.
 * @user_contexts:	Out: open contexts of the caller's user.
 * @user_timelines:	Out: open CPU timelines of the caller's user.
 * @user_events:	Out: registered events of the caller's user.
 * @user_fences:	Out: pending fences of the caller's user.
 * @max_user_contexts:	Out: the per-user limits (module parameters).
 * @max_user_timelines:	Out: see above.
 * @max_user_events:	Out: see above.
 * @max_user_fences:	Out: see above.
 * @max_contexts:	Out: open contexts, system-wide.
 * @max_timelines:	Out: open CPU timelines, system-wide.
 * @detail:		Out: why relay mode, in words ("" with the hooks),
 *			cut to fit (KFDSYNC_IOCTL_AMDKFD_ABI has it whole).
 * @verified:		Out: the amdkfd ABIs this module implements, by
 *			name, space-separated (as
 *			&kfdsync_amdkfd_abi.implemented).
 */
struct kfdsync_status {
	__u32 flags;
	__u32 pad;
	__u32 source;
	__u32 relay_reason;
	__u32 hooks;
	__u32 watch;
	__u64 hooks_missed;
	__u32 user_contexts;
	__u32 user_timelines;
	__u32 user_events;
	__u32 user_fences;
	__u32 max_user_contexts;
	__u32 max_user_timelines;
	__u32 max_user_events;
	__u32 max_user_fences;
	__u32 max_contexts;
	__u32 max_timelines;
	char detail[KFDSYNC_STATUS_TEXT_LEN];
	char verified[KFDSYNC_STATUS_TEXT_LEN];
};

/**
 * DOC: status watch bits
 *
 * Bits of &kfdsync_status.watch:
 *
 * KFDSYNC_STATUS_WATCH_SLOTS:
 *	The hooks are attached and amdkfd holds a signal page for the calling
 *	process (the page it makes with the process's first signal event, or
 *	the GPU buffer libhsakmt gives it on a discrete GPU): the process's
 *	signal events are counted by the hooks when registered. Clear
 *	otherwise; an event registered then is counted by the owner's relay
 *	(see "sources" and the REGISTER reply).
 */
#define KFDSYNC_STATUS_WATCH_SLOTS	0x1U

/**
 * DOC: KFDSYNC_IOCTL_STATUS - where signals come from, what the user holds
 *
 * Any process that can open /dev/kfdsync may call it.
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable and writable memory.
 * - EINVAL: &kfdsync_status.flags or &kfdsync_status.pad is not zero.
 */
#define KFDSYNC_IOCTL_STATUS \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x09, struct kfdsync_status)

/**
 * DOC: amdkfd ABI verdicts
 *
 * kfdsync calls amdkfd functions and reads the arguments of the functions
 * it probes, so it attaches its hooks only to an amdgpu.ko whose amdkfd has
 * exactly one of the ABIs kfdsync implements: the prototype of every
 * function it calls or probes (argument count; each argument's and the
 * return value's kind and size; the names of the structures pointed to)
 * and the structure facts it relies on, as the loaded module's own BTF
 * states them (/sys/kernel/btf/amdgpu over /sys/kernel/btf/vmlinux, read
 * by the kernel from the init namespace's sysfs when amdgpu becomes live;
 * only root can change what is there). The kernel's release does not
 * matter: an out-of-tree amdgpu (ROCm's amdgpu-dkms) is judged by its BTF
 * like Debian's own. An ABI is named after the first kernel kfdsync was
 * tested on with it ("6.1", "6.12").
 *
 * Values of &kfdsync_amdkfd_abi.verdict:
 *
 * KFDSYNC_AMDKFD_ABI_UNCHECKED:
 *	Nothing was checked: amdgpu.ko is not loaded, or hooks=N.
 * KFDSYNC_AMDKFD_ABI_MATCH:
 *	The BTF matches ABI &kfdsync_amdkfd_abi.abi exactly. The hooks attach
 *	unless something else stops them (&kfdsync_status.relay_reason).
 * KFDSYNC_AMDKFD_ABI_MISMATCH:
 *	It matches no ABI kfdsync implements: relay mode. @abi names the
 *	closest one, @reason the first difference from it, e.g.
 *	"kfd_lookup_process_by_pasid takes 2 arguments, ABI 6.12 has 1".
 * KFDSYNC_AMDKFD_ABI_NO_BTF:
 *	amdgpu.ko has no BTF kfdsync could read (a kernel without
 *	CONFIG_DEBUG_INFO_BTF_MODULES, a module built without it), or it does
 *	not parse: relay mode; @reason says which.
 */
#define KFDSYNC_AMDKFD_ABI_UNCHECKED	0U
#define KFDSYNC_AMDKFD_ABI_MATCH	1U
#define KFDSYNC_AMDKFD_ABI_MISMATCH	2U
#define KFDSYNC_AMDKFD_ABI_NO_BTF	3U

/* Sizes of &kfdsync_amdkfd_abi's strings, NUL included. */
#define KFDSYNC_AMDKFD_ABI_NAME_LEN	16
#define KFDSYNC_AMDKFD_ABI_LIST_LEN	64
#define KFDSYNC_AMDKFD_ABI_REASON_LEN	192

/**
 * struct kfdsync_amdkfd_abi - the gate's verdict on the loaded amdgpu,
 *			       argument of KFDSYNC_IOCTL_AMDKFD_ABI
 * @flags:		In: must be 0.
 * @pad:		In: must be 0.
 * @verdict:		Out: KFDSYNC_AMDKFD_ABI_*.
 * @pad2:		Out: 0.
 * @abi:		Out: the ABI matched (MATCH) or the closest one
 *			(MISMATCH); "" otherwise.
 * @implemented:	Out: the ABIs this module implements, space-separated.
 * @reason:		Out: MISMATCH: the first difference; NO_BTF: what
 *			is wrong; UNCHECKED: why nothing was checked; ""
 *			for MATCH.
 */
struct kfdsync_amdkfd_abi {
	__u32 flags;
	__u32 pad;
	__u32 verdict;
	__u32 pad2;
	char abi[KFDSYNC_AMDKFD_ABI_NAME_LEN];
	char implemented[KFDSYNC_AMDKFD_ABI_LIST_LEN];
	char reason[KFDSYNC_AMDKFD_ABI_REASON_LEN];
};

/**
 * DOC: KFDSYNC_IOCTL_AMDKFD_ABI - the gate's verdict on the loaded amdgpu
 *
 * Any process that can open /dev/kfdsync may call it. The verdict is made
 * once per load of amdgpu.ko (and when kfdsync loads after it).
 *
 * Return: 0, or -1 with errno:
 *
 * - EFAULT: the argument is not readable and writable memory.
 * - EINVAL: &kfdsync_amdkfd_abi.flags or &kfdsync_amdkfd_abi.pad is not
 *   zero.
 */
#define KFDSYNC_IOCTL_AMDKFD_ABI \
	_IOWR(KFDSYNC_IOCTL_BASE, 0x0b, struct kfdsync_amdkfd_abi)

#endif /* _UAPI_LINUX_KFDSYNC_H */
