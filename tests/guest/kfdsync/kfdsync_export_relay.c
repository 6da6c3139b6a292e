// SPDX-License-Identifier: MIT
/*
 * kfdsync_export_relay: kfdsync_export with kfdsync in forced relay mode.
 *
 * The guest suite runs programs by path without arguments; this one runs
 * "relay-mode kfdsync_export" (both paths fixed at build time), which
 * reloads kfdsync with hooks=0 around the test and restores it afterwards.
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
