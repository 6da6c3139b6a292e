#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The part of wayland_kwin.sh that runs inside its D-Bus session: KWin, the
# client runs and the checks. Continues wayland_kwin.sh's TAP (plan PLAN).

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
	check_desc=$1; shift
	if "$@"; then ok "$check_desc"; else nok "$check_desc"; return 1; fi
}
diag() { sed 's/^/# /' "$@"; }
finish() {
	[ -n "$KPID" ] && kill "$KPID" 2>/dev/null && wait "$KPID" 2>/dev/null
	[ $n -eq "$PLAN" ] || echo "# ran $n of $PLAN"
	exit 0
}
PIXEL="python3 $HERE/pixel.py"
KPID=

# KWin in a mount namespace whose /dev/dri holds virtio-gpu's primary node,
# named like a render node (see wayland_kwin.sh for why).
unshare -m sh -c '
	mount -t tmpfs kfdsync-kwin-dri /dev/dri &&
	mknod /dev/dri/renderD128 c $(echo "$VDEV" | tr : " ") &&
	exec kwin_wayland --virtual --width 640 --height 480 --socket kwin \
		--no-lockscreen --no-global-shortcuts --no-kactivities' >"$T/kwin.log" 2>&1 &
KPID=$!
up=
for _ in $(seq 360); do
	kill -0 $KPID 2>/dev/null || break
	if dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
		org.freedesktop.DBus.NameHasOwner string:org.kde.KWin 2>/dev/null | grep -q true &&
		[ -S "$T/kwin" ]; then
		up=1
		break
	fi
	sleep 0.5
done
if [ -z "$up" ]; then
	nok "kwin_wayland --virtual starts (on $VCARD's node)"
	tail -n 30 "$T/kwin.log" | diag
	finish
fi
# The first capture compiles llvmpipe's shaders: take it before the tests.
if ! "$HERE/kwin-screenshot" "$T/warmup.png" >"$T/warmup.log" 2>&1; then
	nok "kwin_wayland --virtual starts and renders (a screenshot works)"
	diag "$T/warmup.log"
	tail -n 30 "$T/kwin.log" | diag
	finish
fi
ok "kwin_wayland --virtual starts and renders (on $VCARD's node, a screenshot works)"
export WAYLAND_DISPLAY=kwin

cat >"$T/capture" <<'EOF'
#!/bin/sh
exec "$HERE/kwin-screenshot" "$KFDSYNC_RESULTS/kwin-$1.png"
EOF
cat >"$T/capture-example" <<'EOF'
#!/bin/sh
exec "$HERE/kwin-screenshot" "$KFDSYNC_RESULTS/kwin-example-$1.png"
EOF
chmod +x "$T/capture" "$T/capture-example"

# run NAME ARGS...: the client's stdout in $T/NAME, stderr in $T/NAME.err.
run() {
	name=$1; shift
	timeout 600 "$CLIENT" "$@" >"$T/$name" 2>"$T/$name.err"
	rc=$?
	echo "# \$ $(basename "$CLIENT") $* -> exit $rc"
	diag "$T/$name" "$T/$name.err"
}
has() { grep -q -- "$2" "$T/$1"; }

# Frame colours (the client's palette): 1 green, 2 blue.
GREEN=30a040 BLUE=2050d0

# ---- A: the simulated GPU, frame 2 held 25 s, captures while pending ----
run sim --gpu sim --fullscreen --size 640x480 --frames 4 --compute-ms 100 \
	--hold-frame 2 --hold-ms 25000 --timeout-ms 150000 --capture "$T/capture"
# A client built without the protocol (-Dwayland_syncobj=disabled, or no
# wayland-protocols 1.34 at build time) cannot take the path under test.
if has sim "this build has no linux-drm-syncobj-v1.xml"; then
	why="kfdsync-wayland-client was built without linux-drm-syncobj-v1.xml (see meson's summary, Fence consumers)"
	while [ $n -lt "$PLAN" ]; do ok "not run # SKIP $why"; done
	finish
fi
check "KWin offers wp_linux_drm_syncobj_manager_v1" \
	has sim "wp_linux_drm_syncobj_manager_v1 yes$"
