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
 */
#ifndef KFDSYNC_TESTS_HARNESS_H
#define KFDSYNC_TESTS_HARNESS_H

#include <stdio.h>
#include <string.h>

#include "tap.h"

struct harness_test {
	const char *name;
	void (*fn)(void);
	struct harness_test *next;
};

static struct harness_test *harness_head, **harness_tail = &harness_head;

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

/* Runs before the first test (after argument parsing); NULL for none. */
static void (*harness_setup)(void);

static inline int harness_main(int argc, char **argv)
{
	struct harness_test *t;
	int i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (t = harness_head; t; t = t->next)
			puts(t->name);
		return 0;
	}
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
	printf("1..%u\n", tap_count);
	fflush(stdout);
	return tap_exit();
}

#endif /* KFDSYNC_TESTS_HARNESS_H */
