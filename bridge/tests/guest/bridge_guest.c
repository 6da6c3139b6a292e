// SPDX-License-Identifier: MIT
/*
 * bridge_guest - libkfdsync and the kfdsync CLI against the real module and
 * real fences from another driver (vgem), in the guest.
 *
 * vgem attaches a fence to a buffer and signals it on request, so the test
 * controls exactly when each fence signals and can check that nothing in
 * the library or CLI reports "signalled" before that.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kfdsync.h"
#include "kmod.h"
#include "tap.h"
#include "vgem.h"

extern char **environ;

#define MS 1000000LL

/*
 * Run the CLI with @fd as its fd 3 and @input (or nothing) on its stdin,
 * as user nobody with @nobody; capture stdout+stderr (only stdout with
 * @stdout_only); return the exit status.
 */
static int cli_run(const char *input, bool nobody, bool stdout_only, int fd, char *out,
		   size_t size, const char *const *args)
{
	static char cli_path[512];
	posix_spawn_file_actions_t fa;
	int p[2], in[2], status = -1, n = 0;
	char *argv[32];
	size_t len = 0;
	pid_t pid;

	snprintf(cli_path, sizeof(cli_path), "%s/bridge/kfdsync", getenv("KFDSYNC_BUILD_ROOT"));
	if (nobody) {
		/* util-linux's setpriv: uid/gid 65534, no supplementary groups. */
		argv[n++] = "/usr/bin/setpriv";
		argv[n++] = "--reuid=65534";
		argv[n++] = "--regid=65534";
		argv[n++] = "--clear-groups";
	}
	argv[n++] = cli_path;
	while (*args && n < 31)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	if (pipe(p))
		return -1;
	if (pipe(in)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	if (stdout_only)
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	else
		posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	if (fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, fd, 3);	/* clears CLOEXEC */
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0) {
		close(p[1]);
		close(in[0]);
		/* Small: fits the pipe, so writing it all first cannot block. */
		if (input && write(in[1], input, strlen(input)) < 0)
			tap_diag("cannot write the CLI's input: %s", strerror(errno));
		close(in[1]);
		for (ssize_t r; len + 1 < size && (r = read(p[0], out + len, size - len - 1)) > 0;)
			len += r;
		waitpid(pid, &status, 0);
	} else {
		close(p[1]);
		close(in[0]);
		close(in[1]);
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	out[len] = '\0';
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Run the CLI with @fd as its fd 3; capture stdout+stderr; return status. */
static int cli(int fd, char *out, size_t size, const char *const *args)
{
	return cli_run(NULL, false, false, fd, out, size, args);
}

/*
 * A check that needs @b's vgem fence still pending. vgem signals a fence by
 * itself 10 s after making it; on Debian's kernels every such check ends
 * well within that, but on the debug kernel (KASAN, lockdep) one run of the
 * ASan-built CLI can take seconds. A check that failed when the fence may
 * have signalled by itself says nothing about the library: it is reported as
 * a skip that says so. A check that failed earlier, or passed, is reported as
 * it is. Each check group gets fresh fences so that this stays rare.
 */
static __attribute__((format(printf, 3, 4))) bool
vgem_ok(const struct vgem_buffer *b, bool pass, const char *fmt, ...)
{
	char name[256], why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (pass || !vgem_fence_may_have_expired(b))
		return tap_ok(pass, "%s", name);
	snprintf(why, sizeof(why),
		 "vgem signals its fence by itself after 10 s, and %.1f s had passed (a slow kernel)",
		 (vgem_now_ns() - b->fence_made_ns) / 1e9);
	tap_skip(why, "%s", name);
	return false;
}

static void fenced_buffer(int vgem, struct vgem_buffer *b)
{
	if (!vgem_buffer_new(vgem, b, true))
		tap_bail("cannot create a fenced vgem buffer: %s", strerror(errno));
}

static void syncobj_tests(int sf_pending, int vgem, const struct vgem_buffer *d)
{
	uint64_t cap = 0;
	uint32_t bin, tl;
	int drm, fd;

	drm = drm_open_driver("virtio_gpu", true);
	if (drm < 0 || drmGetCap(drm, DRM_CAP_SYNCOBJ_TIMELINE, &cap) || !cap) {
		const char *why = drm < 0 ? "no virtio-gpu render node (6.12 guests have one)" :
					    "no timeline syncobjs";

		tap_skip(why, "syncobj_binary_round_trip_pending");
		tap_skip(why, "syncobj_timeline_point_round_trip");
		tap_skip(why, "syncobj_bad_handle");
		tap_skip(why, "syncobj_signals_with_fence");
		if (drm >= 0)
			close(drm);
		vgem_fence_signal(vgem, d->fence);
		return;
	}
	drmSyncobjCreate(drm, 0, &bin);
	drmSyncobjCreate(drm, 0, &tl);
	fd = -1;
	vgem_ok(d, kfdsync_syncobj_import_sync_file(drm, bin, 0, sf_pending) == 0 &&
		(fd = kfdsync_syncobj_export_sync_file(drm, bin, 0)) >= 0 &&
		kfdsync_sync_file_wait(fd, 0) == -ETIME, "syncobj_binary_round_trip_pending");
	int tfd = -1;

	vgem_ok(d, kfdsync_syncobj_import_sync_file(drm, tl, 5, sf_pending) == 0 &&
		(tfd = kfdsync_syncobj_export_sync_file(drm, tl, 5)) >= 0 &&
		kfdsync_sync_file_wait(tfd, 0) == -ETIME, "syncobj_timeline_point_round_trip");
	tap_ok(kfdsync_syncobj_export_sync_file(drm, 0xdead, 0) == -ENOENT, "syncobj_bad_handle");
	vgem_fence_signal(vgem, d->fence);
	tap_ok(fd >= 0 && tfd >= 0 && kfdsync_sync_file_wait(fd, 1000 * MS) == 0 &&
	       kfdsync_sync_file_wait(tfd, 1000 * MS) == 0, "syncobj_signals_with_fence");
	if (fd >= 0)
		close(fd);
	if (tfd >= 0)
		close(tfd);
	drmSyncobjDestroy(drm, bin);
	drmSyncobjDestroy(drm, tl);
	close(drm);
}

static int32_t fence_status(int fd)
{
	struct kfdsync_sync_file_status st = { .status = 99 };

	kfdsync_sync_file_get_status(fd, &st, NULL, 0);
	return st.status;
}

static void timeline_tests(void)
{
	struct kfdsync_timeline *tl = NULL;
	char out[4096], cli_path[512];
	int f1 = -1, f2 = -1, ret;

	ret = kfdsync_timeline_new(&tl);
	tap_ok(ret == 0, "timeline_new (%d)", ret);
	if (tl) {
		f1 = kfdsync_timeline_create_fence(tl, 1, "one");
		f2 = kfdsync_timeline_create_fence(tl, 2, NULL);
	}
	tap_ok(f1 >= 0 && f2 >= 0 && fence_status(f1) == 0 && fence_status(f2) == 0,
	       "timeline_fences_pending");
	tap_ok(kfdsync_timeline_inc(tl, 1) == 0 && fence_status(f1) == 1 && fence_status(f2) == 0,
	       "timeline_inc_signals_only_reached_values");
	tap_ok(kfdsync_timeline_create_fence(tl, 1, "a name longer than thirty-one bytes") ==
	       -EINVAL, "timeline_fence_name_too_long");
	kfdsync_timeline_free(tl);
	tap_ok(fence_status(f2) == -ENOENT, "timeline_free_errors_pending_enoent (%d)",
	       fence_status(f2));
	if (f1 >= 0)
		close(f1);
	if (f2 >= 0)
		close(f2);

	snprintf(cli_path, sizeof(cli_path), "%s/bridge/kfdsync", getenv("KFDSYNC_BUILD_ROOT"));
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		   "--interval", "20", "--", cli_path, "wait", "--timeout", "10000", "3", "4",
		   NULL }) == 0, "cli_timeline_fences_signal_in_time");
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--interval", "0", "--",
		   cli_path, "inspect", "3", NULL }) == 0 && strstr(out, "pending") &&
	       strstr(out, "kfdsync"), "cli_timeline_interval_0_stays_pending");
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "3", "--",
		   "sh", "-c", "test \"$KFDSYNC_FENCE_FDS\" = \"3 4 5\" && exit 7", NULL }) == 7,
	       "cli_timeline_passes_fds_and_status");

	/*
	 * merge: two pending fences of one timeline, shown, then handed on.
	 * The kernel keeps only the later fence of one timeline: 1 fence.
	 */
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		   "--interval", "0", "--", cli_path, "merge", "--name", "both", "3", "4",
		   NULL }) == 0 && strstr(out, "merged: sync_file \"both\": pending, 1 fence\n"),
	       "cli_merge_shows_merged_pending");
	if (!strstr(out, "merged: sync_file"))
		tap_diag("%s", out);
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		   "--interval", "0", "--", cli_path, "merge", "--json", "3", "4", NULL }) == 0 &&
	       strstr(out, "{\"fd\": \"merged\", \"name\": \"kfdsync-merge\", "
		      "\"status\": \"pending\""), "cli_merge_json");
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		   "--interval", "20", "--", cli_path, "merge", "3", "4", "--", cli_path, "wait",
		   "--timeout", "10000", "3", NULL }) == 0, "cli_merge_command_waits_for_both");
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		   "--interval", "0", "--", cli_path, "merge", "--fd", "7", "3", "4", "--", "sh",
		   "-c", "test \"$KFDSYNC_FENCE_FDS\" = 7 && exec \"$0\" inspect 7",
		   cli_path, NULL }) == 0 && strstr(out, "7: sync_file \"kfdsync-merge\": pending"),
	       "cli_merge_fd_option_and_env");
	if (!strstr(out, "7: sync_file"))
		tap_diag("%s", out);
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		   "--interval", "0", "--", cli_path, "merge", "3", "4", "--", "sh", "-c", "exit 5",
		   NULL }) == 5, "cli_merge_passes_command_status");
}