check "auto takes the syncobj path (dumb buffers of virtio-gpu, a timeline per buffer)" \
	has sim "^sync path: syncobj (wp_linux_drm_syncobj_v1, dumb buffers of /dev/dri/card[0-9]* (virtio_gpu), a timeline per buffer"
check "release points are waited for with DRM_IOCTL_SYNCOBJ_EVENTFD" \
	has sim "release points waited for with DRM_IOCTL_SYNCOBJ_EVENTFD)$"
check "frame 2 captured while its fence was pending and its pixels final" \
	has sim "^frame 2 pending: captured while its fence was pending"
check "while frame 2's fence is pending, KWin shows frame 1 (screenshot)" \
	$PIXEL is "$KFDSYNC_RESULTS/kwin-frame2-pending.png" 0.5 0.25 $GREEN
check "after frame 2's fence signalled, KWin shows frame 2 (screenshot)" \
	$PIXEL is "$KFDSYNC_RESULTS/kwin-frame2-shown.png" 0.5 0.25 $BLUE
check "every frame presented, exit 0" \
	test $rc -eq 0 -a -n "$(grep '^summary: path=syncobj frames=4 presented=4 discarded=0' "$T/sim")"

# Frames 2 and 3 reuse the buffers of frames 0 and 1: their compute waited
# (WAIT_REG_MEM) for the gate kfdsync wrote when that frame's release point
# signalled. The queue must pass it after the release, and see the value.
gates_after_release() {
	for f in 2 3; do
		line=$(grep "^frame $f: compute on buffer" "$T/sim") || return 1
		echo "$line" | grep -q "opened by kfdsync from the compositor's release of frame $((f - 2)) " ||
			return 1
		# Released before the import (KWin signals its release points
		# from the CPU once done): the gate was open at submission.
		echo "$line" | grep -q "(signalled before it was imported)" && continue
		rel=$(echo "$line" | sed -n 's/.*pending when imported, signalled \([-+0-9.]*\) ms).*/\1/p')
		pass=$(echo "$line" | sed -n 's/.*queue passed it \([-+0-9.]*\) ms after.*/\1/p')
		[ -n "$rel" ] && [ -n "$pass" ] || return 1
		awk -v r="$rel" -v p="$pass" 'BEGIN { exit !(p >= r) }' || return 1
	done
}
gates_seen() {
	grep -q "^frame 2: compute on buffer .* seeing 2$" "$T/sim" &&
		grep -q "^frame 3: compute on buffer .* seeing 3$" "$T/sim"
}
check "the release point gates the next compute: the queue passed the gate after the release signalled" \
	gates_after_release
check "the gate the queue saw is the value kfdsync wrote at the release" gates_seen

# ---- B: a fence that ends with -ETIMEDOUT fails the frame ----
run err --gpu sim --fullscreen --size 640x480 --frames 2 --compute-ms 100 \
	--error-frame 1 --hold-ms 5000 --error-ms 500 --timeout-ms 60000
check "a fence ending with -ETIMEDOUT fails the frame: exit 1, clear message" \
	test $rc -eq 1 -a -n "$(grep '^frame 1: failed, its fence ended with an error: Connection timed out$' "$T/err")" \
	-a -n "$(grep 'frame 1: the compute fence ended with an error: Connection timed out; the frame failed' "$T/err.err")"

# ---- C: the CPU producer: buffers reused once the release signalled ----
run cpu --fullscreen --size 640x480 --frames 3 --compute-ms 100 --timeout-ms 60000
check "CPU producer on the syncobj path: every frame presented after its fence, exit 0" \
	test $rc -eq 0 -a -n "$(grep '^summary: path=syncobj frames=3 presented=3 discarded=0 early=0' "$T/cpu")"

# ---- D: a compute that never finishes: KWin holds the frame back ----
run stall --gpu sim --fullscreen --size 640x480 --frames 2 --compute-ms 100 \
	--stall-frame 1 --timeout-ms 10000
