/* SPDX-License-Identifier: MIT */
/*
 * What the example programs share: their messages, the clock, numbers on
 * the command line, a sync_file's state and a KFD signal event registered
 * with kfdsync. examples/common is a static
 * library linked into each example and never installed (as sim/lib).
 */
#ifndef KFDSYNC_EXAMPLES_COMMON_H
#define KFDSYNC_EXAMPLES_COMMON_H

#include <stdbool.h>
#include <stdint.h>

struct kfdsync_ctx;

/* A message on stderr: "PROGRAM: ...\n" (program_invocation_short_name). */
void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in nanoseconds: the clock of fence and RELEASE_MEM timestamps. */
int64_t now_ns(void);

/*
 * @s as a decimal number from @min to @max into *@out. Returns 0, or -1
 * after an err() that names @opt (e.g. "--frames").
 */
int parse_int(const char *opt, const char *s, int min, int max, int *out);

/*
 * The state of the sync_file @fd: 0 pending, 1 signalled, < 0 the error it
 * ended with (or -errno if it cannot be read). *@ts, unless NULL, gets its
 * fence's timestamp (CLOCK_MONOTONIC ns).
 */
int fence_state(int fd, int64_t *ts);

/* The examples' two compute back-ends (compute.h). */
enum gpu_kind {
	GPU_SIM,
	GPU_REAL,
};

/*
 * Open /dev/kfd for the back-end @kind (kfd_event.c: amdkfd's uAPI for the
 * simulator, libhsakmt for a real GPU). 0, or -errno after an err().
 * kfd_close() closes it (after the events are destroyed).
 */
int kfd_open(enum gpu_kind kind);
void kfd_close(void);

/* A KFD signal event of this process. */
struct kfd_event {
	uint32_t id;		/* amdkfd's event id */
	uint64_t slot;		/* its slot: where RELEASE_MEM writes to signal it */
	bool live;		/* created, not destroyed yet */
	void *hsa;		/* --gpu real: libhsakmt's HsaEvent */
};

/*
 * A KFD signal event (the one a compute job's RELEASE_MEM signals),
 * registered with @ctx so that kfdsync can export it. Returns 0, or -errno
 * after an err(). The event is the caller's (kfd_signal_event_destroy(),
 * after kfdsync_event_remove() or kfdsync_ctx_free()) whenever ev->live,
 * also after a failed registration.
 */
int kfd_signal_event_new(struct kfdsync_ctx *ctx, struct kfd_event *ev);
void kfd_signal_event_destroy(struct kfd_event *ev);

#endif /* KFDSYNC_EXAMPLES_COMMON_H */
