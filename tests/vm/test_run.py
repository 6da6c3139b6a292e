#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Unit tests of tests/vm/run's host-side logic (no guest boots), as TAP."""

import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader("vmrun", os.path.join(HERE, "run"))
spec = importlib.util.spec_from_loader("vmrun", loader)
vmrun = importlib.util.module_from_spec(spec)
loader.exec_module(vmrun)

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@test
def splat_lines_detected():
    bad = [
        "[   12.345678] ------------[ cut here ]------------",
        "[   12.345679] WARNING: CPU: 1 PID: 310 at drivers/foo.c:12 foo+0x1/0x2 [kfdsim]",
        "[    3.000000] BUG: kernel NULL pointer dereference, address: 0000000000000008",
        "[    3.000000] kernel BUG at mm/slub.c:123!",
        "[    3.000000] Oops: 0002 [#1] PREEMPT SMP NOPTI",
        "[    3.000000] general protection fault, probably for non-canonical address",
        "[    3.000000] Kernel panic - not syncing: Attempted to kill init!",
        "[    3.000000] BUG: KASAN: use-after-free in foo",
        "[    3.000000] UBSAN: shift-out-of-bounds in bar.c:1:2",
        "[    3.000000] WARNING: possible recursive locking detected",
        "[    3.000000] INFO: task kworker/0:1:12 blocked for more than 120 seconds.",
        "[    3.000000] refcount_t: underflow; use-after-free.",
        "[    3.000000] list_add corruption. prev->next should be next",
        "[    3.000000] kfdsync: fence kfdsync-1 released with pending signals!",
        "[    3.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!",
        "[    3.000000] WARNING: suspicious RCU usage",
        "[    3.000000] WARNING: bad unlock balance detected!",
        "[    3.000000] INFO: lockdep is turned off.",
        "[    3.000000] ODEBUG: free active (active state 0) object type: timer_list hint: x",
    ]
    good = [
        "[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)",
        "[   11.000000] kfd kfd: amdgpu: Allocated 3969056 bytes on gart",
        "[   11.000000] [drm] Initialized vgem 1.0.0 20120112 for vgem on minor 1",
        "[    1.000000] mtrr: your CPUs had inconsistent fixed MTRR settings",
        "[    1.000000] Spectre V2 : WARNING: Unprivileged eBPF is enabled",
        "[    1.000000] DEBUG: not a bug",
        "[    0.000000] rcu: \tRCU lockdep checking is enabled.",
    ]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "dmesg.log")
        write(path, "\n".join(bad + good) + "\n")
        found = vmrun.scan_log(path)
    missing = [b for b in bad if vmrun.STAMP_RE.sub("", b) not in found]
    extra = [f for f in found if not any(f in b for b in bad)]
    assert not missing, f"not detected: {missing}"
    assert not extra, f"false positives: {extra}"


@test
def splat_missing_log_is_empty():
    assert vmrun.scan_log("/nonexistent/dmesg.log") == []


@test
def initramfs_modules_in_dependency_order():
    with tempfile.TemporaryDirectory() as d:
        write(os.path.join(d, "modules.dep"), "\n".join([
            "kernel/fs/9p/9p.ko.xz: kernel/net/9p/9pnet.ko.xz kernel/fs/netfs/netfs.ko.xz",
            "kernel/net/9p/9pnet.ko.xz: kernel/fs/netfs/netfs.ko.xz",
            "kernel/net/9p/9pnet_virtio.ko.xz: kernel/net/9p/9pnet.ko.xz "
            "kernel/fs/netfs/netfs.ko.xz",
            "kernel/fs/netfs/netfs.ko.xz:",
            "kernel/fs/nfs/nfs.ko.xz: kernel/fs/netfs/netfs.ko.xz",
        ]) + "\n")
        order = vmrun.initramfs_modules(d)
    names = [os.path.basename(m) for m in order]
    # virtio_pci is built in here (absent from modules.dep): not loaded.
    assert names == ["netfs.ko.xz", "9pnet.ko.xz", "9pnet_virtio.ko.xz", "9p.ko.xz"], names