check "a fence that never signals: the frame is held back, clear error, exit 1" \
	test $rc -eq 1 -a -n "$(grep '^frame 1: not presented, fence pending$' "$T/stall")"
check "KWin still runs after every client" kill -0 $KPID

# ---- E: the example (kfdsync-wayland), the short syncobj client ----
# It has no test hooks: a long --compute-ms is what holds its frames. Its
# compute draws first and then takes that long, so a committed frame's
# pixels are in its buffer while its fence is pending. Frame 2 is committed
# once frame 1 is on screen (KWin released frame 0's buffer), frame 3 once
# frame 2 is: a screenshot soon after "frame 2: committed" must show frame 1
# (a KWin that did not wait would show buffer 0: frame 0, or frame 2), one
# soon after "frame 3: committed" frame 2. --compute-ms leaves each screenshot
# 12 s; it runs while the example does (KWin unmaps a window whose client left).
# shot_after LINE NAME: once LINE is in the example's output, wait 2 s (KWin
# takes the commit) and take screenshot NAME, unless the example ended first.
shot_after() {
	for _ in $(seq 600); do
		grep -q "^$1" "$T/example" && break
		kill -0 "$EPID" 2>/dev/null || return 1
		sleep 0.1
	done
	sleep 2
	kill -0 "$EPID" 2>/dev/null && "$T/capture-example" "$2"
}
if [ -x "$EXAMPLE" ]; then
	timeout 600 "$EXAMPLE" --fullscreen --frames 4 --compute-ms 12000 --timeout-ms 60000 \
		>"$T/example" 2>"$T/example.err" &
	EPID=$!
	shot_after "frame 2: committed" frame2-pending
	shot_after "frame 3: committed" frame2-shown
	wait "$EPID"
	rc=$?
	echo "# \$ kfdsync-wayland --fullscreen --frames 4 --compute-ms 12000 ... -> exit $rc"
	diag "$T/example" "$T/example.err"
	example_path() {
		has example "^wp_linux_drm_syncobj_v1 on /dev/dri/card[0-9]*: a timeline per buffer$" &&
			has example "; kfdsync: the dispatch form$"
	}
	check "kfdsync-wayland takes wp_linux_drm_syncobj_v1 on KWin's virtio-gpu, in the dispatch form" \
		example_path
	check "kfdsync-wayland: every frame's fence signalled, exit 0" \
		test $rc -eq 0 -a -n "$(grep '^summary: 4 frames, every fence signalled$' "$T/example")"
	check "kfdsync-wayland: while frame 2's fence is pending, KWin shows frame 1 (screenshot)" \
		$PIXEL is "$KFDSYNC_RESULTS/kwin-example-frame2-pending.png" 0.5 0.25 $GREEN
	check "kfdsync-wayland: once frame 2's fence signalled (frame 3 pending), KWin shows frame 2" \
		$PIXEL is "$KFDSYNC_RESULTS/kwin-example-frame2-shown.png" 0.5 0.25 $BLUE
	# A compute longer than --timeout-ms: its fence's watchdog ends it.
	timeout 600 "$EXAMPLE" --fullscreen --frames 3 --compute-ms 4000 --timeout-ms 1500 \
		>"$T/example-err" 2>&1
	rc=$?
	diag "$T/example-err"
	check "kfdsync-wayland: a compute longer than --timeout-ms fails its frame (-ETIMEDOUT): exit 1, clear message" \
		test $rc -eq 1 -a -n "$(grep '^frame 0: its fence ended with an error: Connection timed out$' "$T/example-err")"
else
	for i in 1 2 3 4 5; do ok "kfdsync-wayland # SKIP not built (it needs linux-drm-syncobj-v1.xml)"; done
fi

# The picture for the README: pending and shown, side by side.
check "picture of KWin's screen while frame 2 is pending and after (kwin.png)" \
	$PIXEL compose "$KFDSYNC_RESULTS/kwin.png" "$KFDSYNC_RESULTS/kwin-frame2-pending.png" \
	"$KFDSYNC_RESULTS/kwin-frame2-shown.png" "pending: frame 1 on screen" \
	"signalled: frame 2"
finish
