/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * kfdsim: a simulated GPU for kfdsync's tests (test-only, never installed).
 *
 * /dev/kfdsim gives a process simulated compute queues that execute PM4
 * type-3 packets from a kernel thread, in the process's address space, and
 * signal amdkfd events through amdkfd's own interrupt path. See
 * sim/kmod/kfdsim.c ("DOC: Overview") for the model.
 *
 * Conventions as in kfdsync's uAPI: fixed-size __u32/__u64 fields, no enums
 * or bitfields, explicit @flags (unknown bits are rejected with -EINVAL) and
 * padding (must be zero), structs sized to a multiple of 8 bytes.
 *
 * Positions: a queue counts the dwords ever submitted to it. A submit
 * returns the position just past its last dword; a packet is complete when
 * &kfdsim_queue_status.completed reaches the position just past it.
 */

#ifndef _UAPI_KFDSIM_H
#define _UAPI_KFDSIM_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * DOC: ABI version
 *
 * Reported by &KFDSIM_IOC_INFO; bumped for incompatible changes only.
 */
#define KFDSIM_ABI_VERSION		1

/**
 * DOC: ioctl numbers
 *
 * kfdsim uses the ioctl type 0xB8, numbers 0x00 - 0x3F. 0xB8 has no entry in
 * the 6.1 kernel's Documentation/userspace-api/ioctl/ioctl-number.rst.
 */
#define KFDSIM_IOC_BASE		0xB8

/**
 * DOC: simulator-only packets
 *
 * Commands that real hardware does not have are encoded as PM4 NOP packets
 * whose body starts with %KFDSIM_NOP_MAGIC, so that a command stream stays
 * valid PM4 (a real CP skips NOPs). A NOP without the magic is a plain NOP.
 *
 * Body dword 0 is the magic, dword 1 the command, then its arguments:
 *
 * KFDSIM_CMD_DELAY:
 *	"work that takes N microseconds": dword 2 = N (at most
 *	%KFDSIM_DELAY_MAX_US). Body of 3 dwords.
 * KFDSIM_CMD_HANG:
 *	The queue hangs here: it stops executing and never signals, the
 *	way a GPU queue stuck in a shader does (state %KFDSIM_QUEUE_HUNG).
 *	Body of 2 dwords.
 * KFDSIM_CMD_HW_EXCEPTION:
 *	Raise a hardware exception for the owner (amdkfd's
 *	kfd_signal_hw_exception_event()); the queue stops with -EIO.
 *	Body of 2 dwords.
 */
#define KFDSIM_NOP_MAGIC		0x4d49534bU	/* "KSIM" */
#define KFDSIM_CMD_DELAY		1
#define KFDSIM_CMD_HANG			2
#define KFDSIM_CMD_HW_EXCEPTION		3
#define KFDSIM_DELAY_MAX_US		60000000U

/**
 * DOC: queue states and errors
 *
 * &kfdsim_queue_status.state is one of:
 *
 * KFDSIM_QUEUE_RUNNING:
 *	Executing, or idle when &kfdsim_queue_status.completed equals
 *	&kfdsim_queue_status.submitted.
 * KFDSIM_QUEUE_ERROR:
 *	Stopped for good at &kfdsim_queue_status.error_pos;
 *	&kfdsim_queue_status.error says why (a negative errno):
 *
 *	- -EINVAL: malformed packet (not type 3, wrong size for its opcode,
 *	  invalid field value, misaligned address, unknown simulator command,
 *	  packet larger than the ring);
 *	- -EOPNOTSUPP: an opcode or mode the simulator does not implement
 *	  (registers, GDS, indirect buffers, predication, ...);
 *	- -EFAULT: an address the owner has not mapped (or not writable);
 *	- -ESRCH: the owner's address space is gone (the owner exited);
 *	- -EIO: a hardware exception was raised on the queue;
 *	- -ENODEV: amdkfd (amdgpu.ko) is not there to take the interrupt.
 * KFDSIM_QUEUE_HUNG:
 *	Stopped for good without an error, never signals again.
 */
#define KFDSIM_QUEUE_RUNNING		0
#define KFDSIM_QUEUE_ERROR		1
#define KFDSIM_QUEUE_HUNG		2

