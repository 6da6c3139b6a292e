#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""kfdsync CLI host tests: usage, messages and exit codes without the module.

usage: cli_unit.py PATH_TO_KFDSYNC
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CLI = sys.argv[1]
# meson's project version, which kfdsync --version prints.
VERSION = re.escape(sys.argv[2]) if len(sys.argv) > 2 else r"\d+\.\d+\.\d+"
NO_MODULE = not os.path.exists("/dev/kfdsync")
# A check that cannot run here gives SKIP as its result; anything else is
# judged by its truth (a failed re.search is None: a failure, not a skip).
SKIP = "skip"

# (name, argv, expected status, regex on stdout+stderr, needs no module)
CASES = [
    ("cli_no_args_usage", [], 2, r"usage: kfdsync COMMAND", False),
    ("cli_help", ["--help"], 0, r"commands:.*info.*inspect.*wait.*merge.*monitor", False),
    ("monitor_help", ["monitor", "--help"], 0, r"usage: kfdsync monitor .*--input FILE", False),
    ("cli_version", ["--version"], 0, r"^kfdsync " + VERSION + r" \(ABI 1\)", False),
    ("cli_unknown_command", ["frobnicate"], 2, r"unknown command 'frobnicate'", False),
    ("info_help", ["info", "--help"], 0, r"usage: kfdsync info", False),
    ("info_extra_arg", ["info", "extra"], 2, r"usage: kfdsync info", False),
    ("info_without_module", ["info"], 1,
     r"kfdsync: kfdsync module not loaded \(no /dev/kfdsync\)", True),
    ("info_json_without_module", ["info", "--json"], 1, r"module not loaded", True),
    ("inspect_no_args", ["inspect"], 2, r"usage: kfdsync inspect", False),
    ("inspect_not_sync_file", ["inspect", "0"], 1, r"0: not a sync_file", False),
    ("inspect_closed_fd", ["inspect", "77"], 1,
     r"77: not an open file descriptor of this process", False),
    ("inspect_bad_arg", ["inspect", "stdin"], 1,
     r"stdin: expected a file descriptor number or /proc/PID/fd/N", False),
    ("inspect_no_process", ["inspect", "/proc/999999999/fd/3"], 1,
     r"/proc/999999999/fd/3: no process 999999999", False),
    ("inspect_no_such_fd", ["inspect", f"/proc/{os.getpid()}/fd/999"], 1,
     r"no such file descriptor", False),
    ("wait_bad_timeout", ["wait", "--timeout", "soon", "0"], 2,
     r"--timeout: expected milliseconds, got 'soon'", False),
    ("wait_negative_timeout", ["wait", "--timeout", "-5", "0"], 2, r"expected milliseconds",
     False),
    ("list_extra_arg", ["list", "extra"], 2, r"usage: kfdsync list", False),
    ("list_without_module", ["list"], 1,
     r"kfdsync module not loaded \(no /dev/kfdsync\)", True),
    ("timeline_no_command", ["timeline"], 2, r"usage: kfdsync timeline", False),
    ("timeline_bad_count", ["timeline", "--count", "0", "--", "true"], 2,
     r"--count: at least 1", False),
    ("timeline_count_too_big", ["timeline", "--count", "65", "--", "true"], 2,
     r"--count: expected a number up to 64", False),
    ("timeline_count_not_number", ["timeline", "--count", "x", "--", "true"], 2,
     r"\Akfdsync: --count: expected a number up to 64, got 'x'\n\Z", False),
    ("timeline_without_module", ["timeline", "--", "true"], 1,
     r"kfdsync module not loaded \(no /dev/kfdsync_timeline\)", True),
    ("merge_help", ["merge", "--help"], 0,
     r"usage: kfdsync merge .*FENCE FENCE.*-- CMD", False),
    ("merge_one_fence", ["merge", "0"], 2, r"merge needs at least two sync_files", False),
    ("merge_not_sync_file", ["merge", "0", "0"], 1, r"kfdsync: 0: not a sync_file", False),
    ("merge_closed_fd", ["merge", "77", "0"], 1,
     r"77: not an open file descriptor of this process", False),
    ("merge_no_command", ["merge", "0", "0", "--"], 2, r"no command after '--'", False),
    ("merge_json_with_command", ["merge", "--json", "0", "0", "--", "true"], 2,
     r"--json makes sense only without a command", False),
    ("merge_fd_without_command", ["merge", "--fd", "5", "0", "0"], 2,
     r"--fd makes sense only with a command", False),
    ("merge_fd_too_big", ["merge", "--fd", "2000", "0", "0", "--", "true"], 2,
     r"--fd: expected a number up to 1023, got '2000'", False),
    ("merge_name_too_long", ["merge", "--name", "n" * 32, "0", "0"], 2,
     r"--name: at most 31 bytes", False),
    ("wait_not_sync_file", ["wait", "--timeout", "10", "0"], 1, r"0: not a sync_file", False),
]


