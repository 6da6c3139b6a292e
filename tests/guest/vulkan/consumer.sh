#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kfdsync-vulkan or kfdsync-egl in the guest (6.12, the bookworm-backports
# root: Mesa 25's lavapipe and llvmpipe, /dev/udmabuf). Prints TAP.
#
# usage: consumer.sh PROGRAM
#
# PROGRAM checks each frame itself (exit 1 otherwise): the consumer's image
# shows the frame (it waited for the compute fence: the compute writes the
# colour only at the end of its compute time), the compute queue's copy of
# that image shows it too (the queue waited, WAIT_REG_MEM, for the gate
# kfdsync opened at the consumer's fence), and the CLOCK_MONOTONIC order
# compute fence <= consumer done <= queue past its gate. This script also
# checks a held compute (2 s): the consumer finished after it; and an
# -ETIMEDOUT compute fence: the frame fails, and the error reaches the
# queue (GATE_ERROR).

PROG=$1
NAME=$(basename "$PROG")
PLAN=6
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
	check_desc=$1; shift
	if "$@"; then ok "$check_desc"; else nok "$check_desc"; return 1; fi
}
diag() { sed 's/^/# /' "$@"; }
skip_all() {
	for i in $(seq $PLAN); do echo "ok $i # SKIP $*"; done
	exit 0
}

echo "TAP version 13"
echo "1..$PLAN"
[ -x "$PROG" ] || { echo "Bail out! no program at '$PROG'"; exit 1; }
[ -c /dev/udmabuf ] ||
	skip_all "no /dev/udmabuf: Mesa's lavapipe and llvmpipe then have no SYNC_FD semaphores and no EGL_ANDROID_native_fence_sync (the 6.12 guest has it)"
[ -c /dev/kfdsim ] || skip_all "the GPU simulator kfdsim.ko is not loaded"
# The simulated GPU needs amdkfd (the runner says when /dev/kfd cannot be opened).
[ -z "${KFDSYNC_KFD_UNUSABLE:-}" ] || skip_all "$KFDSYNC_KFD_UNUSABLE"
T=$(mktemp -d /tmp/kfdsync-consumer.XXXXXX)
trap 'rm -rf "$T"' EXIT
# llvmpipe's AVX2 code segfaults under QEMU's TCG (-cpu max).
export GALLIUM_OVERRIDE_CPU_CAPS=sse4.1 ASAN_OPTIONS=detect_leaks=0

run() { # run NAME ARGS...
	name=$1; shift
	timeout 300 "$PROG" "$@" >"$T/$name" 2>&1
	rc=$?
	echo "# \$ $NAME $* -> exit $rc"
	grep -v "^libEGL warning" "$T/$name" | diag
}

run plain --frames 3
if [ $rc -eq 2 ] && ! grep -q "^frame " "$T/plain"; then
	skip_all "$(grep "^$NAME: " "$T/plain" | head -n1)"
fi
check "three frames, each right and in order, exit 0" \
	test $rc -eq 0 -a -n "$(grep '^summary: frames=3 result=ok$' "$T/plain")"
check "the consumer's image and the queue's copy show every frame" \
	test "$(grep -c "image is frame N, the queue's copy is frame N\|frame is frame N, the queue's copy is frame N" "$T/plain")" -eq 3
check "the queue passed each gate at N + 1 (the value kfdsync wrote)" \
	sh -c "grep -q '(gate 1);' '$T/plain' && grep -q '(gate 2);' '$T/plain' && grep -q '(gate 3);' '$T/plain'"

run hold --frames 2 --hold-frame 1 --hold-ms 2000
# The consumer's completion (or, on a driver that waits on the CPU, the
# moment its fence was handed out) comes after the 2 s compute.
# (Its variables are not check()'s: sh has no locals.)
held_after() {
	h_line=$(grep "^frame 1: compute fence signalled" "$T/hold") || return 1
	h_c=$(echo "$h_line" | sed -n 's/^frame 1: compute fence signalled \([-+0-9.]*\) ms.*/\1/p')
	h_d=$(echo "$h_line" | sed -n 's/.* done ([^)]*) [a-z ]*\([-+0-9.]*\) ms, queue.*/\1/p')
	echo "# compute fence $h_c ms, consumer done $h_d ms"
	[ -n "$h_c" ] && [ -n "$h_d" ] &&
		awk -v c="$h_c" -v d="$h_d" 'BEGIN { exit !(c >= 2000 && d >= c) }'
}
check "a compute held 2 s: the consumer finished after its fence signalled" \
	test $rc -eq 0 -a -n "$(grep '^summary: frames=2 result=ok$' "$T/hold")"
check "... in that order (timestamps)" held_after

run err --frames 2 --error-frame 1 --hold-ms 3000 --error-ms 300
check "an -ETIMEDOUT compute fence fails the frame and reaches the queue as an error" \
	test $rc -eq 1 -a -n "$(grep '^frame 1: failed: the compute fence ended with an error: Connection timed out; .* gate read GATE_ERROR: the error reached it$' "$T/err")"
[ $n -eq $PLAN ] || echo "# ran $n of $PLAN"
exit 0
