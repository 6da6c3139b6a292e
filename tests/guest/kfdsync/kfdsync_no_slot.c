// SPDX-License-Identifier: MIT
/*
 * A no-slot launcher: a guest test program whose registrations pass slot
 * address 0, as a discrete GPU's caller would (its events page is a GPU
 * buffer: no /dev/kfd events mapping to name). Built once per program
 * (<program>_noslot, by meson); KFDSYNC_TEST_NO_SLOT makes the tests'
 * registration helpers (raw_slot()) pass 0, and kfdsync must watch the
 * same slots, exactly, by event id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	setenv("KFDSYNC_TEST_NO_SLOT", "1", 1);
	execl(KFDSYNC_PROGRAM, KFDSYNC_PROGRAM, (char *)NULL);
	printf("TAP version 13\n1..1\nBail out! cannot run %s: %s\n", KFDSYNC_PROGRAM,
	       strerror(errno));
	return 1;
}