# 'list --proc DIR --dev DIR' on a fake /proc tree: fds are symlinks to
# character devices (/dev/null stands for /dev/kfdsync, /dev/zero for
# /dev/kfdsync_timeline, matched by st_rdev), fdinfo files in the module's
# format (include/uapi/linux/kfdsync*.h, "fdinfo").
CTX_KEYS = ["context", "tgid", "uid", "source", "events", "pending", "imports",
            "max-events", "max-fences", "max-imports", "watchdog-ms", "watchdog-max-ms"]
CTX_COLS = ["id", "tgid", "comm", "source", "events", "pending", "max_events", "max_fences",
            "watchdog_ms", "watchdog_max_ms", "imports", "max_imports", "uid"]


def ctx_fdinfo(cid, tgid, events):
    """A context's fdinfo, and its contexts row without tgid and comm."""
    vals = {"context": cid, "tgid": tgid, "uid": "1000", "source": "hooks",
            "events": str(len(events)), "pending": "1", "imports": "0",
            "max-events": "4096", "max-fences": "1024", "max-imports": "1024",
            "watchdog-ms": "10000", "watchdog-max-ms": "60000"}
    text = "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t5\n"
    text += "".join(f"kfdsync-{k}:\t{vals[k]}\n" for k in CTX_KEYS)
    for eid, age in events:
        text += (f"kfdsync-event-{eid}:\tsource=hooks age={age} slot=0x{age:016x} "
                 "pending=0 error=0 last=1\n")
    row = {c: vals[{"id": "context"}.get(c, c.replace("_", "-"))] for c in CTX_COLS
           if c not in ("tgid", "comm")}
    return text, row


def tl_fdinfo(tid, name_escaped):
    return ("pos:\t0\nflags:\t02\n"
            f"kfdsync-timeline:\t{tid}\nkfdsync-fence-context:\t9{tid}\nkfdsync-value:\t3\n"
            "kfdsync-pending:\t1\nkfdsync-max-fences:\t1024\nkfdsync-watchdog-ms:\t10000\n"
            f"kfdsync-name:\t{name_escaped}\n")