/* Print what the CLI said when a check failed. */
static bool shown(bool ok, const char *out)
{
	if (!ok)
		tap_diag("%s", out);
	return ok;
}

/*
 * kfdsync timeline for testing compositors: manual steps (stdin, SIGUSR1),
 * ends with -ENOENT (end, SIGUSR2, --watchdog), independent fences.
 * CMD is a shell script that waits on its fences with the CLI ($0).
 */
static void cli_timeline_step_tests(void)
{
	char out[4096], cli_path[512];
	int ret;

	snprintf(cli_path, sizeof(cli_path), "%s/bridge/kfdsync", getenv("KFDSYNC_BUILD_ROOT"));
	/* An empty line steps once; "end" ends the rest with -ENOENT. */
	ret = cli_run("\nend\n", false, false, -1, out, sizeof(out), (const char *[]){
		"timeline", "--count", "3", "--interval", "0", "--stdin", "--", "sh", "-c",
		"\"$0\" wait --timeout 10000 3; echo s1=$?; \"$0\" wait --timeout 10000 4; "
		"echo s2=$?; \"$0\" inspect 5", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "s1=0") && strstr(out, "s2=1") &&
		     strstr(out, "4: signalled with error -2") && strstr(out, "error -2 (No such"),
		     out), "cli_timeline_stdin_step_and_end");
	/* "step 2", "K" forms; stdin commands it does not know are reported. */
	ret = cli_run("frobnicate\nstep 2\n1\n", false, false, -1, out, sizeof(out),
		      (const char *[]){ "timeline", "--count", "4", "--interval", "0", "--stdin",
		      "--", "sh", "-c", "\"$0\" wait --timeout 10000 3 4 5; echo s=$?; "
		      "\"$0\" wait --timeout 300 6; echo t=$?", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "s=0") && strstr(out, "t=124") &&
		     strstr(out, "unknown command 'frobnicate'"), out),
	       "cli_timeline_stdin_step_counts");
	/* SIGUSR1 to $KFDSYNC_TIMELINE_PID: one step. */
	ret = cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		  "--interval", "0", "--", "sh", "-c", "kill -USR1 $KFDSYNC_TIMELINE_PID; "
		  "\"$0\" wait --timeout 10000 3; echo s=$?; \"$0\" wait --timeout 300 4; echo t=$?",
		  cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "s=0") && strstr(out, "t=124"), out),
	       "cli_timeline_sigusr1_steps");
	/* SIGUSR2: every pending fence ends with -ENOENT. */
	ret = cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "2",
		  "--interval", "0", "--", "sh", "-c", "kill -USR2 $KFDSYNC_TIMELINE_PID; "
		  "\"$0\" wait --timeout 10000 3 4; echo s=$?", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "s=1") && strstr(out, "signalled with error -2"),
		     out), "cli_timeline_sigusr2_ends_with_enoent");
	/* --watchdog: overdue fences end, long before CMD's own timeout. */
	ret = cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--interval", "0",
		  "--watchdog", "200", "--", cli_path, "wait", "--timeout", "20000", "3", NULL });
	tap_ok(shown(ret == 1 && strstr(out, "3: signalled with error -2"), out),
	       "cli_timeline_watchdog_ends_with_enoent");
	/*
	 * --independent: one fence context each (a merge of two pending ones
	 * keeps both), and "end 2" ends fence 2 alone; the next step signals
	 * fence 1.
	 */
	ret = cli_run("end 2\nstep\n", false, false, -1, out, sizeof(out), (const char *[]){
		"timeline", "--count", "4", "--interval", "0", "--stdin", "--independent", "--",
		"sh", "-c", "\"$0\" merge 5 6; \"$0\" wait --timeout 10000 3; echo s1=$?; "
		"\"$0\" wait --timeout 10000 4; echo s2=$?; \"$0\" wait --timeout 300 5; "
		"echo s3=$?", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "s1=0") && strstr(out, "s2=1") &&
		     strstr(out, "s3=124") && strstr(out, ", 2 fences"), out),
	       "cli_timeline_independent_end_one");
	/* Without --independent, one fence cannot end alone: said, not done. */
	ret = cli_run("end 2\n", false, false, -1, out, sizeof(out), (const char *[]){
		"timeline", "--count", "2", "--interval", "0", "--stdin", "--", "sh", "-c",
		"sleep 1; \"$0\" wait --timeout 300 4; echo s=$?", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "s=124") && strstr(out, "share one timeline"), out),
	       "cli_timeline_end_one_needs_independent");
}

