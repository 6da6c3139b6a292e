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
# Remembers its pid and arguments for alive_weston.
start_weston() {
	sock=$1; shift
	weston --socket="$sock" --idle-time=0 --no-config --renderer=gl "$@" \
		>>"$T/$sock.log" 2>&1 &
	pid=$!
	WPIDS="$WPIDS $pid"
	eval "WPID_$sock=$pid"
	printf '%s\n' "$@" >"$T/$sock.args"
	for i in $(seq 360); do
		[ -S "$T/$sock" ] && return 0
		kill -0 $pid 2>/dev/null || break
		sleep 0.5
	done
	echo "# weston ($sock) did not start:"
	tail -n 20 "$T/$sock.log" | diag
	return 1
}
# alive_weston SOCKET: 0 if the weston serving SOCKET still runs. Else says
# how it ended (its log's end, the kernel's segfault line) and starts it
# again with the same arguments, so that one crash fails only the case it
# happened in, not the cases after it; 1 if it cannot be restarted.
alive_weston() {
	sock=$1
	eval "wpid=\${WPID_$sock:-}"
	[ -n "$wpid" ] && kill -0 "$wpid" 2>/dev/null && [ -S "$T/$sock" ] && return 0
	wait "$wpid" 2>/dev/null
	echo "# weston ($sock) died (status $?) during the previous case; its log ends:"
	tail -n 15 "$T/$sock.log" | diag
	dmesg 2>/dev/null | grep -E 'weston.*segfault|segfault.*weston|kiosk-shell' | tail -n 3 | diag
	rm -f "$T/$sock" "$T/$sock.lock"
	set -- $(cat "$T/$sock.args")
	start_weston "$sock" "$@"
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
	check "explicit sync offered (GL renderer with EGL_ANDROID_native_fence_sync)" \
		has drm "zwp_linux_explicit_synchronization_v1 yes"
	check "explicit path with dumb buffers of weston's device" \
		has drm "^sync path: explicit (zwp_linux_explicit_synchronization_v1, dmabuf from the compositor's device /dev/dri/$card"
	check "frame 1 captured (QEMU screendump) while its fence was pending" \
		has drm "^frame 1 pending: captured while its fence was pending"
	check "while frame 1's fence is pending the screen shows frame 0" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-drm-frame1-pending.png" 0.5 0.5 $RED
	check "after frame 1's fence signalled the screen shows frame 1" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-drm-frame1-shown.png" 0.5 0.5 $GREEN
	check "every frame presented, exit 0; frame 2's gate opened from weston's release" \
		test $rc -eq 0 -a -n "$(grep '^summary: path=explicit frames=3 presented=3 discarded=0' "$T/out-drm")" \
		-a -n "$(grep "^frame 2: compute on buffer 0, gate >= 2 opened by kfdsync from the compositor's release of frame 0 .* seeing 2$" "$T/out-drm")"
else
	nok "weston $ver, drm backend on $card with the GL renderer, starts"
	for i in 1 2 3 4 5 6; do nok "weston (drm backend) did not start"; done
fi
for p in $WPIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
WPIDS=

# ---- headless, GL renderer: weston_capture_v1 ----
cat >"$T/capture" <<'EOF'
#!/bin/sh
# weston-screenshooter writes wayland-screenshot-<time>.png in its directory.
d=$(mktemp -d "$XDG_RUNTIME_DIR/shot.XXXXXX") && cd "$d" && weston-screenshooter >/dev/null 2>&1
f=$(ls "$d"/*.png 2>/dev/null | head -n1)
[ -f "$f" ] && mv "$f" "$KFDSYNC_RESULTS/weston14-capture-$1.png"
EOF
chmod +x "$T/capture"
if start_weston hl --backend=headless --width=640 --height=480 --shell=kiosk --debug; then
	ok "weston $ver, headless with the GL renderer and weston_capture_v1 (--debug), starts"
	# The first capture compiles llvmpipe's shaders: not during the hold.
	WAYLAND_DISPLAY=hl "$T/capture" warmup
	run hl hl --path explicit --gpu sim --frames 2 --compute-ms 100 --hold-frame 1 \
		--hold-ms 5000 --timeout-ms 90000 --size 640x480 --capture "$T/capture"
	check "weston_capture_v1 just before frame 1: frame 0" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-capture-frame1-before.png" 0.5 0.5 $RED
	check "a capture asked for while frame 1's fence is pending is answered only after it signalled" \
		has hl "^frame 1 pending: the capture ended only after its fence signalled"
	check "... and shows frame 1: weston rendered it only after its fence" \
		$PIXEL is "$KFDSYNC_RESULTS/weston14-capture-frame1-pending.png" 0.5 0.5 $GREEN
	alive_weston hl
	run hlstall hl --path explicit --frames 2 --compute-ms 100 --stall-frame 1 \
		--timeout-ms 8000 --size 640x480
	check "a fence that never signals: weston does not present the frame, clear error, exit 1" \
		test $rc -eq 1 -a -n "$(grep '^frame 1: not presented, fence pending$' "$T/out-hlstall")"
	alive_weston hl
	if [ -x "$EXAMPLE" ]; then
		WAYLAND_DISPLAY=hl timeout 120 "$EXAMPLE" --frames 2 >"$T/out-example" 2>&1
		rc=$?
		diag "$T/out-example"
		check "kfdsync-wayland: weston lacks wp_linux_drm_syncobj_v1, said so, exit 2" \
			test $rc -eq 2 -a -n "$(grep 'does not offer wp_linux_drm_syncobj_manager_v1' "$T/out-example")"
	else
		ok "kfdsync-wayland # SKIP not built (it needs linux-drm-syncobj-v1.xml)"
	fi
else
	nok "weston $ver, headless with the GL renderer and weston_capture_v1 (--debug), starts"
	for i in 1 2 3 4 5; do nok "weston (headless) did not start"; done
fi
[ $n -eq $PLAN ] || echo "# ran $n of $PLAN"
exit 0
