// SPDX-License-Identifier: MIT
/*
 * A relay-mode launcher: a guest test program with kfdsync in forced relay
 * mode. Built once per program (<program>_relay, by meson).
 *
 * The guest suite runs programs by path without arguments; this one runs
 * "relay-mode PROGRAM" (both paths fixed at build time: RELAY_MODE and
 * KFDSYNC_EXPORT), which reloads kfdsync with hooks=0 around the test and
 * restores it afterwards.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

int main(void)
{
	execl(RELAY_MODE, RELAY_MODE, KFDSYNC_EXPORT, (char *)NULL);
	printf("TAP version 13\n1..1\nBail out! cannot run %s: %s\n", RELAY_MODE,
	       strerror(errno));
	return 1;
}