def proc_tree(d):
    """A fake /proc and /dev under @d; returns what 'list --json' must print and the
    number of processes that are not readable (0 as root: modes do not stop root)."""
    dev, proc = os.path.join(d, "dev"), os.path.join(d, "proc")
    os.makedirs(dev)
    os.symlink("/dev/null", os.path.join(dev, "kfdsync"))
    os.symlink("/dev/zero", os.path.join(dev, "kfdsync_timeline"))
    decoy = os.path.join(d, "decoy", "kfdsync")
    os.makedirs(os.path.dirname(decoy))
    open(decoy, "w", encoding="utf-8").close()

    def process(pid, comm, fds):
        base = os.path.join(proc, str(pid))
        os.makedirs(os.path.join(base, "fd"))
        os.makedirs(os.path.join(base, "fdinfo"))
        if comm is not None:
            with open(os.path.join(base, "comm"), "w", encoding="utf-8") as f:
                f.write(comm + "\n")
        for fd, (target, info) in fds.items():
            os.symlink(target, os.path.join(base, "fd", str(fd)))
            if info is not None:
                with open(os.path.join(base, "fdinfo", str(fd)), "w", encoding="utf-8") as f:
                    f.write(info)
        return base

    c5, r5 = ctx_fdinfo("5", "100", [(7, 2), (3, 0)])
    c6, r6 = ctx_fdinfo("6", "101", [])
    c12, r12 = ctx_fdinfo("12", "107", [])
    # gst 1: a space and a digit; its fork child 103 holds the same context.
    process(100, "gst 1", {3: ("/dev/null", c5), 4: ("/dev/full", "pos:\t0\n"),
                           5: (decoy, "pos:\t0\n"),
                           6: ("/dev/zero", tl_fdinfo("2", "kfdsync-timeline:100:gst\\0401"))})
    process(103, "gst 1", {3: ("/dev/null", c5)})
    process(101, "worker2", {3: ("/dev/null", c6), 4: ("/dev/null", c6)})
    process(102, "a\nb", {9: ("/dev/zero", tl_fdinfo("1", "kfdsync-timeline:102:a\\012b"))})
    # Vanished mid-scan: fd dir gone; fdinfo gone; comm gone.
    os.makedirs(os.path.join(proc, "104"))
    process(105, "gone", {3: ("/dev/null", None)})
    process(106, None, {3: ("/dev/null", c6)})
    # Not readable: the fd directory, or one fdinfo (other users' processes).
    c13, r13 = ctx_fdinfo("13", "108", [])
    os.chmod(process(107, "other", {3: ("/dev/null", c12)}) + "/fd", 0)
    os.chmod(process(108, "other2", {3: ("/dev/null", c13)}) + "/fdinfo/3", 0)
    os.symlink("100", os.path.join(proc, "self"))
    os.makedirs(os.path.join(proc, "sys"))

    want = {
        "contexts": [dict(r5, tgid="100", comm="gst 1"), dict(r6, tgid="101", comm="worker2")],
        "events": [{"ctx": "5", "tgid": "100", "source": "hooks", "id": str(eid), "age": str(age),
                    "slot": f"0x{age:016x}", "pending": "0", "error": "0", "last": "1"}
                   for eid, age in ((3, 0), (7, 2))],
        "timelines": [
            {"id": "1", "tgid": "102", "comm": "a\nb", "context": "91", "value": "3",
             "pending": "1", "max_fences": "1024", "watchdog_ms": "10000",
             "name": "kfdsync-timeline:102:a\nb"},
            {"id": "2", "tgid": "100", "comm": "gst 1", "context": "92", "value": "3",
             "pending": "1", "max_fences": "1024", "watchdog_ms": "10000",
             "name": "kfdsync-timeline:100:gst 1"}],
    }
    # Who reads decides: modes do not stop root.
    unreadable = 2
    if os.geteuid() == 0:
        unreadable = 0
        want["contexts"] += [dict(r12, tgid="107", comm="other"),
                             dict(r13, tgid="108", comm="other2")]
    # Key order is part of the output: the columns' order.
    want["contexts"] = [{c: r[c] for c in CTX_COLS} for r in want["contexts"]]
    # Numbers are JSON numbers; the words stay strings.
    want = {t: [{k: v if k in ("comm", "source", "slot", "name") else int(v)
                 for k, v in r.items()} for r in rows] for t, rows in want.items()}
    return proc, dev, want, unreadable


