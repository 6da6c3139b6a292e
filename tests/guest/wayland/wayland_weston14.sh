#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kfdsync-wayland-client's explicit path (zwp_linux_explicit_synchronization_v1)
# against weston 14 with its GL renderer, in the 6.12 guest chrooted in the
# bookworm-backports root (tests/vm/run --root bookworm-backports). Prints TAP.
#
# usage: wayland_weston14.sh CLIENT [EXAMPLE]
#
# EXAMPLE (kfdsync-wayland, examples/display/wayland): weston 14 offers no
# wp_linux_drm_syncobj_v1, and the example says so (exit status 2).
#
# weston's GL renderer honours acquire fences only with
# EGL_ANDROID_native_fence_sync, which Mesa 25's llvmpipe has when
# /dev/udmabuf exists (6.12). Ordering is judged from pixels:
#
#   drm backend  weston on the boot VGA (bochs), GL renderer: QEMU's
#                screendump reads the scanout while frame 1's fence is held
#                (the simulated GPU's compute takes --hold-ms, its pixels
#                already final in the buffer) and after: frame 0, then 1.
#   headless     weston_capture_v1 (weston-screenshooter, weston --debug):
#                weston's GL renderer waits for an acquire fence inside its
#                repaint, so a capture asked for while the fence is pending
#                is answered only after it signalled, and shows the new
#                frame; a capture just before shows the old one.
#
# The client's buffers are dumb buffers of weston's own device (the explicit
# path's dmabufs; --device for the drm backend, whose weston 14 names no
# device: EGL cannot tell it here). GALLIUM_OVERRIDE_CPU_CAPS=sse4.1:
# llvmpipe's AVX2 code segfaults under QEMU's TCG.

CLIENT=$1
EXAMPLE=${2:-}
PLAN=13
HERE=$(cd "$(dirname "$0")" && pwd)
PIXEL="python3 $HERE/pixel.py"
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
[ -x "$CLIENT" ] || { echo "Bail out! no client at '$CLIENT'"; exit 1; }
ver=$(weston --version 2>/dev/null | sed -n 's/^weston \([0-9]*\)\..*/\1/p')
[ -n "$ver" ] && [ "$ver" -ge 14 ] ||
	skip_all "weston 14 is not installed (run in the bookworm-backports root: tests/vm/run --root bookworm-backports)"
[ -c /dev/udmabuf ] ||
	skip_all "no /dev/udmabuf: llvmpipe then has no EGL_ANDROID_native_fence_sync, and weston's GL renderer no explicit sync (the 6.12 guest has it)"