@test
def kernel_short_name_resolves_to_newest_prepared():
    with tempfile.TemporaryDirectory() as d:
        for rel, done in (("6.1.0-9-amd64", True), ("6.1.0-57-amd64", True),
                          ("6.12.117+deb12-amd64", True), ("6.1.0-99-amd64", False)):
            write(os.path.join(d, "kernels", rel, ".complete" if done else "partial"), "")
        old = vmrun.CACHE
        vmrun.CACHE = d
        try:
            assert vmrun.resolve_kernel("6.1") == "6.1.0-57-amd64"
            assert vmrun.resolve_kernel("6.12") == "6.12.117+deb12-amd64"
            assert vmrun.resolve_kernel("6.1.0-9-amd64") == "6.1.0-9-amd64"
            try:
                vmrun.resolve_kernel("5.10")
                raise AssertionError("5.10 resolved")
            except vmrun.SetupError as e:
                assert "install-deps" in str(e)
            # A build pins the release its modules were made for.
            write(os.path.join(d, "build", "kernel", "6.1", "release"), "6.1.0-9-amd64\n")
            assert vmrun.resolve_kernel("6.1", os.path.join(d, "build")) == "6.1.0-9-amd64"
            write(os.path.join(d, "build", "kernel", "6.1", "release"), "6.1.0-99-amd64\n")
            try:
                vmrun.resolve_kernel("6.1", os.path.join(d, "build"))
                raise AssertionError("unprepared pinned release accepted")
            except vmrun.SetupError as e:
                assert "6.1.0-99-amd64" in str(e)
        finally:
            vmrun.CACHE = old


def check_named_kernel(name, cache_file, release, hint, others=(), short=None):
    """--kernel NAME resolves through CACHE/cache_file, and only to a
    prepared release; @others are prepared too, @short maps a short name to
    the release it must resolve to."""
    with tempfile.TemporaryDirectory() as d:
        for rel in (release,) + tuple(others):
            write(os.path.join(d, "kernels", rel, ".complete"), "")
        old = vmrun.CACHE
        vmrun.CACHE = d
        try:
            try:
                vmrun.resolve_kernel(name)
                raise AssertionError(f"{name} resolved without {cache_file}")
            except vmrun.SetupError as e:
                assert hint in str(e), e
            write(os.path.join(d, cache_file), release + "\n")
            assert vmrun.resolve_kernel(name) == release
            for s, want in (short or {}).items():
                assert vmrun.resolve_kernel(s) == want, (s, want)
            write(os.path.join(d, cache_file), "9.9.9-unprepared\n")
            try:
                vmrun.resolve_kernel(name)
                raise AssertionError(f"unprepared {name} accepted")
            except vmrun.SetupError as e:
                assert "9.9.9-unprepared" in str(e), e
        finally:
            vmrun.CACHE = old


@test
def newest_resolves_through_the_cache_file():
    # 7.3 is also reachable by its short name.
    check_named_kernel("newest", "newest", "7.3.4+deb13-amd64", "install-deps",
                       short={"7.3": "7.3.4+deb13-amd64"})


@test
def debug_resolves_through_its_release_file_and_only_by_name():
    # "6.1" stays Debian's kernel although the debug release sorts later.
    check_named_kernel("debug", os.path.join("debug", "release"), "6.1.192-kfdsync-debug",
                       "tools/debug-kernel", others=("6.1.0-57-amd64",),
                       short={"6.1": "6.1.0-57-amd64"})


@test
def root_name_resolves_to_prepared_root():
    with tempfile.TemporaryDirectory() as d:
        write(os.path.join(d, "roots", "trixie", ".complete"), "")
        write(os.path.join(d, "roots", "half", "bin", "sh"), "")
        write(os.path.join(d, "elsewhere", "bin", "sh"), "")
        old = vmrun.CACHE
        vmrun.CACHE = d
        try:
            name, path = vmrun.resolve_root("trixie")
            assert name == "trixie" and path == os.path.realpath(os.path.join(d, "roots", "trixie"))
            for bad, why in (("sid", "missing"), ("half", "incomplete")):
                try:
                    vmrun.resolve_root(bad)
                    raise AssertionError(f"{bad} resolved")
                except vmrun.SetupError as e:
                    text = str(e)
                    assert why in text and "have: trixie" in text, text
                    assert "tools/install-deps" in text and f"prepare-roots {bad}" in text, text
            # A directory is taken as is, if it looks like a root.
            name, path = vmrun.resolve_root(os.path.join(d, "elsewhere"))
            assert name == "elsewhere", name
            try:
                vmrun.resolve_root(os.path.join(d, "roots"))
                raise AssertionError("a directory without bin/sh accepted")
            except vmrun.SetupError as e:
                assert "bin/sh" in str(e)
        finally:
            vmrun.CACHE = old


@test
def args_need_a_command():
    args = vmrun.parse_args(["--kernel", "6.12", "--", "echo", "--kernel"])
    assert args.kernel == "6.12" and args.cmd == ["echo", "--kernel"], args
    try:
        vmrun.parse_args(["--kernel", "6.1"])
        raise AssertionError("accepted no command")
    except SystemExit as e:
        assert e.code == 2


