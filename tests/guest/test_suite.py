#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Host unit test of tests/guest/suite: how it merges programs' TAP.

Each case writes a tiny program printing TAP (and exiting with a status),
runs the suite on it and checks the merged stream and the exit status.
Prints TAP.
"""

import os
import subprocess
import sys
import tempfile

SUITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suite")

CASES = [
    # name, program body (sh), expected suite status, lines the output must have
    ("all_pass", 'echo "1..2"; echo "ok 1 a"; echo "ok 2 b"', 0,
     ["ok 1 prog: a", "ok 2 prog: b", "1..2"]),
    ("failure_fails", 'echo "1..2"; echo "ok 1 a"; echo "not ok 2 b"; exit 1', 1,
     ["not ok 2 prog: b"]),
    ("todo_is_not_a_failure", 'echo "1..2"; echo "ok 1 a"; echo "not ok 2 b # TODO later"', 0,
     ["not ok 2 prog: b # TODO later"]),
    ("skip_passes", 'echo "1..1"; echo "ok 1 a # SKIP why"', 0, ["ok 1 prog: a # SKIP why"]),
    ("bail_out_fails", 'echo "1..2"; echo "ok 1 a"; echo "Bail out! broken"; exit 1', 1,
     ["# prog: Bail out! broken", "not ok 2 prog: bailed out: broken; exited with status 1"]),
    ("bad_exit_fails", 'echo "1..1"; echo "ok 1 a"; exit 3', 1,
     ["not ok 2 prog: exited with status 3"]),
    ("plan_mismatch_fails", 'echo "1..3"; echo "ok 1 a"', 1,
     ["not ok 2 prog: planned 3 subtests, ran 1"]),
    ("no_plan_fails", 'echo "ok 1 a"', 1, ["not ok 2 prog: printed no plan"]),
    ("timeout_fails", 'echo "1..1"; sleep 5; echo "ok 1 a"', 1,
     ["# prog: Bail out! timed out after 0.5 s"]),
    # With kmemleak (a plain file stands in for it, see the suite): one more
    # result per program, failing when the scan finds an unreferenced object.
    ("kmemleak_clean", 'echo "1..1"; echo "ok 1 a"', 0,
     ["ok 1 prog: a", "ok 2 prog: kmemleak: no unreferenced object", "1..2"]),
    ("kmemleak_leak_fails",
     'echo "1..1"; echo "ok 1 a"; printf "%s\\n" '
     '"unreferenced object 0xffff888004a1c000 (size 64):" "  comm prog, pid 42" '
     '"unreferenced object 0xffff888004a1c040 (size 64):" >>"$KFDSYNC_SUITE_KMEMLEAK"', 1,
     ["ok 1 prog: a", "not ok 2 prog: kmemleak: no unreferenced object (2 found)",
      "# unreferenced object 0xffff888004a1c000 (size 64):"]),
]


def main():
    print("TAP version 13")
    print(f"1..{len(CASES)}")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "prog")
        for i, (name, body, want_status, want_lines) in enumerate(CASES, 1):
            with open(prog, "w") as f:
                f.write("#!/bin/sh\necho 'TAP version 13'\n" + body + "\n")
            os.chmod(prog, 0o755)
            env = dict(os.environ, KFDSYNC_SUITE_KMEMLEAK=os.path.join(tmp, "none"))
            if name.startswith("kmemleak"):
                env["KFDSYNC_SUITE_KMEMLEAK"] = os.path.join(tmp, f"kmemleak-{i}")
                env["KFDSYNC_SUITE_KMEMLEAK_MIN_AGE"] = "0"
                open(env["KFDSYNC_SUITE_KMEMLEAK"], "w").close()
            r = subprocess.run([sys.executable, SUITE, "--timeout", "0.5", prog],
                               capture_output=True, text=True, timeout=30, env=env)
            lines = r.stdout.splitlines()
            missing = [w for w in want_lines if w not in lines]
            ok = r.returncode == want_status and not missing
            if not ok:
                failed += 1
                print(f"# status {r.returncode} (want {want_status}), missing {missing}")
                for line in lines:
                    print(f"#   {line}")
            print(f"{'ok' if ok else 'not ok'} {i} {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