[ -c /dev/kfdsim ] || skip_all "the GPU simulator kfdsim.ko is not loaded"
# The simulated GPU needs amdkfd (the runner says when /dev/kfd cannot be opened).
[ -z "${KFDSYNC_KFD_UNUSABLE:-}" ] || skip_all "$KFDSYNC_KFD_UNUSABLE"
[ -x /lib/systemd/systemd-udevd ] || skip_all "systemd-udevd is not installed"
[ -n "${KFDSYNC_RESULTS:-}" ] || skip_all "not in a tests/vm/run guest (no screendump)"
card=
for c in /sys/class/drm/card[0-9]*; do
	case ${c##*/} in *-*) continue ;; esac
	[ "$(cat "$c/device/boot_vga" 2>/dev/null)" = 1 ] && card=${c##*/}
done
[ -n "$card" ] || skip_all "no boot VGA KMS device (boot with --vga std)"

XDG_RUNTIME_DIR=$(mktemp -d /tmp/kfdsync-weston14.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
T=$XDG_RUNTIME_DIR
export GALLIUM_OVERRIDE_CPU_CAPS=sse4.1 ASAN_OPTIONS=detect_leaks=0
WPIDS=''
UDEVD=''
EVDEV=''
cleanup() {
	for p in $WPIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$UDEVD" ] && udevadm control --exit 2>/dev/null
	[ -n "$EVDEV" ] && modprobe -r evdev 2>/dev/null
}
trap cleanup EXIT

# start_weston SOCKET ARGS...: waits (at most 180 s) for its socket.
# Remembers its pid for weston_died and stop_weston.
start_weston() {
	sock=$1; shift
	weston --socket="$sock" --idle-time=0 --no-config --renderer=gl "$@" \
		>>"$T/$sock.log" 2>&1 &
	pid=$!
	WPIDS="$WPIDS $pid"
	eval "WPID_$sock=$pid"
	for i in $(seq 360); do
		[ -S "$T/$sock" ] && return 0
		kill -0 $pid 2>/dev/null || break
		sleep 0.5
	done
	echo "# weston ($sock) did not start:"
	tail -n 20 "$T/$sock.log" | diag
	return 1
}
# weston_died SOCKET: $died is empty while the weston serving SOCKET runs;
# else words for a check's description that name it as the culprit (its
# exit status, the kernel's segfault line), and its log's end is shown.
weston_died() {
	died=
	eval "wpid=\${WPID_$1:-}"
	[ -n "$wpid" ] && kill -0 "$wpid" 2>/dev/null && return 0
	wait "$wpid" 2>/dev/null
	st=$?
	line=$(dmesg 2>/dev/null | grep -E "weston\[$wpid\]" | tail -n 1 | sed 's/^\[[ 0-9.]*\] //')
	died="; the culprit: weston ($1) died during this case, status $st: ${line:-no kernel line}"
	echo "# weston ($1) died; its log ends:"
	tail -n 15 "$T/$1.log" | diag
}
# stop_weston SOCKET
stop_weston() {
	eval "wpid=\${WPID_$1:-}"
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
	eval "WPID_$1="
}
# run NAME SOCKET ARGS...: the client's stdout in $T/out-NAME, status in $rc.
run() {
	name=$1 sock=$2; shift 2
	WAYLAND_DISPLAY=$sock timeout 600 "$CLIENT" "$@" >"$T/out-$name" 2>"$T/out-$name.err"
	rc=$?
	echo "# \$ $(basename "$CLIENT") $* -> exit $rc"
	diag "$T/out-$name" "$T/out-$name.err"
}
has() { grep -q -- "$2" "$T/out-$1"; }
RED=d03030 GREEN=30a040

# ---- drm backend on the boot VGA, GL renderer; QEMU reads the scanout ----
# weston needs udev's view of the devices and, for kiosk-shell to map a
# window, a seat with input devices (evdev); libseat's noop backend opens
# the devices directly (root, no seat manager in the guest).
if ! grep -q "^evdev " /proc/modules && modprobe evdev 2>/dev/null; then
	EVDEV=1
fi
if ! udevadm control --ping 2>/dev/null; then
	SYSTEMD_IGNORE_CHROOT=1 unshare -m sh -c '
		mount -t tmpfs kfdsync-udev /etc/udev/rules.d &&
		: >/etc/udev/rules.d/80-drivers.rules &&
		exec /lib/systemd/systemd-udevd --daemon' 2>"$T/udevd.log"
	UDEVD=1
	udevadm trigger --action=add --subsystem-match=drm --subsystem-match=input
	udevadm settle --timeout=60
fi
cat >"$T/screendump" <<'EOF'
#!/bin/sh
exec "$KFDSYNC_SOURCE_ROOT/tests/vm/screendump" "weston14-drm-$1" >/dev/null
EOF
chmod +x "$T/screendump"
if LIBSEAT_BACKEND=noop start_weston drm --backend=drm --drm-device="$card" \
	--shell=kiosk --continue-without-input; then
	ok "weston $ver, drm backend on $card with the GL renderer, starts"
	run drm drm --device "/dev/dri/$card" --path explicit --gpu sim --frames 3 \
		--compute-ms 100 --hold-frame 1 --hold-ms 6000 --timeout-ms 90000 \
		--size 640x480 --capture "$T/screendump"
	weston_died drm
	check "explicit sync offered (GL renderer with EGL_ANDROID_native_fence_sync)$died" \
		has drm "zwp_linux_explicit_synchronization_v1 yes"
	check "explicit path with dumb buffers of weston's device$died" \
		has drm "^sync path: explicit (zwp_linux_explicit_synchronization_v1, dmabuf from the compositor's device /dev/dri/$card"
	check "frame 1 captured (QEMU screendump) while its fence was pending$died" \
		has drm "^frame 1 pending: captured while its fence was pending"
	check "while frame 1's fence is pending the screen shows frame 0$died" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-drm-frame1-pending.png" 0.5 0.5 $RED
	check "after frame 1's fence signalled the screen shows frame 1$died" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-drm-frame1-shown.png" 0.5 0.5 $GREEN
	check "every frame presented, exit 0; frame 2's gate opened from weston's release$died" \
		test $rc -eq 0 -a -n "$(grep '^summary: path=explicit frames=3 presented=3 discarded=0' "$T/out-drm")" \
		-a -n "$(grep "^frame 2: compute on buffer 0, gate >= 2 opened by kfdsync from the compositor's release of frame 0 .* seeing 2$" "$T/out-drm")"
else
	nok "weston $ver, drm backend on $card with the GL renderer, starts"
	for i in 1 2 3 4 5 6; do nok "weston (drm backend) did not start"; done
fi
for p in $WPIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
WPIDS=

# ---- headless, GL renderer: weston_capture_v1 ----
# One weston per client that maps a window. weston 14's kiosk-shell (and
# weston's main branch of 2025-09) uses freed memory when a toplevel goes
# away on an output with no seat (the headless backend has none): the
# output keeps pointing at the gone surface's tree, and the next toplevel to
# map walks it (docs/weston-kiosk-shell.md has the source lines and a
# reproduction without kfdsync). On a loaded machine that crashed weston
# ("segfault at ffffffffffffff80 ... in kiosk-shell.so") in the second
# client's case, "a fence that never signals"; fences play no part in it.
cat >"$T/capture" <<'EOF'
#!/bin/sh
# weston-screenshooter writes wayland-screenshot-<time>.png in its directory.
d=$(mktemp -d "$XDG_RUNTIME_DIR/shot.XXXXXX") && cd "$d" && weston-screenshooter >/dev/null 2>&1
f=$(ls "$d"/*.png 2>/dev/null | head -n1)
[ -f "$f" ] && mv "$f" "$KFDSYNC_RESULTS/weston14-capture-$1.png"
EOF
chmod +x "$T/capture"
HL="--backend=headless --width=640 --height=480 --shell=kiosk"
# shellcheck disable=SC2086
if start_weston hl $HL --debug; then
	ok "weston $ver, headless with the GL renderer and weston_capture_v1 (--debug), starts"
	# The first capture compiles llvmpipe's shaders: not during the hold.
	WAYLAND_DISPLAY=hl "$T/capture" warmup
	run hl hl --path explicit --gpu sim --frames 2 --compute-ms 100 --hold-frame 1 \
		--hold-ms 5000 --timeout-ms 90000 --size 640x480 --capture "$T/capture"
	weston_died hl
	check "weston_capture_v1 just before frame 1: frame 0$died" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-capture-frame1-before.png" 0.5 0.5 $RED
	check "a capture asked for while frame 1's fence is pending is answered only after it signalled$died" \
		has hl "^frame 1 pending: the capture ended only after its fence signalled"
	check "... and shows frame 1: weston rendered it only after its fence$died" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-capture-frame1-pending.png" 0.5 0.5 $GREEN
else
	nok "weston $ver, headless with the GL renderer and weston_capture_v1 (--debug), starts"
	for i in 1 2 3; do nok "weston (headless) did not start"; done
fi
stop_weston hl
# A weston of its own (see above); the example maps no window (it stops at
# the globals) and runs on it after, unless it died.
# shellcheck disable=SC2086
if start_weston hls $HL; then
	run hlstall hls --path explicit --frames 2 --compute-ms 100 --stall-frame 1 \
		--timeout-ms 8000 --size 640x480
	weston_died hls
	check "a fence that never signals: weston does not present the frame, clear error, exit 1$died" \
		test $rc -eq 1 -a -n "$(grep '^frame 1: not presented, fence pending$' "$T/out-hlstall")"
	if [ ! -x "$EXAMPLE" ]; then
		ok "kfdsync-wayland # SKIP not built (it needs linux-drm-syncobj-v1.xml)"
	else
		# A weston that died in the case before is replaced: one crash, one case.
		esock=hls
		# shellcheck disable=SC2086
		[ -z "$died" ] || { esock=hlx; start_weston hlx $HL; }
		WAYLAND_DISPLAY=$esock timeout 120 "$EXAMPLE" --frames 2 >"$T/out-example" 2>&1
		rc=$?
		diag "$T/out-example"
		weston_died $esock
		check "kfdsync-wayland: weston lacks wp_linux_drm_syncobj_v1, said so, exit 2$died" \
			test $rc -eq 2 -a -n "$(grep 'does not offer wp_linux_drm_syncobj_manager_v1' "$T/out-example")"
	fi
else
	nok "weston $ver, headless (one for a fence that never signals) starts"
	nok "weston (headless) did not start"
fi
[ $n -eq $PLAN ] || echo "# ran $n of $PLAN"
exit 0
