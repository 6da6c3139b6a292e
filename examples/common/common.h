/* SPDX-License-Identifier: MIT */
/*
 * What the example programs share: their messages, the clock, numbers on
 * the command line, a sync_file's state and a KFD signal event registered
 * with kfdsync. examples/common is a static
 * library linked into each example and never installed (as sim/lib).
 */
#ifndef KFDSYNC_EXAMPLES_COMMON_H
#define KFDSYNC_EXAMPLES_COMMON_H

#include <stdint.h>

#include <hsakmt.h>

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

/*
 * A KFD signal event (the one a compute job's RELEASE_MEM signals),
 * registered with @ctx so that kfdsync can export it. Returns 0, or -errno
 * after an err(). *@event is the caller's (hsaKmtDestroyEvent()) whenever
 * it is not NULL, also after a failed registration.
 */
int kfd_signal_event_new(struct kfdsync_ctx *ctx, HsaEvent **event);

#endif /* KFDSYNC_EXAMPLES_COMMON_H */
