/* SPDX-License-Identifier: MIT */
/*
 * <linux/kfd_ioctl.h> (linux-libc-dev) includes <drm/drm.h> for its types,
 * and Debian's linux-libc-dev has no drm/ directory: libdrm-dev ships that
 * header as <drm.h> (pkg-config --cflags libdrm). Only lib/kfd.c sees this.
 */
#include <drm.h>