@test
def shares_outermost_first_results_writable():
    with tempfile.TemporaryDirectory() as d:
        inner = os.path.join(d, "a", "b")
        os.makedirs(inner)
        results = os.path.join(d, "res")
        os.makedirs(results)
        args = vmrun.parse_args(["--build-dir", inner, "--share", d + ":rw", "--", "true"])
        shares = vmrun.make_shares(args, results)
    paths = [p for p, _ in shares]
    assert paths.index(os.path.realpath(d)) < paths.index(os.path.realpath(inner)), paths
    assert dict(shares)[os.path.realpath(results)] == "rw"
    assert dict(shares)[os.path.realpath(inner)] == "ro"
    assert dict(shares)[vmrun.SOURCE_ROOT] == "ro"


@test
def bad_share_mode_rejected():
    args = vmrun.parse_args(["--share", "/tmp:rx", "--", "true"])
    try:
        vmrun.make_shares(args, "/tmp")
        raise AssertionError("accepted mode rx")
    except vmrun.SetupError:
        pass


@test
def screendump_request_names_checked():
    assert vmrun.handle_request("screendump ../../etc/x", "/nonexistent", "/tmp").startswith(
        "error bad")
    assert vmrun.handle_request("reboot now", "/nonexistent", "/tmp").startswith(
        "error unknown")
    # A valid name reaches QMP, which is not there: a clean error, no exception.
    assert vmrun.handle_request("screendump ok_name", "/nonexistent/qmp", "/tmp").startswith(
        "error")


@test
def params_parsed_per_module():
    got = vmrun.parse_params(["kfdsync.hooks=0", "kfdsync.watchdog_ms=500", "amdgpu.x=1",
                              "virtio-gpu.y=on"])
    assert got == {"kfdsync": "hooks=0 watchdog_ms=500", "amdgpu": "x=1",
                   "virtio_gpu": "y=on"}, got
    for bad in ("kfdsync.hooks", "kfdsync=0", "kfdsync.hooks=a b", "nosuchmod.x=1",
                "kfdsync.hooks=$(reboot)"):
        try:
            vmrun.parse_params([bad])
            raise AssertionError(f"accepted {bad!r}")
        except vmrun.SetupError as e:
            assert "--param" in str(e), e


@test
def build_dir_found_or_none():
    with tempfile.TemporaryDirectory() as d:
        old = os.environ.pop("KFDSYNC_BUILD_ROOT", None)
        try:
            assert vmrun.find_build_dir("/x", d) == ("/x", "given")
            # build/ without built modules is not taken.
            os.makedirs(os.path.join(d, "build"))
            assert vmrun.find_build_dir(None, d) == (None, None)
            os.makedirs(os.path.join(d, "build", "kernel"))
            assert vmrun.find_build_dir(None, d) == (os.path.join(d, "build"), "source tree")
            os.environ["KFDSYNC_BUILD_ROOT"] = "/env/build"
            assert vmrun.find_build_dir(None, d) == ("/env/build", "environment")
            assert vmrun.find_build_dir("/x", d) == ("/x", "given")
        finally:
            os.environ.pop("KFDSYNC_BUILD_ROOT", None)
            if old is not None:
                os.environ["KFDSYNC_BUILD_ROOT"] = old


@test
def output_merged_when_one_file():
    r, w = os.pipe()
    r2, w2 = os.pipe()
    try:
        assert vmrun.streams_are_one_file(w, w)
        assert vmrun.streams_are_one_file(w, os.dup(w))
        assert not vmrun.streams_are_one_file(w, w2)
        assert not vmrun.streams_are_one_file(w, 9999)
    finally:
        for fd in (r, w, r2, w2):
            os.close(fd)
    assert vmrun.parse_args(["--merge-output", "--", "true"]).merge is True
    assert vmrun.parse_args(["--separate-output", "--", "true"]).merge is False
    assert vmrun.parse_args(["--", "true"]).merge is None
    try:
        vmrun.parse_args(["--merge-output", "--separate-output", "--", "true"])
        raise AssertionError("accepted both")
    except SystemExit as e:
        assert e.code == 2


def main():
    print("TAP version 13")
    print(f"1..{len(TESTS)}")
    failed = 0
    for i, fn in enumerate(TESTS, 1):
        try:
            fn()
            print(f"ok {i} {fn.__name__}")
        except Exception:
            failed += 1
            print(f"not ok {i} {fn.__name__}")
            for line in traceback.format_exc().splitlines():
                print("# " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
