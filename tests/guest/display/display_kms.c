// SPDX-License-Identifier: MIT
/*
 * display_kms: launcher of display_kms.py for the guest suite, which runs
 * programs by path without arguments. Both paths (the script, the example
 * it tests) are fixed at build time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	execl("/usr/bin/python3", "python3", DISPLAY_KMS_PY, KFDSYNC_KMS, (char *)NULL);
	printf("TAP version 13\n1..1\nBail out! cannot run %s: %s\n", DISPLAY_KMS_PY,
	       strerror(errno));
	return 1;
}
