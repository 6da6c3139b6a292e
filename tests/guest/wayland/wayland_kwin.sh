#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kfdsync-wayland-client against KWin 6.3 (kwin_wayland --virtual), with
# wp_linux_drm_syncobj_v1, in the 6.12 guest chrooted in the trixie root
# (tests/vm/run --root trixie, virtio-gpu). Prints TAP.
#
# usage: wayland_kwin.sh CLIENT [EXAMPLE]
#
# What it checks, from KWin's own screenshots (org.kde.KWin.ScreenShot2),
# never from presentation timestamps:
#   - KWin offers wp_linux_drm_syncobj_manager_v1 and the client takes the
#     syncobj path (dumb buffers of virtio-gpu, a timeline per buffer);
#   - a frame whose fence is held (the simulated GPU's compute takes
#     --hold-ms, its pixels already final in the buffer) is not shown: the
#     screen keeps the previous frame, and shows the new one after;
#   - the release point gates the next compute: it becomes a sync_file that
#     kfdsync turns into the gate the buffer's next compute waits for
#     (WAIT_REG_MEM), and the queue passes the gate only after it signalled;
#   - a fence that ends with an error (-ETIMEDOUT) fails the frame with a
#     clear message;
#   - the same for EXAMPLE (kfdsync-wayland, examples/display/wayland), the
#     short client, which has no test hooks (the client above has them):
#     syncobj path in the dispatch form, a frame not shown while its (long)
#     compute runs and shown after, a compute longer than --timeout-ms fails
#     its frame.
#
# How KWin runs here, and why:
#   - udevd (SYSTEMD_IGNORE_CHROOT=1, "add" events for DRM only) and a D-Bus
#     session (dbus-run-session); KWIN_SCREENSHOT_NO_PERMISSION_CHECKS=1 lets
#     this script's screenshot tool in.
#   - vgem is unloaded: KWin's virtual backend takes the first render node,
#     and vgem has no syncobjs.
#   - KWin's private /dev/dri holds virtio-gpu's *primary* node under a
#     render node's name. QEMU's virtio-gpu here has no 3D, so Mesa renders
#     with llvmpipe on kms_swrast, which allocates dumb buffers, and DRM
#     allows those on primary nodes only: on the render node KWin picks,
#     every allocation fails and KWin never draws a frame.
#   - GALLIUM_OVERRIDE_CPU_CAPS=sse4.1: llvmpipe's AVX2 code segfaults under
#     QEMU's TCG (-cpu max) as soon as it samples a client's texture.

CLIENT=$1
EXAMPLE=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
PLAN=20
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); echo "not ok $n - $*"; }
check() { # check DESCRIPTION COMMAND...
	check_desc=$1; shift
	if "$@"; then ok "$check_desc"; else nok "$check_desc"; return 1; fi
}
diag() { sed 's/^/# /' "$@"; }
skip_all() {
	echo "1..$PLAN"
	for i in $(seq $PLAN); do echo "ok $i # SKIP $*"; done
	exit 0
}

echo "TAP version 13"
[ -x "$CLIENT" ] || { echo "1..$PLAN"; echo "Bail out! no client at '$CLIENT'"; exit 1; }
command -v kwin_wayland >/dev/null ||
	skip_all "kwin_wayland is not installed (run in the trixie root: tests/vm/run --root trixie)"
command -v dbus-run-session >/dev/null || skip_all "dbus-run-session is not installed"
[ -x /usr/lib/systemd/systemd-udevd ] || skip_all "systemd-udevd is not installed"
VDEV=
for c in /sys/class/drm/card*; do
	case ${c##*/} in *-*) continue ;; esac
	case $(readlink -f "$c"/device/virtio*/driver 2>/dev/null) in
	*/virtio_gpu) VDEV=$(cat "$c/dev"); VCARD=${c##*/} ;;
	esac
done
[ -n "$VDEV" ] || skip_all "no virtio-gpu (boot with --qemu-arg=-device --qemu-arg=virtio-gpu-pci)"
[ -c /dev/kfdsync_timeline ] || skip_all "kfdsync.ko is not loaded"
[ -c /dev/kfdsim ] || skip_all "the GPU simulator kfdsim.ko is not loaded"
# The simulated GPU needs amdkfd (the runner says when /dev/kfd cannot be opened).
[ -z "${KFDSYNC_KFD_UNUSABLE:-}" ] || skip_all "$KFDSYNC_KFD_UNUSABLE"
[ -n "${KFDSYNC_RESULTS:-}" ] || skip_all "not in a tests/vm/run guest"
echo "1..$PLAN"

XDG_RUNTIME_DIR=$(mktemp -d /tmp/kfdsync-kwin.XXXXXX)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
T=$XDG_RUNTIME_DIR
UDEVD=
cleanup() {
	[ -n "$UDEVD" ] && udevadm control --exit 2>/dev/null
}
trap cleanup EXIT

# vgem would be KWin's render node, and has no syncobjs.
modprobe -r vgem 2>/dev/null
if ! udevadm control --ping 2>/dev/null; then
	# "add" events for DRM devices only: no module autoloading.
	SYSTEMD_IGNORE_CHROOT=1 /usr/lib/systemd/systemd-udevd --daemon 2>"$T/udevd.log"
	UDEVD=1
	udevadm trigger --action=add --subsystem-match=drm
	udevadm settle --timeout=60
fi

# The rest runs inside one D-Bus session (KWin's screenshot interface).
export CLIENT EXAMPLE HERE VDEV VCARD T PLAN
export KWIN_SCREENSHOT_NO_PERMISSION_CHECKS=1 GALLIUM_OVERRIDE_CPU_CAPS=sse4.1
export ASAN_OPTIONS=detect_leaks=0
dbus-run-session -- sh "$HERE/wayland_kwin_session.sh"