/*
 * kfdsync_sync_file_wait_many(): any and all, one timeout for the whole
 * wait, and how each fence ended, on three timeline fences of their own
 * timelines (one signalled, one ended with -ENOENT, one pending).
 */
static void wait_many_tests(void)
{
	struct kfdsync_timeline *tl[3] = { NULL };
	int32_t st[3] = { 9, 9, 9 };
	int fds[3], any, all, many;
	int64_t t0, ms;

	for (int i = 0; i < 3; i++) {
		if (kfdsync_timeline_new(&tl[i]))
			tap_bail("kfdsync_timeline_new");
		fds[i] = kfdsync_timeline_create_fence(tl[i], 1, NULL);
	}
	t0 = vgem_now_ns();
	any = kfdsync_sync_file_wait_many(fds, 3, 0, 300 * MS, st);
	all = kfdsync_sync_file_wait_many(fds, 3, KFDSYNC_WAIT_ALL, 300 * MS, NULL);
	ms = (vgem_now_ns() - t0) / MS;
	/* Two waits of 300 ms, none of them cut short. */
	tap_ok(any == -ETIME && all == -ETIME && !st[0] && !st[1] && !st[2] && ms >= 600,
	       "sync_file_wait_many_times_out (%d %d, %lld ms)", any, all, (long long)ms);
	kfdsync_timeline_inc(tl[0], 1);
	kfdsync_timeline_free(tl[1]);
	tl[1] = NULL;
	any = kfdsync_sync_file_wait_many(fds, 3, 0, 10000 * MS, st);
	tap_ok(any == 2 && st[0] == 1 && st[1] == -ENOENT && st[2] == 0,
	       "sync_file_wait_many_any_says_how_each_ended (%d: %d %d %d)", any, st[0], st[1],
	       st[2]);
	kfdsync_timeline_inc(tl[2], 1);
	all = kfdsync_sync_file_wait_many(fds, 3, KFDSYNC_WAIT_ALL, 10000 * MS, st);
	tap_ok(all == 3 && st[2] == 1 && kfdsync_sync_file_wait_status(fds[1], 0, &st[0]) == 0 &&
	       st[0] == -ENOENT, "sync_file_wait_many_all_and_wait_status (%d, %d)", all, st[0]);
	for (int i = 0; i < 3; i++) {
		close(fds[i]);
		kfdsync_timeline_free(tl[i]);
	}
	/*
	 * 70 pending fences of 70 timelines in one sync_file (a merge keeps
	 * only fences still pending): 'inspect --json' shows every one.
	 */
	{
		static struct kfdsync_timeline *t[70];
		int acc = -1, n = 0, ret;
		char *out = malloc(65536);

		for (int i = 0; i < 70 && out; i++) {
			int f;

			if (kfdsync_timeline_new(&t[i]))
				break;
			f = kfdsync_timeline_create_fence(t[i], 1, NULL);
			kfdsync_sync_file_accumulate(NULL, &acc, f);
			close(f);
		}
		ret = out ? cli(acc, out, 65536, (const char *[]){ "inspect", "--json", "3",
								   NULL }) : -1;
		for (const char *p = out; ret == 0 && (p = strstr(p, "\"driver\"")); p++)
			n++;
		many = n;
		tap_ok(ret == 0 && many == 70, "cli_inspect_json_every_fence (%d of 70)", many);
		free(out);
		if (acc >= 0)
			close(acc);
		for (int i = 0; i < 70; i++)
			kfdsync_timeline_free(t[i]);
	}
}

