#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Host checks of kfdsync-wayland-client's command line: bad input gives a
# clear message and exit status 2, --help documents every option, a missing
# compositor is reported. Prints TAP.
#
# usage: test_cli.sh CLIENT

P=$1
. "$(dirname "$0")/cli_tap.sh"

echo "TAP version 13"
echo "1..25"
t "--help exits 0" 0 "^Usage: kfdsync-wayland-client" --help
for o in --frames --size --path --compute-ms --timeout-ms --stall-frame \
	 --try-acquire --linger-ms --gpu --hold-frame --hold-ms --capture \
	 --error-frame --error-ms --fullscreen syncobj "Exit status"; do
	t "--help documents $o" 0 "$o" --help
done
t "unknown --path value" 2 '--path: "fast" is not auto, syncobj, explicit, implicit or shm' --path fast
t "unknown --gpu value" 2 '--gpu: "real" is not timeline or sim' --gpu real
t "--error-frame needs --gpu sim" 2 '--error-frame needs --gpu sim' --error-frame 1
t "--capture needs --hold-frame" 2 '--capture needs --hold-frame' --capture true
t "--size out of range" 2 '--size width: "8" is not a number from 16 to 8192' --size 8x64
t "--frames 0" 2 '--frames: "0" is not a number from 1' --frames 0
export WAYLAND_DISPLAY=kfdsync-no-such-display
t "no compositor: clear error, exit 1" 1 'cannot connect to the Wayland display "kfdsync-no-such-display"' \
	--frames 1
