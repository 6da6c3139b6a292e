#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Host checks of kfdsync-wayland's command line: --help documents every
# option and no test hook (the test rig's client has those), bad input
# gives a clear message and exit status 2, a missing compositor is
# reported. Prints TAP.
#
# usage: test_cli_example.sh PROGRAM

P=$1
. "$(dirname "$0")/cli_tap.sh"

echo "TAP version 13"
echo "1..19"
t "--help exits 0" 0 "^usage: kfdsync-wayland" --help
for o in --frames --compute-ms --fullscreen --gpu --timeout-ms wp_linux_drm_syncobj_v1 \
	 "Exit status"; do
	t "--help documents $o" 0 "$o" --help
done
# The test hooks moved to kfdsync-wayland-client (and --size went): refused.
for o in --hold-frame --hold-ms --capture --error-frame --error-ms --stall-frame --size; do
	t "refuses $o" 2 "^usage: kfdsync-wayland" "$o" 1
done
t "unknown --gpu value" 2 '--gpu: sim or real, not "fast"' --gpu fast
t "--frames 0" 2 '--frames: "0" is not a number from 1' --frames 0
t "an argument it does not take" 2 '^usage: kfdsync-wayland' extra
export WAYLAND_DISPLAY=kfdsync-no-such-display
t "no compositor: clear error, exit 1" 1 'cannot connect to the Wayland compositor' --frames 1