/*
 * 'kfdsync wait --timeout' is for all the fences together, not each;
 * 'kfdsync merge' says when an input had already failed (the merge cannot
 * carry that error) and does not hand such a merge to a command.
 */
static void cli_wait_merge_tests(void)
{
	char out[4096], cli_path[512];
	int ret;

	snprintf(cli_path, sizeof(cli_path), "%s/bridge/kfdsync", getenv("KFDSYNC_BUILD_ROOT"));
	/*
	 * Fences that signal 6 s apart, the first awaited before the clock
	 * starts; then 7 s for the other two: the last one is too late (a
	 * timeout given to each fence would let every one in). The second
	 * CLI's start d shifts both later fences to 6 - d and 12 - d s after
	 * its clock starts, so the check holds while d < 5 s (an ASan-built
	 * CLI on the debug kernel took more than the 1.5 s it once allowed).
	 */
	ret = cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--count", "3",
		  "--interval", "6000", "--", "sh", "-c", "\"$0\" wait --timeout 20000 3 && "
		  "\"$0\" wait --timeout 7000 4 5; echo r=$?", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "r=124") && strstr(out, "5: timed out") &&
		     !strstr(out, "4: timed out"), out), "cli_wait_timeout_is_total");
	/* Three pending fences: each is named. */
	ret = cli(-1, out, sizeof(out), (const char *[]){ "timeline", "--independent", "--count",
		  "3", "--interval", "0", "--", "sh", "-c", "\"$0\" wait --timeout 500 3 4 5; "
		  "echo r=$?", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "r=124") && strstr(out, "3: timed out") &&
		     strstr(out, "4: timed out") && strstr(out, "5: timed out"), out),
	       "cli_wait_names_every_late_fence");
	/* Fence 3 ended with -ENOENT before the merge: said, exit 1, no command. */
	ret = cli_run("end 1\n", false, false, -1, out, sizeof(out), (const char *[]){
		"timeline", "--count", "2", "--interval", "0", "--stdin", "--independent", "--",
		"sh", "-c", "\"$0\" wait --timeout 10000 3; \"$0\" merge 3 4; echo m=$?; "
		"\"$0\" merge 3 4 -- echo ran; echo c=$?", cli_path, NULL });
	tap_ok(shown(ret == 0 && strstr(out, "m=1") && strstr(out, "c=1") && !strstr(out, "ran") &&
		     strstr(out, "3 had already ended with error -2"), out),
	       "cli_merge_reports_an_input_that_had_failed");
}

