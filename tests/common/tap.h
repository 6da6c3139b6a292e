/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP (version 13 / KTAP-compatible) producer for kfdsync tests.
 *
 * Every test program prints one plan line and one result line per
 * subtest, so meson (protocol: 'tap') and the guest suite driver can count
 * them.  Conventions (see ../../README.md, "Tests"):
 *
 *   - subtest names are <object>_<action>[_<case>];
 *   - a subtest that cannot run here is reported with tap_skip() and a
 *     reason, never silently passed;
 *   - diagnostics go to stdout prefixed with "# " (tap_diag()).
 *
 * Usage:
 *
 *	tap_plan(3);
 *	tap_ok(fd >= 0, "ctx_open");
 *	tap_skip("needs 6.4+", "fence_deadline");
 *	...
 *	return tap_exit();
 */
#ifndef KFDSYNC_TESTS_TAP_H
#define KFDSYNC_TESTS_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Weak definitions: one count per program however many of its files
 * include this header, so that a program may be built from several test
 * files (harness.h).
 */
__attribute__((weak)) unsigned int tap_count;
__attribute__((weak)) unsigned int tap_failed;
/* The plan printed up front by tap_plan(), 0 if none (harness.h: last). */
__attribute__((weak)) unsigned int tap_planned;

static inline void tap_plan(unsigned int n)
{
	tap_planned = n;
	printf("TAP version 13\n1..%u\n", n);
	fflush(stdout);
}

static inline void tap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Report one subtest; returns @pass so callers can chain on it. */
static inline bool tap_ok(bool pass, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline bool tap_ok(bool pass, const char *fmt, ...)
{
	va_list ap;

	printf("%s %u ", pass ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	if (!pass)
		tap_failed++;
	return pass;
}

static inline void tap_skip(const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	printf("ok %u ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
	fflush(stdout);
}

/* Skip every remaining subtest of the plan with @reason (e.g. no device). */
static inline void tap_skip_rest(unsigned int planned, const char *reason)
{
	while (tap_count < planned)
		tap_skip(reason, "skipped_%u", tap_count + 1);
}

/*
 * Skip the whole program (a plan of 0, status 0) when the environment
 * variable @var gives a reason: the guest runner sets KFDSYNC_KFD_UNUSABLE
 * when /dev/kfd cannot be opened (amdkfd 7.x without a GPU refuses every
 * process), so programs that need amdkfd skip there instead of failing.
 */
static inline void tap_skip_program_if(const char *var)
{
	const char *why = getenv(var);

	if (!why || !*why)
		return;
	printf("TAP version 13\n1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

/*
 * End the program here because the environment variable @var gives a reason
 * why the rest cannot run (e.g. KFDSYNC_SIM_UNUSABLE): the planned subtests
 * not run yet are skipped with it, or, with no plan printed yet, the plan
 * counts what ran (1..0 # SKIP if nothing did). Exit status as tap_exit().
 * Returns if @var is unset or empty. Only from the process that prints the
 * program's TAP, never from a forked child.
 */
static inline void tap_skip_rest_if(const char *var)
{
	const char *why = getenv(var);

	if (!why || !*why)
		return;
	if (tap_planned) {
		tap_skip_rest(tap_planned, why);
	} else if (!tap_count) {
		printf("1..0 # SKIP %s\n", why);
	} else {
		printf("# SKIP the rest: %s\n1..%u\n", why, tap_count);
	}
	fflush(stdout);
	exit(tap_failed ? 1 : 0);
}

/* Abort the whole program: TAP "Bail out!" and exit status 1. */
static inline void tap_bail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static inline void tap_bail(const char *fmt, ...)
{
	va_list ap;

	fputs("Bail out! ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	exit(1);
}

static inline int tap_exit(void)
{
	return tap_failed ? 1 : 0;
}

/*
 * Check an expected errno from a call returning -1/errno (ioctl style):
 *	tap_errno(ioctl(fd, BAD, &a), EINVAL, "info_pad_nonzero");
 */
#define tap_errno(expr, err, ...)					\
	({								\
		int __r = (expr);					\
		int __e = __r < 0 ? errno : 0;				\
		if (__r >= 0 || __e != (err))				\
			tap_diag("got %d (%s), expected -1/%s", __r,	\
				 __r < 0 ? strerror(__e) : "success",	\
				 strerror(err));			\
		tap_ok(__r < 0 && __e == (err), __VA_ARGS__);		\
	})

#endif /* KFDSYNC_TESTS_TAP_H */
