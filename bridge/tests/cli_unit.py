#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""kfdsync CLI host tests: usage, messages and exit codes without the module.

usage: cli_unit.py PATH_TO_KFDSYNC
"""
import json
import os
import re
import subprocess
import sys
import tempfile

CLI = sys.argv[1]
NO_MODULE = not os.path.exists("/dev/kfdsync")

# (name, argv, expected status, regex on stdout+stderr, needs no module)
CASES = [
    ("cli_no_args_usage", [], 2, r"usage: kfdsync COMMAND", False),
    ("cli_help", ["--help"], 0, r"commands:.*info.*inspect.*wait.*merge", False),
    ("cli_version", ["--version"], 0, r"^kfdsync \d+\.\d+ \(ABI 1\)", False),
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
     r"(no /sys/kernel/debug/kfdsync: is debugfs mounted and kfdsync loaded\?|"
     r"debugfs is readable by root only)", True),
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


# 'list --debugfs DIR' on tables written in the module's own format: the
# header lines are taken from the kmod sources, so a column the module adds
# is a column this test expects.
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kmod")
TABLES = {"contexts": "kfdsync_ctx.c", "events": "kfdsync_ctx.c",
          "timelines": "kfdsync_timeline.c"}


def header_of(source, first):
    text = open(os.path.join(SRC, source), encoding="utf-8").read()
    m = re.search(r'seq_puts\(m, "(# ' + first + r' [a-z_ ]+)\\n"\);', text)
    return m.group(1) if m else None


# Where a table's rows are printed, when not next to its header.
ROW_SOURCES = {"events": "kfdsync_event.c"}


def row_format_of(source, first, table=None):
    """The module's printf format of a row: the seq_printf after the header
    (or the first one of the file that prints the table's rows), as Python
    %-conversions (one per column), or None."""
    if table in ROW_SOURCES:
        text = open(os.path.join(SRC, ROW_SOURCES[table]), encoding="utf-8").read()
        m = re.search(r'seq_printf\(m, "([^"]*)\\n"', text)
    else:
        text = open(os.path.join(SRC, source), encoding="utf-8").read()
        m = re.search(r'seq_puts\(m, "# ' + first + r' [a-z_ ]+\\n"\);.*?'
                      r'seq_printf\(m, "([^"]*)\\n"', text, re.S)
    if not m:
        return None
    convs = re.findall(r"%([-#0-9]*)(?:ll|l|h|z)?([dusx])", m.group(1))
    return [f"%{flags}{'s' if c == 's' else 'x' if c == 'x' else 'd'}"
            for flags, c in convs]


def module_row(table, cols, fmts):
    """A row exactly as the module prints it, and the fields list expects.
    comm "gst 1" (a space and a number: the case that shifted columns)."""
    values = []
    for col, fmt in zip(cols, fmts):
        if fmt.endswith("s"):
            values.append({"comm": "gst 1", "source": "relay",
                           "slot": "0xffffffffffffffff"}.get(col, "my tl name"))
        else:
            values.append(7)
    line = " ".join(f % v for f, v in zip(fmts, values))
    return line, {c: (f % v).strip() for c, f, v in zip(cols, fmts, values)}


def fake_value(table, col, last):
    # comm and a last name column may hold spaces (a comm ending in a
    # number next to numeric columns is ambiguous: not tested).
    comm = "br export 1" if table == "contexts" else "tl maker"
    return {"comm": comm, "source": "relay"}.get(
        col, "my tl name" if col == "name" and last else "7")


def list_copy_tests():
    results = []
    with tempfile.TemporaryDirectory() as d:
        want = {}
        for table, source in TABLES.items():
            header = header_of(source, "ctx" if table == "events" else "id")
            if not header:
                return [("list_copy_headers_found", False, f"no header in {source}")]
            cols = header[1:].split()
            row = {c: fake_value(table, c, i == len(cols) - 1) for i, c in enumerate(cols)}
            rows = [] if table == "events" else [row]
            with open(os.path.join(d, table), "w", encoding="utf-8") as f:
                f.write(f"# 1 of 1024 {table}\n{header}\n")
                for r in rows:
                    f.write("  ".join(r.values()) + "\n")
            want[table] = rows
        p = subprocess.run([CLI, "list", "--json", "--debugfs", d],
                           capture_output=True, text=True)
        try:
            got = json.loads(p.stdout)
        except ValueError:
            got = None
        results.append(("list_json_from_copy_matches_module_columns",
                        p.returncode == 0 and got == want, p.stdout + p.stderr))
        p = subprocess.run([CLI, "list", "--debugfs", d], capture_output=True, text=True)
        results.append(("list_table_from_copy",
                        p.returncode == 0 and "br export 1" in p.stdout and
                        "my tl name" in p.stdout and
                        re.search(r"events:\n  \(none\)", p.stdout) is not None,
                        p.stdout + p.stderr))
        with open(os.path.join(d, "events"), "a", encoding="utf-8") as f:
            f.write("1 2 3\n")
        p = subprocess.run([CLI, "list", "--debugfs", d], capture_output=True, text=True)
        results.append(("list_copy_short_row_rejected",
                        p.returncode == 1 and "events: unexpected line '1 2 3'" in p.stderr,
                        p.stdout + p.stderr))
    p = subprocess.run([CLI, "list", "--debugfs", "/nonexistent"], capture_output=True,
                       text=True)
    results.append(("list_copy_missing_dir", p.returncode == 1 and
                    "no /nonexistent: No such file or directory" in p.stderr, p.stderr))

    # Rows in the module's own printf formats (taken from its sources), with
    # a comm that has a space and a number: found by position, not guessed.
    with tempfile.TemporaryDirectory() as d:
        want, bad = {}, []
        for table, source in TABLES.items():
            first = "ctx" if table == "events" else "id"
            header, fmts = header_of(source, first), row_format_of(source, first, table)
            cols = header[1:].split() if header else []
            if not fmts or len(fmts) != len(cols):
                bad.append(f"{source}: {len(fmts or [])} formats, {len(cols)} columns")
                continue
            line, fields = module_row(table, cols, fmts)
            with open(os.path.join(d, table), "w", encoding="utf-8") as f:
                f.write(f"# 1 of 1024 {table}\n{header}\n{line}\n")
            want[table] = [fields]
        p = subprocess.run([CLI, "list", "--json", "--debugfs", d],
                           capture_output=True, text=True)
        try:
            got = json.loads(p.stdout)
        except ValueError:
            got = None
        results.append(("list_json_comm_with_space_and_number_module_format",
                        not bad and p.returncode == 0 and got == want,
                        "\n".join(bad) + f"\ngot {got}\nwant {want}\n" + p.stderr))

        # JSON is all or nothing: a bad line in the second table leaves
        # stdout empty (the first table was fine).
        with open(os.path.join(d, "events"), "a", encoding="utf-8") as f:
            f.write("1 2 3\n")
        p = subprocess.run([CLI, "list", "--json", "--debugfs", d],
                           capture_output=True, text=True)
        results.append(("list_json_failure_prints_nothing",
                        p.returncode == 1 and p.stdout == "" and
                        "unexpected line '1 2 3'" in p.stderr, repr(p.stdout) + p.stderr))
        os.unlink(os.path.join(d, "timelines"))
        p = subprocess.run([CLI, "list", "--json", "--debugfs", d],
                           capture_output=True, text=True)
        results.append(("list_json_missing_table_prints_nothing",
                        p.returncode == 1 and p.stdout == "", repr(p.stdout) + p.stderr))

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
        results.append(("info_json_failure_prints_nothing", None, "/dev/kfdsync exists here"))
    return results


EXTRA = list_copy_tests()

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
    if good is None:
        print(f"ok {i} {name} # SKIP {out}")
        continue
    print(f"{'ok' if good else 'not ok'} {i} {name}")
    if not good:
        failed += 1
        for line in out.splitlines():
            print("#   " + line)
sys.exit(1 if failed else 0)