/*
 * The no-permission message names the node's real owner, group and mode.
 * Without udev in the guest, /dev/kfdsync is root:root 0600; then as the
 * udev rule would make it.
 */
static void cli_permission_tests(void)
{
	const char *dev = "/dev/kfdsync";
	struct stat st, now;
	char out[4096];
	int ret;

	if (stat(dev, &st) || access("/usr/bin/setpriv", X_OK)) {
		tap_skip("no /dev/kfdsync or setpriv", "cli_permission_root_only_node");
		tap_skip("no /dev/kfdsync or setpriv", "udev_rule_sets_render_0660_uaccess");
		tap_skip("no /dev/kfdsync or setpriv", "cli_permission_group_node");
		tap_skip("no /dev/kfdsync or setpriv", "cli_permission_json_prints_nothing");
		return;
	}
	chown(dev, 0, 0);
	chmod(dev, 0600);
	ret = cli_run(NULL, true, false, -1, out, sizeof(out), (const char *[]){ "info", NULL });
	tap_ok(shown(ret == 1 && strstr(out, "(owner root, group root, mode 0600)") &&
		     strstr(out, "udev rule"), out), "cli_permission_root_only_node");
	/*
	 * The shipped udev rule, applied by udev itself: "udevadm test" reads
	 * /run/udev/rules.d (a tmpfs here) and sets the node's group and mode
	 * as udevd would.
	 */
	char cmd[1024];
	struct group *render = getgrnam("render");
	FILE *p;
	size_t len = 0;

	snprintf(cmd, sizeof(cmd), "mkdir -p /run/udev/rules.d && cp %s/kmod/60-kfdsync.rules "
		 "/run/udev/rules.d/ && udevadm test --action=add /sys/class/misc/kfdsync 2>&1",
		 getenv("KFDSYNC_SOURCE_ROOT"));
	p = render && !access("/usr/bin/udevadm", X_OK) ? popen(cmd, "r") : NULL;
	if (p) {
		for (size_t r; len + 1 < sizeof(out) && (r = fread(out + len, 1,
				sizeof(out) - 1 - len, p)) > 0;)
			len += r;
		out[len] = '\0';
		ret = pclose(p);
		unlink("/run/udev/rules.d/60-kfdsync.rules");
		tap_ok(shown(ret == 0 && strstr(out, "60-kfdsync.rules") && strstr(out, "uaccess") &&
			     !stat(dev, &now) && now.st_gid == render->gr_gid &&
			     (now.st_mode & 07777) == 0660, out),
		       "udev_rule_sets_render_0660_uaccess");
		ret = cli_run(NULL, true, false, -1, out, sizeof(out),
			      (const char *[]){ "info", NULL });
		tap_ok(shown(ret == 1 && strstr(out, "(owner root, group render, mode 0660)") &&
			     strstr(out, "join it"), out), "cli_permission_group_node");
	} else {
		tap_skip("no group render or udevadm here", "udev_rule_sets_render_0660_uaccess");
		tap_skip("no group render or udevadm here", "cli_permission_group_node");
	}
	ret = cli_run(NULL, true, true, -1, out, sizeof(out),
		      (const char *[]){ "info", "--json", NULL });
	tap_ok(shown(ret == 1 && out[0] == '\0', out), "cli_permission_json_prints_nothing");
	chown(dev, st.st_uid, st.st_gid);
	chmod(dev, st.st_mode & 07777);
}