def list_proc_tests():
    results = []
    with tempfile.TemporaryDirectory() as d:
        proc, dev, want, unreadable = proc_tree(d)
        p = subprocess.run([CLI, "list", "--json", "--proc", proc, "--dev", dev],
                           capture_output=True, text=True)
        try:
            got = json.loads(p.stdout)
        except ValueError:
            got = None
        results.append(("list_json_from_fdinfo", p.returncode == 0 and got == want,
                        f"got {got}\nwant {want}\n" + p.stderr))
        results.append(("list_json_key_order",
                        got is not None and [list(r) for r in got["contexts"]] ==
                        [CTX_COLS] * len(want["contexts"]), p.stdout))
        note = f"{unreadable} processes not readable"
        results.append(("list_counts_unreadable_processes",
                        (note in p.stderr) if unreadable else "not readable" not in p.stderr,
                        p.stderr))
        p = subprocess.run([CLI, "list", "--proc", proc, "--dev", dev],
                           capture_output=True, text=True)
        lines = p.stdout.splitlines()
        results.append(("list_table_from_fdinfo",
                        p.returncode == 0 and any(" gst 1 " in x and x.split()[0] == "5"
                                                  for x in lines) and
                        any("a\\012b" in x and "kfdsync-timeline:102:a\\012b" in x
                            for x in lines) and "worker2" in p.stdout,
                        p.stdout + p.stderr))

        # A kfdsync without fdinfo keys, and a bad event line: an error,
        # and --json prints nothing.
        old = os.path.join(proc, "101", "fdinfo", "3")
        os.rename(old, old + ".good")
        with open(old, "w", encoding="utf-8") as f:
            f.write("pos:\t0\nflags:\t02\n")
        p = subprocess.run([CLI, "list", "--json", "--proc", proc, "--dev", dev],
                           capture_output=True, text=True)
        results.append(("list_json_old_module_prints_nothing",
                        p.returncode == 1 and p.stdout == "" and
                        "no 'kfdsync-context' (a kfdsync module without fdinfo keys?)"
                        in p.stderr, repr(p.stdout) + p.stderr))
        with open(old, "w", encoding="utf-8") as f:
            f.write(open(old + ".good", encoding="utf-8").read() +
                    "kfdsync-event-x1:\tsource=hooks\n")
        p = subprocess.run([CLI, "list", "--json", "--proc", proc, "--dev", dev],
                           capture_output=True, text=True)
        results.append(("list_json_failure_prints_nothing",
                        p.returncode == 1 and p.stdout == "" and
                        "unexpected line 'kfdsync-event-x1:" in p.stderr,
                        repr(p.stdout) + p.stderr))
        empty = os.path.join(d, "nodev")
        os.makedirs(empty)
        p = subprocess.run([CLI, "list", "--json", "--proc", proc, "--dev", empty],
                           capture_output=True, text=True)
        results.append(("list_without_module_fixture",
                        p.returncode == 1 and p.stdout == "" and
                        f"kfdsync module not loaded (no {empty}/kfdsync)" in p.stderr,
                        repr(p.stdout) + p.stderr))
        p = subprocess.run([CLI, "list", "--proc", empty, "--dev", dev],
                           capture_output=True, text=True)
        results.append(("list_empty_proc_none",
                        p.returncode == 0 and p.stdout.count("(none)") == 3,
                        p.stdout + p.stderr))
    p = subprocess.run([CLI, "list", "--proc", "/nonexistent", "--dev", "/dev"],
                       capture_output=True, text=True)
    results.append(("list_missing_proc",
                    p.returncode == 1 and ("cannot read /nonexistent: No such file" in p.stderr or
                                           "module not loaded" in p.stderr), p.stderr))
    return results


def json_failure_tests():
    results = []
    # The other --json commands: nothing on stdout when they fail.
    for name, argv in (("inspect_json_failure_prints_nothing", ["inspect", "--json", "0"]),
                       ("inspect_json_second_fails_prints_nothing",
                        ["inspect", "--json", "0", "77"]),
                       ("merge_json_failure_prints_nothing", ["merge", "--json", "0", "0"])):
        p = subprocess.run([CLI] + argv, input="", capture_output=True, text=True)
        results.append((name, p.returncode == 1 and p.stdout == "" and p.stderr,
                        repr(p.stdout) + p.stderr))
    if NO_MODULE:
        p = subprocess.run([CLI, "info", "--json"], capture_output=True, text=True)
        results.append(("info_json_failure_prints_nothing",
                        p.returncode == 1 and p.stdout == "", repr(p.stdout) + p.stderr))
    else:
        results.append(("info_json_failure_prints_nothing", SKIP, "/dev/kfdsync exists here"))
    return results


