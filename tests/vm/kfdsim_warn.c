// SPDX-License-Identifier: MIT
/*
 * kfdsim_warn - make the kernel WARN on purpose (through the GPU simulator's
 * debug ioctl), so tests/vm/selftest.py can prove the runner fails such a run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kfdsim_uapi.h"

int main(void)
{
	int fd = open("/dev/kfdsim", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "kfdsim_warn: /dev/kfdsim: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(fd, KFDSIM_IOC_DEBUG_WARN) < 0) {
		fprintf(stderr, "kfdsim_warn: KFDSIM_IOC_DEBUG_WARN: %s\n", strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	return 0;
}