/**
 * struct kfdsim_info - what the simulator is and how busy it is
 * @flags:		In: must be 0.
 * @pad:		In: must be 0.
 * @abi_version:	Out: %KFDSIM_ABI_VERSION.
 * @live_queues:	Out: queues that exist right now, system-wide (a test
 *			checks it for leaks).
 * @max_queues:		Out: limit of queues per open file (module parameter
 *			max_queues).
 * @poll_us:		Out: WAIT_REG_MEM re-reads memory at least this often
 *			(module parameter poll_us), and at once whenever any
 *			simulated queue writes memory.
 * @amdkfd_bound:	Out: 1 if amdkfd's functions are resolved right now.
 * @pad2:		Out: 0.
 */
struct kfdsim_info {
	__u32 flags;
	__u32 pad;
	__u32 abi_version;
	__u32 live_queues;
	__u32 max_queues;
	__u32 poll_us;
	__u32 amdkfd_bound;
	__u32 pad2;
};

/**
 * struct kfdsim_queue_create - create a queue owned by the caller
 * @flags:		In: must be 0.
 * @ring_dwords:	In: ring size in dwords, a power of two from 1024 to
 *			65536, or 0 for 4096. No packet may be larger.
 * @queue_id:		Out: id of the queue within this open file.
 * @pasid:		Out: the owner's amdkfd pasid, which RELEASE_MEM
 *			interrupts and exceptions are raised for.
 */
struct kfdsim_queue_create {
	__u32 flags;
	__u32 ring_dwords;
	__u32 queue_id;
	__u32 pasid;
};

/**
 * struct kfdsim_queue_destroy - stop a queue and free it
 * @queue_id:	In: the queue.
 * @flags:	In: must be 0.
 */
struct kfdsim_queue_destroy {
	__u32 queue_id;
	__u32 flags;
};

/* Fail with -EAGAIN instead of waiting for ring space. */
#define KFDSIM_SUBMIT_NONBLOCK		0x1U

/**
 * struct kfdsim_submit - append dwords to a queue's ring
 * @queue_id:		In: the queue.
 * @flags:		In: KFDSIM_SUBMIT_* bits.
 * @dwords:		In: pointer to @count_dwords __u32s (PM4 packets).
 * @count_dwords:	In: 1 to the ring size; all are appended or none.
 * @pad:		In: must be 0.
 * @end_pos:		Out: position just past the last dword submitted.
 *
 * The dwords are copied into the kernel; the queue parses them as it
 * executes, like a CP reading its ring, so a packet may span submits.
 */
struct kfdsim_submit {
	__u32 queue_id;
	__u32 flags;
	__u64 dwords;
	__u32 count_dwords;
	__u32 pad;
	__u64 end_pos;
};

/**
 * struct kfdsim_queue_status - a queue's completion record
 * @queue_id:		In: the queue.
 * @flags:		In: must be 0.
 * @state:		Out: KFDSIM_QUEUE_*.
 * @error:		Out: 0, or a negative errno when @state is
 *			%KFDSIM_QUEUE_ERROR.
 * @submitted:		Out: position just past the last dword submitted.
 * @completed:		Out: position just past the last packet completed.
 *			A RELEASE_MEM is complete (its data written) before
 *			its interrupt is raised.
 * @packets:		Out: packets completed.
 * @interrupts:		Out: interrupts raised (RELEASE_MEM with INT_SEL).
 * @exec_pos:		Out: position of the packet being executed, valid
 *			when @exec_header is not 0.
 * @exec_header:	Out: header of the packet being executed (e.g. a
 *			WAIT_REG_MEM that is polling), 0 when none.
 * @error_header:	Out: header of the packet that failed.
 * @error_pos:		Out: position of the packet that failed.
 * @last_complete_ns:	Out: CLOCK_MONOTONIC time of the last completion.
 * @last_irq_ns:	Out: CLOCK_MONOTONIC time just before the last
 *			interrupt was raised.
 * @last_irq_pos:	Out: position just past the packet that raised it.
 */
struct kfdsim_queue_status {
	__u32 queue_id;
	__u32 flags;
	__u32 state;
	__s32 error;
	__u64 submitted;
	__u64 completed;
	__u64 packets;
	__u64 interrupts;
	__u64 exec_pos;
	__u32 exec_header;
	__u32 error_header;
	__u64 error_pos;
	__u64 last_complete_ns;
	__u64 last_irq_ns;
	__u64 last_irq_pos;
};

