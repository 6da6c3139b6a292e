#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kfdsync-wayland-client on weston's drm backend with kiosk-shell, in the
# guest: the client's output on the (bochs) screen, in a screendump.
#
# usage: wayland_drm.sh CLIENT
#
# weston needs udev's view of the devices (its seat): udevd runs for the
# test (SYSTEMD_IGNORE_CHROOT=1, the guest's root is a chroot) and the
# direct launcher takes a VT. The pixman renderer offers no dmabuf and the
# drm backend no explicit sync without EGL_ANDROID_native_fence_sync, so
# the client falls back to shm. Prints TAP.

CLIENT=$1
PLAN=5
FR=3
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() {
	d=$1; shift
	if "$@"; then ok "$d"; else nok "$d"; return 1; fi
}
diag() { sed 's/^/# /' "$@"; }
skip_all() {
	for i in $(seq $PLAN); do echo "ok $i # SKIP $*"; done
	exit 0
}

echo "TAP version 13"
echo "1..$PLAN"
command -v weston >/dev/null || skip_all "weston is not installed"
[ -x /lib/systemd/systemd-udevd ] || skip_all "systemd-udevd is not installed"
connected=
for s in /sys/class/drm/card*-*/status; do
	[ "$(cat "$s" 2>/dev/null)" = connected ] && connected=$s
done
[ -n "$connected" ] || skip_all "no connected KMS output (boot with --vga std)"
# The screen QEMU dumps is the boot VGA's (bochs); with virtio-gpu there is
# a second KMS device that weston could otherwise pick.
card=${connected%/*}
card=${card##*/}
card=${card%%-*}
for c in /sys/class/drm/card[0-9]*; do
	case ${c##*/} in *-*) continue ;; esac
	[ "$(cat "$c/device/boot_vga" 2>/dev/null)" = 1 ] && card=${c##*/}
done
# The direct launcher takes the active VT, so weston's session is active.
vt=$(cat /sys/class/tty/tty0/active 2>/dev/null)
vt=${vt#tty}
[ -n "$vt" ] || skip_all "no virtual terminal for weston's direct launcher"
[ -n "${KFDSYNC_RESULTS:-}" ] || skip_all "not in a tests/vm/run guest (no screendump)"

export XDG_RUNTIME_DIR=$(mktemp -d /tmp/kfdsync-wl-drm.XXXXXX)
chmod 700 "$XDG_RUNTIME_DIR"
T=$XDG_RUNTIME_DIR
WPID= UDEVD= EVDEV=
cleanup() {
	[ -n "$WPID" ] && kill "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
	[ -n "$UDEVD" ] && udevadm control --exit 2>/dev/null
	[ -n "$UDEVD" ] && pgrep -x systemd-udevd >/dev/null &&
		echo "# systemd-udevd still running after udevadm control --exit"
	[ -n "$EVDEV" ] && modprobe -r evdev 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# kiosk-shell maps a window only for a seat with input devices: evdev gives
# weston (libinput) the guest's keyboard and mouse.
EVDEV=
if ! grep -q "^evdev " /proc/modules && modprobe evdev 2>/dev/null; then
	EVDEV=1
fi
if ! udevadm control --ping 2>/dev/null; then
	# udevd in a mount namespace of its own where 80-drivers.rules is
	# masked: "add" events must not load modules (modalias) into the
	# shared guest, which later tests would inherit.
	SYSTEMD_IGNORE_CHROOT=1 unshare -m sh -c '
		mount -t tmpfs kfdsync-udev /etc/udev/rules.d &&
		: >/etc/udev/rules.d/80-drivers.rules &&
		exec /lib/systemd/systemd-udevd --daemon' 2>"$T/udevd.log"
	UDEVD=1
	udevadm trigger --action=add
	udevadm settle --timeout=60
fi

weston --backend=drm-backend.so --shell=kiosk-shell.so --use-pixman \
	--continue-without-input --tty="$vt" --drm-device="$card" \
	--no-config --idle-time=0 \
	--socket=drm >"$T/weston.log" 2>&1 &
WPID=$!
for i in $(seq 240); do
	[ -S "$T/drm" ] && break
	kill -0 $WPID 2>/dev/null || break
	sleep 0.5
done
if [ ! -S "$T/drm" ]; then
	nok "weston (drm backend on $card, kiosk-shell, tty$vt) starts"
	diag "$T/weston.log"
	exit 0
fi
ok "weston (drm backend on $card, kiosk-shell, tty$vt) starts"

# The window stays up (--linger-ms) until the screendump is taken.
WAYLAND_DISPLAY=drm ASAN_OPTIONS=detect_leaks=0 "$CLIENT" --frames $FR \
	--compute-ms 100 --timeout-ms 60000 --size 640x480 --linger-ms 60000 >"$T/client" 2>&1 &
CPID=$!
for i in $(seq 240); do
	grep -q '^summary:' "$T/client" && break
	kill -0 $CPID 2>/dev/null || break
	sleep 0.5
done
diag "$T/client"
fell_back() {
	grep -q "zwp_linux_explicit_synchronization_v1 no" "$T/client" &&
		grep -q "^sync path: shm " "$T/client"
}
check "no explicit sync on the drm backend: the client falls back to shm" fell_back
if ! check "every frame presented after its fence" \
	grep -q "^summary: path=shm frames=$FR presented=$FR discarded=0 early=0" "$T/client"; then
	tail -n 25 "$T/weston.log" | diag
fi

png=$("$KFDSYNC_SOURCE_ROOT/tests/vm/screendump" wayland 2>&1)
check "screendump taken" test -f "$png"
kill $CPID 2>/dev/null
wait $CPID 2>/dev/null

# The last frame (frame FR-1) fills the window with its colour, centred by
# kiosk-shell: the centre of the screen must show it.
check "the screen shows the client's last frame (centre pixel 0x2050d0)" \
	python3 - "$png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    ln, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + ln]
    if typ == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat += body
    pos += 12 + ln
w, h, depth, ctype = hdr[0], hdr[1], hdr[2], hdr[3]
bpp = {2: 3, 6: 4}[ctype]
assert depth == 8
raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
x, y = w // 2, h // 2
px = tuple(rows[y][x * bpp:x * bpp + 3])
print("# screen %dx%d, centre pixel %02x%02x%02x" % ((w, h) + px))
sys.exit(0 if px == (0x20, 0x50, 0xd0) else 1)
PY
[ $n -eq $PLAN ] || echo "# ran $n of $PLAN"
exit 0