# 'monitor --input': a saved trace in tracefs's format (one GPU-signalled
# fence, one ended by its context's close, one dropped unsignalled as its
# last reference went, a watchdog, an import) and in
# trace-cmd report's.
TRACE = """# tracer: nop
#
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
#              | |         |   |||||     |         |
            app-151     [001] .....    22.489075: kfdsync_register: tgid=151 id=1 context=2 source=hooks
            app-151     [001] .....    22.491190: dma_fence_init: driver=kfdsync timeline=kfdsync:151:ev1 context=2 seqno=1
            app-151     [001] .....    22.491471: kfdsync_export: tgid=151 id=1 context=2 seqno=1 kind=sync_file age=0 status=0
       kfdsim/1-152     [000] ...2.    22.548669: kfdsync_slot_signal: id=1 from=gpu value=0x1 signals=1
       kfdsim/1-152     [000] d..3.    22.548793: kfdsync_signal: tgid=151 id=1 context=2 source=hooks count=1 age=1
       kfdsim/1-152     [000] d..3.    22.548931: kfdsync_fence_end: context=2 seqno=1 status=1
       kfdsim/1-152     [000] d..3.    22.549041: dma_fence_signaled: driver=kfdsync timeline=kfdsync:151:ev1 context=2 seqno=1
     other-proc-200     [000] .....    22.550000: kfdsync_register: tgid=200 id=1 context=7 source=hooks
     other-proc-200     [000] .....    22.550100: kfdsync_export: tgid=200 id=1 context=7 seqno=1 kind=eventfd age=0 status=0
            app-151     [001] .....    22.560117: kfdsync_export: tgid=151 id=1 context=2 seqno=2 kind=sync_file age=1 status=0
    kworker/1:1-33      [001] .....    23.560200: kfdsync_watchdog: context=7 seqno=1 deadline=23560000000 late_ns=200000
    kworker/1:1-33      [001] .....    23.560210: kfdsync_fence_end: context=7 seqno=1 status=-110
            app-151     [001] .....    23.862371: kfdsync_end: cause=close error=-125 tgid=151 id=0
            app-151     [001] .....    23.862584: kfdsync_unregister: tgid=151 id=1 context=2 age=1
            app-151     [001] .....    23.862590: kfdsync_fence_end: context=2 seqno=2 status=-125
            app-151     [001] .....    23.862600: kfdsync_fence_end: context=2 seqno=3 status=-125 dropped=1
            app-151     [001] .....    23.900000: kfdsync_timeline_create: tgid=151 context=9
            app-151     [001] .....    23.900100: kfdsync_import_arm: tgid=151 context=9 seqno=1 driver=kfdsync timeline=kfdsync-timeline:151:app target=memory addr=0x7f0000001000 value=7 error_value=99 event=0 fail_event=0
            app-151     [001] d..1.    23.900200: kfdsync_timeline_inc: context=9 inc=1 value=1
            app-151     [001] d..1.    23.900210: kfdsync_fence_end: context=9 seqno=1 status=1
            app-151     [001] d..1.    23.900220: kfdsync_import_write: context=9 seqno=1 value=7
   kworker/u4:2-40      [000] .....    23.900300: kfdsync_import_done: context=9 seqno=1 status=1 target=memory
            app-151     [001] .....    23.999999: sched_switch: prev_comm=app prev_pid=151
"""
# trace-cmd report: no flags column, the event name padded.
REPORT = """cpus=2
            app-151   [001]    22.491471: kfdsync_export:       tgid=151 id=1 context=2 seqno=1 kind=sync_file age=0 status=0
       kfdsim/1-152   [000]    22.548931: kfdsync_fence_end:    context=2 seqno=1 status=1
"""


