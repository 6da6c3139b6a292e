// SPDX-License-Identifier: MIT
/*
 * kfdsync_export_unload: kfdsync and amdgpu unloaded under exported fences.
 *
 * How this program works: with its own event registered (kfdsync_export.h),
 * it closes its context while a sync_file is held (the fence ends with
 * -ECANCELED), unloads kfdsync (refused until the sync_file is closed) and
 * reloads it with the mode it had; then, with this process off /dev/kfd,
 * it unloads amdgpu while a context exists and another process (this
 * program again, tests/common/child.h) holds a pending fence, which ends
 * with -EIO, and loads amdgpu again: the hooks detach and attach. Tests
 * register themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include "kmod.h"
#include "sim_test.h"
#include "kfdsync_export.h"

/*
 * A process that hands a pending fence to the parent, then lets go of
 * /dev/kfd entirely (so amdgpu can be unloaded) but keeps its context.
 */
static int child_amdgpu(int sock)
{
	struct msg m;
	HsaEvent *ev;
	int fence, code;

	child_setup();
	code = child_pending_fence(&ev, &fence);
	if (code)
		return code;
	msg_send(sock, MSG_FDS, 1, &fence, 1);
	close(fence);
	/* Off /dev/kfd; the event stays in amdkfd until amdgpu goes. */
	unmap_events_area(ev);
	hsaKmtCloseKFD();
	msg_send(sock, MSG_READY, 0, NULL, 0);
	while (msg_recv(sock, &m, NULL, NULL) && m.cmd != MSG_EXIT)
		;
	return 0;
}

static const struct export_child children[] = {
	{ "amdgpu", child_amdgpu },
	{ NULL, NULL },
};

/* ---- tests (in this order: amdgpu_cycle takes everything down) ---- */

/*
 * Closing the context cancels a fence, and its sync_file keeps kfdsync
 * loaded until it is closed; kfdsync is reloaded with the mode it had.
 */
TEST(rmmod)
{
	const char *skip = NULL;
	char params[64];
	int fence, ret;

	if (!getenv("KFDSYNC_KMOD_DIR") || geteuid())
		skip = "needs the guest (KFDSYNC_KMOD_DIR, root)";
	fence = export(kfdsync, ev1->EventId, ev_age(kfdsync, ev1->EventId));
	relay_stop(&relay1);
	snprintf(params, sizeof(params), "hooks=%d", relay_mode ? 0 : 1);
	/* Closing the context cancels the fence; the sync_file keeps it. */
	close(kfdsync);
	kfdsync = -1;
	readable(fence, WAIT_MS);
	if (skip) {
		tap_ok(fence_status(fence) == -ECANCELED, "context_close_cancels_fence");
		tap_skip(skip, "rmmod_refused_while_sync_file_held");
		tap_skip(skip, "rmmod_after_sync_file_closed");
		close(fence);
		return;
	}
	tap_ok(fence_status(fence) == -ECANCELED, "context_close_cancels_fence");

	ret = kmod_unload("kfdsync", 1);
	tap_ok(ret == -EWOULDBLOCK || ret == -EBUSY || ret == -EAGAIN,
	       "rmmod_refused_while_sync_file_held (%s)", strerror(-ret));
	if (!ret)
		kmod_load_project("kmod/kfdsync.ko", params);

	close(fence);
	ret = kmod_unload("kfdsync", 50);
	if (!ret) {
		int lret = kmod_load_project("kmod/kfdsync.ko", params);

		if (lret)
			tap_diag("reload kfdsync %s: %s", params, strerror(-lret));
		ret = lret;
	}
	tap_ok(!ret, "rmmod_after_sync_file_closed (%s)", strerror(-ret));
}

static uint32_t info_hooks(int fd, uint32_t *flags)
{
	struct kfdsync_info info = { 0 };

	if (ioctl(fd, KFDSYNC_IOCTL_INFO, &info))
		return ~0U;
	*flags = info.info_flags;
	return info.hooks;
}

/*
 * amdgpu unloads while a context exists and another process holds a
 * pending fence; the fence ends with -EIO, the hooks detach, and attach
 * again when amdgpu comes back. It takes this process off kfdsync and
 * /dev/kfd first (export_teardown()), so it runs last.
 */
TEST(amdgpu_cycle)
{
	static const char *const names[] = {
		"amdgpu_unload_with_contexts", "amdgpu_gone_fence_eio",
		"amdgpu_gone_hooks_detached", "amdgpu_back_hooks_attached",
	};
	uint32_t hooks, flags = 0;
	int sock, fence = -1, ctx, ret, status = 1, code;
	unsigned int i, n = 0;
	struct msg m;
	pid_t pid;

	if (!getenv("KFDSYNC_KMOD_DIR") || geteuid()) {
		for (i = 0; i < ARRAY_SIZE(names); i++)
			tap_skip("needs the guest (KFDSYNC_KMOD_DIR, root)", "%s", names[i]);
		return;
	}
	/* Off /dev/kfd entirely, so that amdgpu can go. */
	export_teardown();
	ctx = open_kfdsync();
	pid = spawn_child("amdgpu", &sock);
	if (!msg_recv(sock, &m, &fence, &n) || m.cmd != MSG_FDS || n != 1 ||
	    !msg_recv(sock, &m, NULL, NULL) || m.cmd != MSG_READY)
		tap_bail("amdgpu child failed (status %d)", reap(pid));

	ret = kmod_unload("amdgpu", 50);
	tap_ok(!ret, "%s (%s)", names[0], strerror(-ret));
	if (!ret) {
		readable(fence, WAIT_MS);
		status = fence_status(fence);
	}
	tap_ok(status == -EIO, "%s (%d)", names[1], status);
	hooks = info_hooks(ctx, &flags);
	tap_ok(!ret && !hooks && !(flags & KFDSYNC_INFO_AMDKFD_PRESENT), "%s (%#x, %#x)",
	       names[2], hooks, flags);

	code = system("modprobe amdgpu");
	hooks = info_hooks(ctx, &flags);
	tap_ok(!code && (flags & KFDSYNC_INFO_AMDKFD_PRESENT) &&
	       hooks == (relay_mode ? 0 : (KFDSYNC_HOOK_GPU_INTERRUPT | KFDSYNC_HOOK_CPU_SET |
					   KFDSYNC_HOOK_HW_EXCEPTION | KFDSYNC_HOOK_VM_FAULT |
					   KFDSYNC_HOOK_RESET | KFDSYNC_HOOK_POISON |
					   KFDSYNC_HOOK_DESTROY | KFDSYNC_HOOK_FREE)),
	       "%s (%#x)", names[3], hooks);

	msg_send(sock, MSG_EXIT, 0, NULL, 0);
	code = reap(pid);
	if (code)
		tap_diag("amdgpu child exited with %d", code);
	close(sock);
	close(fence);
	close(ctx);
}

int main(int argc, char **argv)
{
	return export_main(argc, argv, NULL, children);
}