/* True when @n bytes at @p are all zero. */
static bool zeroed(const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * One rule for fence names (> 31 bytes: -EINVAL, never cut) on real
 * sync_files; the structs' reserved space is zeroed on output and must be
 * zero on input.
 */
static void reserved_and_name_tests(int sfa, int sfb)
{
	struct kfdsync_import_desc desc = { .flags = KFDSYNC_IMPORT_MEMORY };
	struct kfdsync_fence_status fences[2];
	struct kfdsync_sync_file_status st;
	struct kfdsync_module_info mi;
	static uint64_t word;
	struct kfdsync_ctx *ctx;
	int m31, m40, n, r1, r2;

	m40 = kfdsync_sync_file_merge("a name of forty bytes, nine too many....", sfa, sfb);
	m31 = kfdsync_sync_file_merge("thirty-one bytes: the longest..", sfa, sfb);
	n = m31 >= 0 ? kfdsync_sync_file_get_status(m31, &st, NULL, 0) : m31;
	tap_ok(m40 == -EINVAL && n >= 0 && !strcmp(st.name, "thirty-one bytes: the longest.."),
	       "sync_file_merge_name_rule (40 bytes: %d, 31 bytes: \"%s\")", m40,
	       n >= 0 ? st.name : "?");
	memset(&st, 0xa5, sizeof(st));
	memset(fences, 0xa5, sizeof(fences));
	n = m31 >= 0 ? kfdsync_sync_file_get_status(m31, &st, fences, 2) : -1;
	/* Both signalled by now: the merge may hold only the kernel's stub. */
	tap_ok(n >= 0 && zeroed(st.reserved, sizeof(st.reserved)) &&
	       (n == 0 || (zeroed(fences[0].reserved, sizeof(fences[0].reserved)) &&
			   fences[0].pad == 0)), "sync_file_status_reserved_zeroed (%d)", n);
	if (m31 >= 0)
		close(m31);
	if (kfdsync_ctx_new(&ctx)) {
		tap_ok(false, "import_desc_reserved_must_be_zero: no context");
		tap_ok(false, "module_info_reserved_zeroed: no context");
		return;
	}
	desc.addr = &word;
	desc.value = 1;
	desc.reserved[3] = 1;
	r1 = kfdsync_import_sync_file(ctx, sfa, &desc);
	desc.reserved[3] = 0;
	desc.pad = 1;
	r2 = kfdsync_import_sync_file(ctx, sfa, &desc);
	tap_ok(r1 == -EINVAL && r2 == -EINVAL, "import_desc_reserved_must_be_zero (%d, %d)", r1,
	       r2);
	memset(&mi, 0xa5, sizeof(mi));
	tap_ok(kfdsync_ctx_get_module_info(ctx, &mi) == 0 && zeroed(mi.reserved, sizeof(mi.reserved)) &&
	       memchr(mi.release, '\0', sizeof(mi.release)), "module_info_reserved_zeroed");
	kfdsync_ctx_free(ctx);
}

int main(void)
{
	struct kfdsync_fence_status fences[4];
	struct kfdsync_sync_file_status st;
	struct vgem_buffer a, b, c, d, e;
	struct kfdsync_module_info mi;
	struct kfdsync_ctx *ctx;
	char out[4096], proc_path[64], watchdog[32] = "";
	struct utsname uts;
	int vgem, sfa, sfb, sfm, sfc, sfd, sfe, n;

	tap_plan(62);
	uname(&uts);
	if (!tap_ok(kfdsync_ctx_new(&ctx) == 0, "ctx_new"))
		tap_bail("no kfdsync context");
	memset(&mi, 0, sizeof(mi));
	n = kfdsync_ctx_get_module_info(ctx, &mi);
	tap_ok(n == 0 && mi.abi_version == KFDSYNC_ABI_VERSION && !strcmp(mi.release, uts.release),
	       "module_info_abi_and_release (%s)", mi.release);
	kfdsync_ctx_free(ctx);
	if (mi.flags & KFDSYNC_INFO_AMDKFD_UNVERIFIED) {
		/* The gate: no hooks on an amdkfd ABI kfdsync does not implement. */
		snprintf(out, sizeof(out), "amdkfd of %s has no ABI this kfdsync implements: relay mode",
			 mi.release);
		tap_skip(out, "module_info_hooks_attached");
		tap_skip(out, "cli_info");
		tap_skip(out, "cli_info_json");
	} else {
		tap_ok((mi.flags & KFDSYNC_INFO_AMDKFD_PRESENT) &&
		       (mi.hooks & KFDSYNC_HOOK_GPU_INTERRUPT),
		       "module_info_hooks_attached (%#x)", mi.hooks);
		/* The capabilities too, and why one is missing (deadlines before 6.4). */
		tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "info", NULL }) == 0 &&
		       strstr(out, "mode:     hooks") && strstr(out, "gpu_interrupt") &&
		       strstr(out, "\nsupports: hooks ") && strstr(out, " hsa import ") &&
		       (strstr(out, " deadline ") || strstr(out, "missing:  deadline: Linux")),
		       "cli_info");
		if (!strstr(out, "supports:"))
			tap_diag("%s", out);
		tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "info", "--json", NULL }) == 0 &&
		       strstr(out, "\"abi_version\": 1") && strstr(out, "\"mode\": \"hooks\"") &&
		       strstr(out, "\"caps\": {\"hooks\": true, ") &&
		       strstr(out, "\"missing\": {"), "cli_info_json");
	}

	vgem = drm_open_driver("vgem", false);
	if (vgem < 0)
		tap_bail("no vgem device");
	fenced_buffer(vgem, &a);

	/* A reader of @a waits for its writer: vgem's fence. */
	sfa = kfdsync_dmabuf_export_sync_file(a.dmabuf, KFDSYNC_DMABUF_READ);
	tap_ok(sfa >= 0 && kfdsync_sync_file_check(sfa) == 1 &&
	       (fcntl(sfa, F_GETFD) & FD_CLOEXEC), "dmabuf_export_gives_cloexec_sync_file");
	n = kfdsync_sync_file_get_status(sfa, &st, fences, 4);
	vgem_ok(&a, n == 1 && st.status == 0 && !strcmp(fences[0].driver, "vgem") &&
		fences[0].status == 0, "sync_file_status_pending_vgem (%d, %s)", n, fences[0].driver);
	vgem_ok(&a, kfdsync_sync_file_wait(sfa, 10 * MS) == -ETIME,
		"sync_file_wait_pending_times_out");
	vgem_ok(&a, kfdsync_sync_file_wait(sfa, 0) == -ETIME, "sync_file_wait_zero_polls");
	vgem_ok(&a, cli(sfa, out, sizeof(out), (const char *[]){ "inspect", "3", NULL }) == 0 &&
		strstr(out, "pending") && strstr(out, "vgem"), "cli_inspect_pending");

	/* One fresh fence per CLI run from here: see vgem_ok(). */
	fenced_buffer(vgem, &e);
	sfe = kfdsync_dmabuf_export_sync_file(e.dmabuf, KFDSYNC_DMABUF_READ);
	snprintf(proc_path, sizeof(proc_path), "/proc/%d/fd/%d", getpid(), sfe);
	vgem_ok(&e, cli(-1, out, sizeof(out), (const char *[]){ "inspect", "--json", proc_path,
								NULL }) == 0 &&
		strstr(out, "\"status\": \"pending\"") && strstr(out, "\"driver\": \"vgem\""),
		"cli_inspect_other_process_fd_json");
	close(sfe);
	vgem_buffer_free(vgem, &e);
	fenced_buffer(vgem, &e);
	sfe = kfdsync_dmabuf_export_sync_file(e.dmabuf, KFDSYNC_DMABUF_READ);
	vgem_ok(&e, cli(sfe, out, sizeof(out), (const char *[]){ "wait", "--timeout", "50", "3",
								 NULL }) == 124 &&
		strstr(out, "timed out"), "cli_wait_times_out_124");
	close(sfe);
	vgem_buffer_free(vgem, &e);

	/* Merges and imports, on fresh fences @a and @b, no CLI run until both signalled. */
	close(sfa);
	vgem_buffer_free(vgem, &a);
	fenced_buffer(vgem, &a);
	fenced_buffer(vgem, &b);
	if (!vgem_buffer_new(vgem, &c, false))
		tap_bail("cannot create a vgem buffer");
	sfa = kfdsync_dmabuf_export_sync_file(a.dmabuf, KFDSYNC_DMABUF_READ);
	sfb = kfdsync_dmabuf_export_sync_file(b.dmabuf, KFDSYNC_DMABUF_WRITE);
	sfm = kfdsync_sync_file_merge("both", sfa, sfb);
	n = kfdsync_sync_file_get_status(sfm, &st, fences, 1);
	vgem_ok(&a, sfm >= 0 && n == 2 && !strcmp(st.name, "both") && st.status == 0,
		"sync_file_merge_holds_both (%d fences, name %s)", n, st.name);
	vgem_ok(&a, n == 2 && st.num_fences == 2, "sync_file_status_reports_more_than_asked");

	/* @c has no fence; give it @b's as a write: readers of @c now wait. */
	tap_ok(kfdsync_dmabuf_import_sync_file(c.dmabuf, sfb, KFDSYNC_DMABUF_WRITE) == 0,
	       "dmabuf_import_sync_file");
	sfc = kfdsync_dmabuf_export_sync_file(c.dmabuf, KFDSYNC_DMABUF_READ);
	vgem_ok(&b, sfc >= 0 && kfdsync_sync_file_wait(sfc, 0) == -ETIME,
		"dmabuf_imported_fence_is_waited_for");

	/* Nothing signalled early; now signal @a only. */
	vgem_ok(&a, vgem_fence_signal(vgem, a.fence), "vgem_signal_a");
	tap_ok(kfdsync_sync_file_wait(sfa, 1000 * MS) == 0 &&
	       kfdsync_sync_file_get_status(sfa, &st, fences, 1) == 1 && st.status == 1 &&
	       fences[0].timestamp_ns, "sync_file_signalled_with_timestamp");
	vgem_ok(&b, kfdsync_sync_file_wait(sfm, 0) == -ETIME, "sync_file_merge_waits_for_both");
	vgem_ok(&b, vgem_fence_signal(vgem, b.fence) &&
		kfdsync_sync_file_wait(sfm, 1000 * MS) == 0 &&
		kfdsync_sync_file_wait(sfc, 1000 * MS) == 0, "sync_file_merge_and_import_signal");
	tap_ok(cli(sfa, out, sizeof(out), (const char *[]){ "wait", "--timeout", "1000", "3",
							    NULL }) == 0, "cli_wait_signalled_0");

	/* drm_syncobj round trips (6.12's virtio-gpu). */
	fenced_buffer(vgem, &d);
	sfd = kfdsync_dmabuf_export_sync_file(d.dmabuf, KFDSYNC_DMABUF_READ);
	syncobj_tests(sfd, vgem, &d);

	/*
	 * "Still pending" must not depend on how fast the guest runs the CLI
	 * scripts (on the debug kernel a chain of three CLI runs outlasts
	 * 10 s): the module's watchdog (10 s by default, taken when a timeline
	 * is opened) at its maximum while they run.
	 */
	if (kfdsync_param_read("watchdog_ms", watchdog, sizeof(watchdog)) ||
	    kfdsync_param_write("watchdog_ms", "60000"))
		tap_diag("cannot raise kfdsync's watchdog_ms: pending checks may race it");
	timeline_tests();
	cli_timeline_step_tests();
	wait_many_tests();
	cli_wait_merge_tests();
	if (watchdog[0])
		kfdsync_param_write("watchdog_ms", watchdog);
	cli_permission_tests();

	tap_ok(kfdsync_sync_file_merge(NULL, sfa, vgem) == -EINVAL, "sync_file_merge_non_sync_file");
	reserved_and_name_tests(sfa, sfb);
	/* A DRM device is not a dma-buf: bad input, not "not supported". */
	tap_ok(kfdsync_dmabuf_export_sync_file(vgem, KFDSYNC_DMABUF_READ) == -EINVAL,
	       "dmabuf_export_not_dmabuf");

	close(sfa);
	close(sfb);
	close(sfm);
	close(sfc);
	close(sfd);
	vgem_buffer_free(vgem, &a);
	vgem_buffer_free(vgem, &b);
	vgem_buffer_free(vgem, &c);
	vgem_buffer_free(vgem, &d);
	close(vgem);
	return tap_exit();
}
