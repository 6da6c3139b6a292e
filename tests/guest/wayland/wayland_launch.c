// SPDX-License-Identifier: MIT
/*
 * wayland_headless, wayland_drm, wayland_kwin, wayland_weston14 (and
 * consumer_vulkan, consumer_egl in ../vulkan): run their script on a client
 * program (kfdsync-wayland-client, kfdsync-vulkan, kfdsync-egl), and for
 * wayland_kwin and wayland_weston14 on the example (kfdsync-wayland, "" if
 * it was not built) too.
 *
 * The guest suite runs programs by path without arguments; this launcher
 * has the script's and the clients' paths built in.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
#ifdef WAYLAND_EXAMPLE
	execl("/bin/sh", "sh", WAYLAND_SCRIPT, WAYLAND_CLIENT, WAYLAND_EXAMPLE, (char *)NULL);
#else
	execl("/bin/sh", "sh", WAYLAND_SCRIPT, WAYLAND_CLIENT, (char *)NULL);
#endif
	printf("TAP version 13\n1..1\nBail out! cannot run %s: %s\n",
	       WAYLAND_SCRIPT, strerror(errno));
	return 1;
}