def monitor_tests():
    results = []
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace")
        with open(trace, "w") as f:
            f.write(TRACE)

        def run(*argv, stdin=None):
            return subprocess.run([CLI, "monitor"] + list(argv), input=stdin,
                                  capture_output=True, text=True)

        p = run("--input", trace)
        lines = p.stdout.splitlines()
        results.append(("monitor_input_text",
                        p.returncode == 0 and len(lines) == 20 and
                        "dma_fence" not in p.stdout and
                        re.search(r"fence 2:1 +export +pid 151 event 1 as sync_file, after age 0: "
                                  r"pending", p.stdout) and
                        re.search(r"slot 1 +count +GPU write 0x1 counted", p.stdout) and
                        re.search(r"fence 2:1 +signalled +after 57\.460 ms", p.stdout) and
                        re.search(r"fence 7:1 +ended +-ETIMEDOUT \(watchdog\) after 1010\.110 ms",
                                  p.stdout) and
                        re.search(r"fence 2:2 +ended +-ECANCELED \(close\)", p.stdout) and
                        re.search(r"fence 2:3 +dropped +unsignalled, no reference left "
                                  r"\(was to be -ECANCELED, close\)", p.stdout) and
                        re.search(r"fence 9:1 +write +value 7 written", p.stdout) and
                        "sched_switch" not in p.stdout, p.stdout + p.stderr))
        p = run("--input", trace, "--dma-fence")
        results.append(("monitor_input_dma_fence",
                        p.returncode == 0 and len(p.stdout.splitlines()) == 22 and
                        re.search(r"fence 2:1 +dma_fence_signaled +kfdsync kfdsync:151:ev1",
                                  p.stdout), p.stdout + p.stderr))
        p = run("--input", trace, "--json", "--dma-fence")
        try:
            objs = [json.loads(line) for line in p.stdout.splitlines()]
        except ValueError as e:
            objs = []
            p.stderr += f"not JSON: {e}"
        ends = {(o["fields"]["context"], o["fields"]["seqno"]): o for o in objs
                if o["event"] == "kfdsync_fence_end"}
        results.append(("monitor_input_json",
                        p.returncode == 0 and len(objs) == 22 and
                        ends.get((2, 1), {}).get("cause") == "signalled" and
                        ends.get((7, 1), {}).get("cause") == "watchdog" and
                        ends.get((2, 2), {}).get("cause") == "close" and
                        ends[(2, 2)]["fields"]["status"] == -125 and
                        ends[(2, 2)]["owner"] == 151 and
                        ends.get((2, 3), {}).get("cause") == "dropped" and
                        ends[(2, 3)]["step"] == "dropped" and
                        objs[3]["fields"]["value"] == 1 and objs[3]["fields"]["from"] == "gpu",
                        p.stdout + p.stderr))
        p = run("--input", trace, "--pid", "200")
        results.append(("monitor_filter_pid",
                        p.returncode == 0 and len(p.stdout.splitlines()) == 4 and
                        "(watchdog)" in p.stdout and "151" not in p.stdout,
                        p.stdout + p.stderr))
        p = run("--input", trace, "--fence", "2:2")
        results.append(("monitor_filter_fence",
                        p.returncode == 0 and "fence 2:2" in p.stdout and "fence 2:1" not in p.stdout
                        and "event 2 " in p.stdout and "fence 9" not in p.stdout,
                        p.stdout + p.stderr))
        p = run("--input", trace, "--event", "1", "--pid", "151", "--count", "2")
        results.append(("monitor_filter_event_count",
                        p.returncode == 0 and len(p.stdout.splitlines()) == 2,
                        p.stdout + p.stderr))
        p = run("--input", "-", stdin=REPORT)
        results.append(("monitor_input_trace_cmd_report",
                        p.returncode == 0 and len(p.stdout.splitlines()) == 2 and
                        re.search(r"fence 2:1 +signalled +after 57\.460 ms", p.stdout),
                        p.stdout + p.stderr))
        # Live: tracefs missing, without kfdsync's events, or not ours to use.
        p = run("--tracefs", os.path.join(d, "none"))
        results.append(("monitor_no_tracefs",
                        p.returncode == 1 and "tracefs is not mounted" in p.stderr, p.stderr))
        fake = os.path.join(d, "tracefs")
        os.makedirs(os.path.join(fake, "events"))
        open(os.path.join(fake, "trace"), "w").close()
        p = run("--tracefs", fake)
        results.append(("monitor_no_kfdsync_events",
                        p.returncode == 1 and "no kfdsync events" in p.stderr and
                        "kfdsync.ko is not loaded" in p.stderr, p.stderr))
        if os.geteuid() == 0 and shutil.which("setpriv"):
            os.chmod(d, 0o755)
            os.chmod(fake, 0o700)
            p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                CLI, "monitor", "--tracefs", fake],
                               capture_output=True, text=True)
            results.append(("monitor_not_permitted",
                            p.returncode == 1 and "no access to tracefs" in p.stderr and
                            "needs root" in p.stderr, p.stderr))
        else:
            results.append(("monitor_not_permitted", SKIP, "needs root and setpriv"))
    # The KMS demo's real trace (trace-cmd report, docs/tracing.md): four
    # frames, each exported, counted from the GPU's write, signalled, and
    # the commits' out-fences imported and written.
    kms = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                       "tracing-kms.txt")
    p = subprocess.run([CLI, "monitor", "--input", kms, "--json"], capture_output=True,
                       text=True)
    try:
        objs = [json.loads(line) for line in p.stdout.splitlines()]
    except ValueError:
        objs = []
    steps = [o["step"] for o in objs]
    results.append(("monitor_real_kms_trace",
                    p.returncode == 0 and steps.count("export") == 4 and
                    steps.count("count") == 4 and steps.count("signal") == 4 and
                    steps.count("signalled") == 4 and steps.count("import") == 4 and
                    steps.count("write") == 4 and
                    all(o["cause"] == "signalled" for o in objs if o["step"] == "signalled"),
                    p.stdout + p.stderr))
    for name, argv, pattern in (
            ("monitor_bad_fence", ["--fence", "x:1"], r"--fence: expected a number"),
            ("monitor_input_and_tracefs", ["--input", "-", "--tracefs", "/x"],
             r"a saved trace or a live one, not both"),
            ("monitor_extra_arg", ["extra"], r"usage: kfdsync monitor")):
        p = subprocess.run([CLI, "monitor"] + argv, capture_output=True, text=True)
        results.append((name, p.returncode == 2 and re.search(pattern, p.stderr), p.stderr))
    p = subprocess.run([CLI, "monitor", "--input", "/nonexistent"], capture_output=True,
                       text=True)
    results.append(("monitor_input_missing", p.returncode == 1 and
                    "/nonexistent: No such file" in p.stderr, p.stderr))
    return results


EXTRA = list_proc_tests() + json_failure_tests() + monitor_tests()

print("TAP version 13")
print(f"1..{len(CASES) + len(EXTRA)}")
failed = 0
for i, (name, argv, status, pattern, needs_no_module) in enumerate(CASES, 1):
    if needs_no_module and not NO_MODULE:
        print(f"ok {i} {name} # SKIP /dev/kfdsync exists here")
        continue
    # stdin is a pipe: "0" is an open fd that is not a sync_file.
    p = subprocess.run([CLI] + argv, input="", capture_output=True, text=True)
    out = p.stdout + p.stderr
    good = p.returncode == status and re.search(pattern, out, re.S)
    print(f"{'ok' if good else 'not ok'} {i} {name}")
    if not good:
        failed += 1
        print(f"# status {p.returncode} (want {status}); output:")
        for line in out.splitlines():
            print("#   " + line)
for i, (name, good, out) in enumerate(EXTRA, len(CASES) + 1):
    if good is SKIP:
        print(f"ok {i} {name} # SKIP {out}")
        continue
    print(f"{'ok' if good else 'not ok'} {i} {name}")
    if not good:
        failed += 1
        for line in out.splitlines():
            print("#   " + line)
sys.exit(1 if failed else 0)
