/* SPDX-License-Identifier: MIT */
/*
 * libhsakmt-dev 6.x (trixie) installs its header as <hsakmt/hsakmt.h>,
 * older ones (bookworm) as <hsakmt.h>. meson.build puts this directory on
 * the include path only where the first layout is the one found, so the
 * tree's `#include <hsakmt.h>` finds libhsakmt's header in either layout.
 */
#include <hsakmt/hsakmt.h>
