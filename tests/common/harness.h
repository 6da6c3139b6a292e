/* SPDX-License-Identifier: MIT */
/*
 * A self-registering test harness over tap.h, in the shape of the kernel's
 * kselftest_harness.h: every TEST() registers itself, runs in definition
 * order, and may report any number of subtests with tap_ok()/tap_skip();
 * the plan is counted, not written by hand, and printed last (TAP allows a
 * trailing plan; a program that dies early has none and fails).
 *
 *	#include "harness.h"
 *
 *	TEST(event_register_bad_slot)
 *	{
 *		tap_errno(ioctl(...), EINVAL, "event_register_bad_slot");
 *	}
 *
 *	int main(int argc, char **argv)
 *	{
 *		return harness_main(argc, argv);
 *	}
 *
 * Command line: no argument runs every test; names run those tests only;
 * --list prints the names.
 *
 * Hooks a program may set in main() before harness_main():
 *   harness_require	before anything is printed: checks that skip the
 *			whole program and print their own TAP header
 *			(require_sim_guest(), tap_skip_program_if());
 *   harness_setup	after the TAP header, before the first test (it may
 *			still give up with harness_skip_program() or
 *			tap_bail());
 *   harness_teardown	after the last test, before the plan: checks of the
 *			whole program (e.g. nothing left pinned).
 *
 * A program may be built from several files: the registry, the hooks and
 * tap.h's counts are weak definitions, one copy per program. Tests run in
 * link order of the files (meson's source order), then definition order.
 */
#ifndef KFDSYNC_TESTS_HARNESS_H
#define KFDSYNC_TESTS_HARNESS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

struct harness_test {
	const char *name;
	void (*fn)(void);
	struct harness_test *next;
};

__attribute__((weak)) struct harness_test *harness_head;
__attribute__((weak)) struct harness_test **harness_tail = &harness_head;
__attribute__((weak)) void (*harness_require)(void);
__attribute__((weak)) void (*harness_setup)(void);
__attribute__((weak)) void (*harness_teardown)(void);

static inline void harness_register(struct harness_test *t)
{
	*harness_tail = t;
	harness_tail = &t->next;
}

#define TEST(tname)							\
	static void test_##tname(void);					\
	static struct harness_test harness_##tname = {			\
		.name = #tname, .fn = test_##tname,			\
	};								\
	__attribute__((constructor)) static void harness_reg_##tname(void) \
	{								\
		harness_register(&harness_##tname);			\
	}								\
	static void test_##tname(void)

/*
 * From harness_setup: the whole program cannot run here (a plan of 0,
 * status 0), with the reason. Only before the first subtest.
 */
static inline void harness_skip_program(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static inline void harness_skip_program(const char *fmt, ...)
{
	va_list ap;

	if (tap_count)
		tap_bail("cannot skip the program after %u subtests", tap_count);
	fputs("1..0 # SKIP ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	exit(0);
}

static inline int harness_main(int argc, char **argv)
{
	struct harness_test *t;
	int i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (t = harness_head; t; t = t->next)
			puts(t->name);
		return 0;
	}
	if (harness_require)
		harness_require();
	printf("TAP version 13\n");
	fflush(stdout);
	if (harness_setup)
		harness_setup();
	for (t = harness_head; t; t = t->next) {
		bool run = argc < 2;

		for (i = 1; i < argc; i++)
			run |= !strcmp(argv[i], t->name);
		if (!run)
			continue;
		tap_diag("---- %s", t->name);
		t->fn();
	}
	if (harness_teardown)
		harness_teardown();
	printf("1..%u\n", tap_count);
	fflush(stdout);
	return tap_exit();
}

#endif /* KFDSYNC_TESTS_HARNESS_H */
