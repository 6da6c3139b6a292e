#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Self-test of tests/vm/run against real guest boots, as TAP.

usage: selftest.py --build-dir BUILD

Proves what the rest of the suite relies on: the command's status and its
two streams come back separately, or in order through one pipe when the
runner's stdout and stderr are one file; --param reaches a project module;
a kernel WARN (made on purpose through the
GPU simulator's debug ioctl) or a "released with pending signals" line fails
a run whose command succeeded; a hung guest is killed at --timeout with
status 124; SIGINT kills the guest; a guest that dies before running
anything of ours is booted once more, only once.  No QEMU process may
outlive any of it.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.path.join(HERE, "run")
count = failed = 0


def ok(cond, name, diag=""):
    global count, failed
    count += 1
    failed += not cond
    print(f"{'ok' if cond else 'not ok'} {count} {name}", flush=True)
    if not cond and diag:
        for line in diag.strip().splitlines()[-25:]:
            print("# " + line, flush=True)


def qemu_children(marker):
    """QEMU processes whose command line mentions marker (our results dir)."""
    out = subprocess.run(["ps", "-eo", "pid=,stat=,args="], capture_output=True,
                         text=True).stdout
    return [line for line in out.splitlines()
            if "qemu-system" in line and marker in line and " Z" not in line]


def run(results, *argv, timeout=300):
    cmd = [RUN, "--results", results] + list(argv)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    args = ap.parse_args()
    build = os.path.realpath(args.build_dir)
    base = os.path.join(build, "vm-runs", f"selftest-{os.getpid()}")
    warn_prog = os.path.join(build, "tests", "kfdsim_warn")
    print("TAP version 13")
    print("1..13", flush=True)

    r = os.path.join(base, "status")
    p = run(r, "--bare", "--", "sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 7")
    ok(p.returncode == 7, "run_exit_status_propagates", p.stderr)
    ok(p.stdout == "to-stdout\n" and "to-stderr\n" in p.stderr and
       "to-stdout" not in p.stderr, "run_streams_separate", p.stdout + p.stderr)
    ok(not qemu_children(r), "run_no_qemu_left_after_exit")

    # One file for both streams (as 'run ... >log 2>&1'): CMD's order kept.
    r = os.path.join(base, "merged")
    p = subprocess.run([RUN, "--results", r, "--bare", "--", "sh", "-c",
                        "for i in 1 2 3; do echo out$i; echo err$i >&2; done"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    lines = [x for x in p.stdout.splitlines() if re.fullmatch(r"(out|err)\d", x)]
    ok(p.returncode == 0 and lines == ["out1", "err1", "out2", "err2", "out3", "err3"],
       "run_one_file_keeps_order", p.stdout)

    # --param: kfdsync loaded with it (no amdgpu, no display: a quick boot).
    r = os.path.join(base, "param")
    if os.path.exists(os.path.join(build, "kernel", "6.1", "kmod", "kfdsync.ko")):
        p = run(r, "--build-dir", build, "--no-kfd", "--vga", "none",
                "--param", "kfdsync.watchdog_ms=1234", "--param", "kfdsync.hooks=0",
                "--", "cat", "/sys/module/kfdsync/parameters/watchdog_ms",
                "/sys/module/kfdsync/parameters/hooks")
        ok(p.returncode == 0 and p.stdout == "1234\nN\n", "run_param_reaches_module",
           p.stdout + p.stderr)
    else:
        print(f"ok {count + 1} run_param_reaches_module # SKIP kfdsync.ko not built")
        globals()["count"] += 1
    p = run(r, "--bare", "--param", "nosuch.x=1", "--", "true")
    ok(p.returncode == 125 and "does not load module 'nosuch'" in p.stderr,
       "run_param_unknown_module_refused", p.stderr)

    r = os.path.join(base, "kmsg")
    p = run(r, "--bare", "--", "sh", "-c",
            "echo 'kfdsync: fence x released with pending signals' > /dev/kmsg")
    ok(p.returncode == 1 and "released with pending signals" in p.stderr,
       "run_fails_on_pending_signals_line", p.stderr)

    r = os.path.join(base, "warn")
    if os.path.exists(warn_prog) and os.path.exists(
            os.path.join(build, "kernel", "6.1", "sim", "kfdsim.ko")):
        p = run(r, "--build-dir", build, "--tap", "--", warn_prog)
        ok(p.returncode == 1 and "kernel log has" in p.stderr and
           re.search(r"WARNING: CPU: \d+ PID: \d+ at .*kfdsim_ioctl", p.stderr) and "Bail out!" in p.stdout,
           "run_fails_on_kernel_warn", p.stdout + p.stderr)
    else:
        print(f"ok {count + 1} run_fails_on_kernel_warn # SKIP GPU simulator not built")
        globals()["count"] += 1

    r = os.path.join(base, "timeout")
    t0 = time.monotonic()
    p = run(r, "--bare", "--timeout", "25", "--tap", "--", "sleep", "1000")
    ok(p.returncode == 124 and "did not finish within 25 s" in p.stderr and
       time.monotonic() - t0 < 60, "run_timeout_kills_guest", p.stderr)
    ok(not qemu_children(r), "run_no_qemu_left_after_timeout")

    # A guest that dies before the second stage (here: QEMU cannot even
    # start it) is booted once more, never more, and the run fails.
    r = os.path.join(base, "early")
    p = run(r, "--bare", "--memory", "40", "--timeout", "60", "--", "true")
    ok(p.returncode == 125 and p.stderr.count("booting once more") == 1 and
       os.path.exists(os.path.join(r, "console-first-boot.log")),
       "run_early_death_retried_once", p.stderr)

    r = os.path.join(base, "sigint")
    proc = subprocess.Popen([RUN, "--results", r, "--bare", "--", "sleep", "1000"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(r, "started")) and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    ok(proc.returncode == 130, "run_sigint_stops", err)
    time.sleep(0.5)
    ok(not qemu_children(r), "run_no_qemu_left_after_sigint")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
