// SPDX-License-Identifier: MIT
/*
 * bridge_guest - libkfdsync and the kfdsync CLI against the real module and
 * real fences from another driver (vgem), in the guest.
 *
 * vgem attaches a fence to a buffer and signals it on request, so the test
 * controls exactly when each fence signals and can check that nothing in
 * the library or CLI reports "signalled" before that.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include "kfdsync.h"
#include "tap.h"
#include "vgem.h"

extern char **environ;

#define MS 1000000LL

/* Run the CLI with @fd as its fd 3; capture stdout+stderr; return status. */
static int cli(int fd, char *out, size_t size, const char *const *args)
{
	char cli_path[512], *argv[24];
	posix_spawn_file_actions_t fa;
	int p[2], status = -1, n = 0;
	size_t len = 0;
	pid_t pid;

	snprintf(cli_path, sizeof(cli_path), "%s/bridge/kfdsync", getenv("KFDSYNC_BUILD_ROOT"));
	argv[n++] = cli_path;
	while (*args && n < 23)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	if (pipe(p))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	if (fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, fd, 3);	/* clears CLOEXEC */
	if (posix_spawn(&pid, cli_path, &fa, NULL, argv, environ) == 0) {
		close(p[1]);
		for (ssize_t r; len + 1 < size && (r = read(p[0], out + len, size - len - 1)) > 0;)
			len += r;
		waitpid(pid, &status, 0);
	} else {
		close(p[1]);
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	out[len] = '\0';
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void syncobj_tests(int sf_pending, int vgem, uint32_t fence)
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
		vgem_fence_signal(vgem, fence);
		return;
	}
	drmSyncobjCreate(drm, 0, &bin);
	drmSyncobjCreate(drm, 0, &tl);
	fd = -1;
	tap_ok(kfdsync_syncobj_import_sync_file(drm, bin, 0, sf_pending) == 0 &&
	       (fd = kfdsync_syncobj_export_sync_file(drm, bin, 0)) >= 0 &&
	       kfdsync_sync_file_wait(fd, 0) == -ETIME, "syncobj_binary_round_trip_pending");
	int tfd = -1;

	tap_ok(kfdsync_syncobj_import_sync_file(drm, tl, 5, sf_pending) == 0 &&
	       (tfd = kfdsync_syncobj_export_sync_file(drm, tl, 5)) >= 0 &&
	       kfdsync_sync_file_wait(tfd, 0) == -ETIME, "syncobj_timeline_point_round_trip");
	tap_ok(kfdsync_syncobj_export_sync_file(drm, 0xdead, 0) == -ENOENT, "syncobj_bad_handle");
	vgem_fence_signal(vgem, fence);
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

int main(void)
{
	struct kfdsync_fence_status fences[4];
	struct kfdsync_sync_file_status st;
	struct vgem_buffer a, b, c, d;
	struct kfdsync_module_info mi;
	struct kfdsync_ctx *ctx;
	char out[4096], proc_path[64];
	struct utsname uts;
	int vgem, sfa, sfb, sfm, sfc, sfd, n;

	tap_plan(40);
	uname(&uts);
	if (!tap_ok(kfdsync_ctx_new(&ctx) == 0, "ctx_new"))
		tap_bail("no kfdsync context");
	memset(&mi, 0, sizeof(mi));
	n = kfdsync_ctx_get_module_info(ctx, &mi);
	tap_ok(n == 0 && mi.abi_version == KFDSYNC_ABI_VERSION && !strcmp(mi.release, uts.release),
	       "module_info_abi_and_release (%s)", mi.release);
	tap_ok((mi.flags & KFDSYNC_INFO_AMDKFD_PRESENT) && (mi.hooks & KFDSYNC_HOOK_GPU_INTERRUPT),
	       "module_info_hooks_attached (%#x)", mi.hooks);
	kfdsync_ctx_free(ctx);

	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "info", NULL }) == 0 &&
	       strstr(out, "mode:     hooks") && strstr(out, "gpu_interrupt"), "cli_info");
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "info", "--json", NULL }) == 0 &&
	       strstr(out, "\"abi_version\": 1") && strstr(out, "\"mode\": \"hooks\""),
	       "cli_info_json");

	vgem = drm_open_driver("vgem", false);
	if (vgem < 0)
		tap_bail("no vgem device");
	if (!vgem_buffer_new(vgem, &a, true) || !vgem_buffer_new(vgem, &b, true) ||
	    !vgem_buffer_new(vgem, &c, false) || !vgem_buffer_new(vgem, &d, true))
		tap_bail("cannot create fenced vgem buffers");

	/* A reader of @a waits for its writer: vgem's fence. */
	sfa = kfdsync_dmabuf_export_sync_file(a.dmabuf, KFDSYNC_DMABUF_READ);
	tap_ok(sfa >= 0 && kfdsync_sync_file_check(sfa) == 1 &&
	       (fcntl(sfa, F_GETFD) & FD_CLOEXEC), "dmabuf_export_gives_cloexec_sync_file");
	n = kfdsync_sync_file_get_status(sfa, &st, fences, 4);
	tap_ok(n == 1 && st.status == 0 && !strcmp(fences[0].driver, "vgem") &&
	       fences[0].status == 0, "sync_file_status_pending_vgem (%d, %s)", n, fences[0].driver);
	tap_ok(kfdsync_sync_file_wait(sfa, 10 * MS) == -ETIME, "sync_file_wait_pending_times_out");
	tap_ok(kfdsync_sync_file_wait(sfa, 0) == -ETIME, "sync_file_wait_zero_polls");
	tap_ok(cli(sfa, out, sizeof(out), (const char *[]){ "inspect", "3", NULL }) == 0 &&
	       strstr(out, "pending") && strstr(out, "vgem"), "cli_inspect_pending");
	snprintf(proc_path, sizeof(proc_path), "/proc/%d/fd/%d", getpid(), sfa);
	tap_ok(cli(-1, out, sizeof(out), (const char *[]){ "inspect", "--json", proc_path, NULL }) == 0 &&
	       strstr(out, "\"status\": \"pending\"") && strstr(out, "\"driver\": \"vgem\""),
	       "cli_inspect_other_process_fd_json");
	tap_ok(cli(sfa, out, sizeof(out), (const char *[]){ "wait", "--timeout", "50", "3", NULL }) ==
	       124 && strstr(out, "timed out"), "cli_wait_times_out_124");

	sfb = kfdsync_dmabuf_export_sync_file(b.dmabuf, KFDSYNC_DMABUF_WRITE);
	sfm = kfdsync_sync_file_merge("both", sfa, sfb);
	n = kfdsync_sync_file_get_status(sfm, &st, fences, 1);
	tap_ok(sfm >= 0 && n == 2 && !strcmp(st.name, "both") && st.status == 0,
	       "sync_file_merge_holds_both (%d fences, name %s)", n, st.name);
	tap_ok(n == 2 && st.num_fences == 2, "sync_file_status_reports_more_than_asked");

	/* @c has no fence; give it @b's as a write: readers of @c now wait. */
	tap_ok(kfdsync_dmabuf_import_sync_file(c.dmabuf, sfb, KFDSYNC_DMABUF_WRITE) == 0,
	       "dmabuf_import_sync_file");
	sfc = kfdsync_dmabuf_export_sync_file(c.dmabuf, KFDSYNC_DMABUF_READ);
	tap_ok(sfc >= 0 && kfdsync_sync_file_wait(sfc, 0) == -ETIME,
	       "dmabuf_imported_fence_is_waited_for");

	/* Nothing signalled early; now signal @a only. */
	tap_ok(vgem_fence_signal(vgem, a.fence), "vgem_signal_a");
	tap_ok(kfdsync_sync_file_wait(sfa, 1000 * MS) == 0 &&
	       kfdsync_sync_file_get_status(sfa, &st, fences, 1) == 1 && st.status == 1 &&
	       fences[0].timestamp_ns, "sync_file_signalled_with_timestamp");
	tap_ok(kfdsync_sync_file_wait(sfm, 0) == -ETIME, "sync_file_merge_waits_for_both");
	tap_ok(cli(sfa, out, sizeof(out), (const char *[]){ "wait", "--timeout", "1000", "3",
							    NULL }) == 0, "cli_wait_signalled_0");
	tap_ok(vgem_fence_signal(vgem, b.fence) && kfdsync_sync_file_wait(sfm, 1000 * MS) == 0 &&
	       kfdsync_sync_file_wait(sfc, 1000 * MS) == 0, "sync_file_merge_and_import_signal");

	/* drm_syncobj round trips (6.12's virtio-gpu). */
	sfd = kfdsync_dmabuf_export_sync_file(d.dmabuf, KFDSYNC_DMABUF_READ);
	syncobj_tests(sfd, vgem, d.fence);

	timeline_tests();

	tap_ok(kfdsync_sync_file_merge(NULL, sfa, vgem) == -EINVAL, "sync_file_merge_non_sync_file");
	tap_ok(kfdsync_dmabuf_export_sync_file(vgem, KFDSYNC_DMABUF_READ) == -ENOTTY,
	       "dmabuf_export_not_dmabuf");

	close(sfa);
	close(sfb);
	close(sfm);
	close(sfc);
	close(sfd);
	close(a.dmabuf);
	close(b.dmabuf);
	close(c.dmabuf);
	close(d.dmabuf);
	close(vgem);
	return tap_exit();
}