/**
 * struct kfdsim_queue_wait - wait until a queue completed up to a position
 * @queue_id:	In: the queue.
 * @flags:	In: must be 0.
 * @pos:	In: position to wait for (at most &kfdsim_queue_status.submitted).
 * @timeout_ns:	In: absolute CLOCK_MONOTONIC deadline; a past deadline
 *		checks once.
 */
struct kfdsim_queue_wait {
	__u32 queue_id;
	__u32 flags;
	__u64 pos;
	__s64 timeout_ns;
};

/* Raise a hardware exception for the owner; the queue stops with -EIO. */
#define KFDSIM_INJECT_HW_EXCEPTION	0x1U
/* Hang the queue: it stops executing and never signals. */
#define KFDSIM_INJECT_HANG		0x2U

/**
 * struct kfdsim_inject - inject a fault into a queue
 * @queue_id:	In: the queue.
 * @flags:	In: exactly one KFDSIM_INJECT_* bit.
 */
struct kfdsim_inject {
	__u32 queue_id;
	__u32 flags;
};

/**
 * DOC: ioctls
 *
 * Every ioctl returns 0 on success or -1 with errno set. Common errors:
 * EFAULT (argument not readable/writable), EINVAL (non-zero pad or unknown
 * flags), EBADF (caller is not the process that opened the file: a queue
 * executes in its owner's address space), ENOENT (no such queue), ENOTTY
 * (not a kfdsim ioctl).
 *
 * KFDSIM_IOC_INFO:
 *	Fill &struct kfdsim_info.
 * KFDSIM_IOC_QUEUE_CREATE:
 *	Create a queue. ESRCH: the caller has no amdkfd process (open
 *	/dev/kfd first) or its pasid is unknown; ENODEV: amdkfd's functions
 *	cannot be resolved; ENOSPC: max_queues reached; ENOMEM.
 * KFDSIM_IOC_QUEUE_DESTROY:
 *	Stop the queue (also in the middle of a packet) and free it.
 * KFDSIM_IOC_SUBMIT:
 *	Append dwords. EIO: the queue is in %KFDSIM_QUEUE_ERROR; EAGAIN: no
 *	ring space and %KFDSIM_SUBMIT_NONBLOCK; EINTR: a signal arrived
 *	while waiting for ring space; EINVAL: @count_dwords is 0 or larger
 *	than the ring.
 * KFDSIM_IOC_QUEUE_STATUS:
 *	Read the completion record.
 * KFDSIM_IOC_QUEUE_WAIT:
 *	Wait for completion of @pos. ETIMEDOUT: the deadline passed; EIO: the
 *	queue stopped with an error before reaching @pos; EINVAL: @pos is past
 *	&kfdsim_queue_status.submitted; EINTR: interrupted (restartable).
 *	A hung queue never completes: the wait times out.
 * KFDSIM_IOC_INJECT:
 *	Inject a fault; returns once it happened. A HW exception is raised by
 *	the queue's thread even on a queue that stopped; ENODEV if amdkfd is
 *	not there to take it. Hang: EIO if the queue already stopped with an
 *	error.
 * KFDSIM_IOC_DEBUG_WARN:
 *	Emit a deliberate kernel WARN (to test that test runners catch one).
 */
#define KFDSIM_IOC_INFO \
	_IOWR(KFDSIM_IOC_BASE, 0x00, struct kfdsim_info)
#define KFDSIM_IOC_QUEUE_CREATE \
	_IOWR(KFDSIM_IOC_BASE, 0x01, struct kfdsim_queue_create)
#define KFDSIM_IOC_QUEUE_DESTROY \
	_IOW(KFDSIM_IOC_BASE, 0x02, struct kfdsim_queue_destroy)
#define KFDSIM_IOC_SUBMIT \
	_IOWR(KFDSIM_IOC_BASE, 0x03, struct kfdsim_submit)
#define KFDSIM_IOC_QUEUE_STATUS \
	_IOWR(KFDSIM_IOC_BASE, 0x04, struct kfdsim_queue_status)
#define KFDSIM_IOC_QUEUE_WAIT \
	_IOW(KFDSIM_IOC_BASE, 0x05, struct kfdsim_queue_wait)
#define KFDSIM_IOC_INJECT \
	_IOW(KFDSIM_IOC_BASE, 0x06, struct kfdsim_inject)
#define KFDSIM_IOC_DEBUG_WARN \
	_IO(KFDSIM_IOC_BASE, 0x3f)

#endif /* _UAPI_KFDSIM_H */
