#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""display_kms: kfdsync-kms on the guest's display, checked on the screen.

usage: display_kms.py KFDSYNC_KMS

Runs inside a tests/vm/run guest (bochs-drm with --vga std, cirrus with
--vga cirrus) and prints TAP. The example runs in late-GPU mode and asks
the runner for screendumps at two moments of each late frame: right after
the frame was committed and fully drawn into its buffer while its compute
fence was still pending ("pending"), and after its commit completed
("shown"). The PNGs are read back here (a small PNG decoder below) and
their pixels compared with the frame colours:

  - pending: the screen still shows the previous frame, although the new
    buffer is completely drawn; a display that did not wait for the fence
    would already show the new one. The example checks the fence was
    pending both before and after the capture; that, not a sleep, orders
    the capture before the signal.
  - shown: the new frame (the last one; the pending capture of frame N
    shows frame N-1 after its commit).

The example's per-frame trace (--verbose) gives CLOCK_MONOTONIC times
recorded by the kernel (fence signal timestamps) and by the simulated GPU
(a RELEASE_MEM timestamp right after the WAIT_REG_MEM gate): frame N's
compute must start only after commit N-1's out-fence signalled (frame N-2
off the screen), and it must have seen the gate word at N or more.

Then the failure paths: implicit sync (works on cirrus, refused with a
clear message on bochs, which cannot share scanout buffers), a compute that never
finishes (a clear message and exit status 3, and the display works again
for the next run), and devices that are not KMS displays.
"""

import os
import re
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png import screen_colour  # noqa: E402

KMS = sys.argv[1] if len(sys.argv) > 1 else ""
SOURCE = os.environ.get("KFDSYNC_SOURCE_ROOT", "")
RESULTS = os.environ.get("KFDSYNC_RESULTS", "")
SCREENDUMP = os.path.join(SOURCE, "tests/vm/screendump")
SIZE = "640x480"
HOLD_MS = 3000       # compute time of a late frame: the window of its capture
HOLD_MS_MAX = 24000  # a slower guest (the debug kernel) doubles it up to this

ORDER = ["blue", "green", "red", "yellow", "magenta", "cyan"]  # kfdsync-kms's frames

count = 0
failed = 0


def ok(cond, name, diag=None):
    global count, failed
    count += 1
    failed += not cond
    print(f"{'ok' if cond else 'not ok'} {count} {name}", flush=True)
    if not cond and diag:
        for line in str(diag).splitlines()[-40:]:
            print(f"# {line}", flush=True)
    return cond


def skip(name, reason):
    global count
    count += 1
    print(f"ok {count} {name} # SKIP {reason}", flush=True)


# ---- running the example ----

def run(args, prefix=None, timeout=120):
    """Run kfdsync-kms; screendumps (if @prefix) are named PREFIX-frameN-*."""
    cmd = [KMS] + args
    if "--device" in args and "--size" not in args:
        cmd += ["--size", SIZE]  # small: quicker captures under TCG
    wrapper = None
    if prefix:
        # kfdsync-kms runs "CMD NAME"; prefix the names so runs do not collide.
        fd, wrapper = tempfile.mkstemp(prefix="screendump-", dir="/tmp")
        os.write(fd, f'#!/bin/sh\nexec "{SCREENDUMP}" "{prefix}-$1"\n'.encode())
        os.close(fd)
        os.chmod(wrapper, stat.S_IRWXU)
        cmd += ["--screendump", wrapper]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        out, errout, code = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, errout, code = str(e.stdout or ""), str(e.stderr or ""), "timeout"
    finally:
        if wrapper:
            os.unlink(wrapper)
    print(f"# kfdsync-kms {' '.join(args)}: status {code} after "
          f"{time.monotonic() - start:.1f} s", flush=True)
    return code, out, errout


TRACE_RE = re.compile(
    r"^frame (\d+) buffer (\d+) color (\w+): (?:gate presented>=(\d+) opened ([-+\d.]+) ms|no gate[^,]*), "
    r"submitted ([-+\d.]+) ms, compute started ([-+\d.]+) ms seeing presented=(\d+), "
    r"ready ([-+\d.]+) ms, shown ([-+\d.]+) ms$", re.M)


def traces(out):
    frames = {}
    for m in TRACE_RE.finditer(out):
        frames[int(m.group(1))] = {
            "color": m.group(3),
            "gate": int(m.group(4)) if m.group(4) else None,
            "gate_ms": float(m.group(5)) if m.group(5) else None,
            "submit_ms": float(m.group(6)), "start_ms": float(m.group(7)),
            "seen": int(m.group(8)), "ready_ms": float(m.group(9)),
            "shown_ms": float(m.group(10)),
        }
    return frames


def check_late_run(tag, device, mode, frames=3):
    """A late-GPU run with screendumps: pending shows N-1, shown shows N."""
    prefix = f"{tag}-{mode}"
    hold = HOLD_MS
    while True:
        code, out, errout = run(["--device", device, "--mode", mode, "--late", "--frames",
                                 str(frames), "--hold-ms", str(hold), "--verbose"], prefix)
        # kfdsync-kms says when a frame's compute ended before its capture
        # did: no conclusion possible, so give the captures more time.
        if "inconclusive" not in out or hold >= HOLD_MS_MAX:
            break
        hold *= 2
        print(f"# captures inconclusive: again with --hold-ms {hold}", flush=True)
    log = out + errout
    ok(code == 0, f"{tag}_{mode}_late_run_exit_0 (status {code})", log)
    tr = traces(out)
    ok(sorted(tr) == list(range(frames)), f"{tag}_{mode}_trace_every_frame", log)

    for n in range(1, frames):
        claim = f"frame {n} pending: screen captured while its compute fence was pending " \
                f"(the frame fully drawn in its buffer)"
        got = screen_colour(os.path.join(RESULTS, f"{prefix}-frame{n}-pending.png"))
        want = ORDER[(n - 1) % len(ORDER)]
        ok(claim in out and got == want,
           f"{tag}_{mode}_frame{n}_pending_keeps_frame{n - 1} (screen {got}, want {want})", log)
    # The last frame, once its commit is done (in late mode the pending
    # capture of frame N is also the capture of frame N-1 shown).
    n = frames - 1
    got = screen_colour(os.path.join(RESULTS, f"{prefix}-frame{n}-shown.png"))
    want = ORDER[n % len(ORDER)]
    ok(got == want and tr.get(n, {}).get("color") == want,
       f"{tag}_{mode}_frame{n}_shown (screen {got}, want {want})", log)
    check_ordering(f"{tag}_{mode}_late", tr, frames, log, late=True)


def check_ordering(name, tr, frames, log, late=False):
    """Display after compute; compute of N after commit N-1 (its gate)."""
    bad = [n for n, t in tr.items() if t["shown_ms"] < t["ready_ms"]]
    ok(len(tr) == frames and not bad, f"{name}_shown_after_compute_fence", f"frames {bad}\n{log}")
    gated = [n for n in tr if n >= 1]
    bad = [n for n in gated
           if tr[n]["gate"] != n or tr[n]["seen"] < n or tr[n]["start_ms"] < tr[n]["gate_ms"]
           or tr[n]["gate_ms"] != tr[n - 1]["shown_ms"]]
    ok(gated and not bad,
       f"{name}_compute_starts_after_previous_out_fence ({len(gated)} gated frames)",
       f"frames {bad}\n{log}")
    if late:
        # The queue got frame N while commit N-1 was still waiting for its
        # compute: the GPU, not the CPU, waited on the display.
        # (From frame 2 on: frame 0 is not late, its commit may be done
        # before frame 1 is submitted.)
        late = [n for n in gated if n >= 2]
        waited = [n for n in late if tr[n]["submit_ms"] < tr[n]["gate_ms"]]
        ok(late and waited == late, f"{name}_queue_waited_on_gate_word (frames {waited})",
           log)


def card_of(driver):
    """/dev/dri/cardN of a PCI display driver, or None."""
    base = "/sys/class/drm"
    for name in sorted(os.listdir(base)):
        if not re.fullmatch(r"card\d+", name):
            continue
        link = os.path.join(base, name, "device", "driver")
        if os.path.islink(link) and os.path.basename(os.readlink(link)) == driver:
            return f"/dev/dri/{name}"
    return None


def main():
    if os.environ.get("KFDSYNC_VM") != "1":
        print("TAP version 13\n1..0 # SKIP runs in the test guest (tests/vm/run)")
        return 0
    for var in ("KFDSYNC_KFD_UNUSABLE", "KFDSYNC_SIM_UNUSABLE"):
        if os.environ.get(var):
            # The compute is the simulator's, which needs amdkfd's
            # interrupt path.
            print(f"TAP version 13\n1..0 # SKIP {os.environ[var]}")
            return 0
    print("TAP version 13", flush=True)
    if not os.access(KMS, os.X_OK):
        print(f"1..1\nBail out! kfdsync-kms not found at '{KMS}'")
        return 1

    # cirrus is cirrus-qemu from Linux 6.15 on.
    bochs, cirrus = card_of("bochs-drm"), card_of("cirrus") or card_of("cirrus-qemu")
    device, tag = (bochs, "bochs") if bochs else (cirrus, "cirrus")
    if not device:
        print("1..1\nBail out! no bochs-drm or cirrus display: boot with --vga std or cirrus")
        return 1
    print(f"# display: {tag} at {device}", flush=True)

    # Explicit sync, late GPU: what the display shows, and the gate.
    check_late_run(tag, device, "explicit")

    # Implicit sync: the fence on the dma-buf. cirrus honours it. bochs
    # cannot share scanout buffers (no PRIME on 6.1; on 6.12 an exported
    # VRAM buffer makes the next scanout WARN), and the example must say so.
    if tag == "cirrus":
        check_late_run(tag, device, "implicit")
    else:
        code, out, errout = run(["--device", device, "--mode", "implicit", "--frames", "2"])
        ok(code == 2 and "cannot share its scanout buffers as dma-bufs" in errout,
           f"{tag}_implicit_refused_cannot_share_buffers (status {code})", out + errout)

    # Many quick frames: the gate holds every frame, not just late ones.
    code, out, errout = run(["--device", device, "--frames", "12", "--compute-ms", "2",
                             "--verbose"])
    ok(code == 0, f"{tag}_explicit_12_frames_exit_0 (status {code})", out + errout)
    check_ordering(f"{tag}_explicit_12", traces(out), 12, out + errout)

    # A compute that never finishes: clear message, status 3, and the CRTC
    # is not left blocked (the next run works).
    code, out, errout = run(["--device", device, "--frames", "4", "--hang-at", "1",
                             "--timeout-ms", "3000"])
    ok(code == 3 and "frame 1: its compute did not finish within 3000 ms" in errout,
       f"{tag}_hung_compute_times_out_status_3 (status {code})", out + errout)
    code, out, errout = run(["--device", device, "--frames", "3"])
    ok(code == 0, f"{tag}_display_usable_after_hung_compute (status {code})", out + errout)

    # Bad inputs.
    vgem = os.path.isdir("/sys/module/vgem")
    for name, args, want in [
        ("device_missing", ["--device", "/dev/dri/card99"], "cannot open /dev/dri/card99"),
        ("device_not_drm", ["--device", "/dev/null"], "/dev/null is not a DRM device"),
        ("driver_unknown", ["--device", "nosuchdriver"],
         'no KMS device with driver "nosuchdriver"'),
        ("device_vgem_no_kms", ["--device", "vgem"], "is not a KMS"),
        ("size_not_offered", ["--device", device, "--size", "123x45"], "has no 123x45 mode"),
        ("frames_zero", ["--frames", "0"], "invalid value '0' for --frames"),
        ("gpu_real_no_gpu", ["--device", device, "--gpu", "real"],
         "there is no AMD GPU here"),
    ]:
        if name == "device_vgem_no_kms" and not vgem:
            skip(f"{tag}_bad_{name}", "vgem is not loaded")
            continue
        code, out, errout = run(args)
        ok(code == 2 and want in errout and "Sanitizer" not in errout,
           f"{tag}_bad_{name}_status_2 (status {code})", out + errout)

    print(f"1..{count}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
