/* SPDX-License-Identifier: MIT */
/*
 * kfdsim.h - drive the GPU simulator (/dev/kfdsim) from a test or example.
 *
 * Thin wrappers around the ioctls of kfdsim_uapi.h. Every function returns 0
 * (or a non-negative value) on success and -errno on failure, and retries
 * ioctls interrupted by a signal. A queue is owned by the process that opened
 * the device: call these from that process (a forked child gets -EBADF), after
 * opening /dev/kfd (hsaKmtOpenKFD()), since queues signal the caller's amdkfd
 * events.
 *
 *	int fd = kfdsim_open();			// the caller closes fd
 *	uint32_t q;
 *	kfdsim_queue_create(fd, 0, &q, NULL);
 *	... build packets with pm4.h, kfdsim_submit_buf(fd, q, &b, &end) ...
 *	kfdsim_queue_wait(fd, q, end, 5000);
 *	kfdsim_queue_destroy(fd, q);
 *	close(fd);				// also destroys remaining queues
 */
#ifndef KFDSYNC_TESTS_SIM_KFDSIM_H
#define KFDSYNC_TESTS_SIM_KFDSIM_H

#include <stdint.h>

#include "kfdsim_uapi.h"
#include "pm4.h"

#define KFDSIM_DEVICE "/dev/kfdsim"

/* Open /dev/kfdsim (O_CLOEXEC). Returns the fd, which the caller closes. */
int kfdsim_open(void);

int kfdsim_info(int fd, struct kfdsim_info *info);

/*
 * Create a queue with a ring of @ring_dwords (0: default). *@queue_id gets
 * its id, *@pasid (may be NULL) the owner's amdkfd pasid.
 */
int kfdsim_queue_create(int fd, uint32_t ring_dwords, uint32_t *queue_id, uint32_t *pasid);
int kfdsim_queue_destroy(int fd, uint32_t queue_id);

/*
 * Append @count dwords to the queue; *@end_pos (may be NULL) gets the
 * position just past them, which kfdsim_queue_wait() and
 * kfdsim_queue_status.completed compare against. @flags: KFDSIM_SUBMIT_*.
 */
int kfdsim_submit(int fd, uint32_t queue_id, const uint32_t *dwords, uint32_t count,
		  uint32_t flags, uint64_t *end_pos);
/* Submit a pm4_buf (-ENOSPC if it overflowed; -EINVAL if empty). */
int kfdsim_submit_buf(int fd, uint32_t queue_id, const struct pm4_buf *b, uint64_t *end_pos);

int kfdsim_queue_status(int fd, uint32_t queue_id, struct kfdsim_queue_status *st);

/*
 * Wait until the queue completed up to @pos, at most @timeout_ms (< 0:
 * forever). -ETIMEDOUT, or -EIO if the queue stopped with an error first.
 */
int kfdsim_queue_wait(int fd, uint32_t queue_id, uint64_t pos, int64_t timeout_ms);

/* KFDSIM_INJECT_HW_EXCEPTION or KFDSIM_INJECT_HANG; returns once done. */
int kfdsim_inject(int fd, uint32_t queue_id, uint32_t what);

/* A deliberate kernel WARN (only to test that test runners catch one). */
int kfdsim_debug_warn(int fd);

/* "running", "error", "hung" or "unknown". */
const char *kfdsim_state_name(uint32_t state);

/* CLOCK_MONOTONIC in ns, the clock of kfdsim's timestamps and deadlines. */
int64_t kfdsim_now_ns(void);

#endif /* KFDSYNC_TESTS_SIM_KFDSIM_H */
