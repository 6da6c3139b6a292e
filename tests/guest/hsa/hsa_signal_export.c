// SPDX-License-Identifier: MIT
/*
 * hsa_signal, its exports (see hsa_signal.c): HSA signals as sync_files
 * and eventfds.
 *
 * Interrupt signals are described (value, KFD event, mailbox), exported
 * born signalled or pending, ended by a CPU store
 * (hsa_signal_store_screlease() from another thread: table-driven over the
 * four conditions), an eventfd, a simulated GPU completion, their event's
 * unregistration, the watchdog or an upstream error; max_fences counts
 * them; bad input gets the documented errnos; a freed context's hints are
 * harmless. After a store the event's age has advanced (kfdsync saw the
 * hint and checked the value), so "not signalled" then is a real answer,
 * not a race.
 */

#include <sys/eventfd.h>
#include <sys/mman.h>

#include "hsa_signal.h"

TEST(describe)
{
	hsa_signal_t s = signal_new(1);
	const int64_t *amd = (const int64_t *)(uintptr_t)s.handle;
	struct kfdsync_hsa_signal sig;
	int ret = kfdsync_hsa_signal_describe(s, &sig);

	tap_ok(ret == 0 && amd[0] == 1 && sig.value == (int64_t *)(uintptr_t)(s.handle + 8) &&
	       *sig.value == 1 && sig.event_id != 0 && sig.mailbox != 0,
	       "signal_describe_interrupt (event %u, mailbox %#" PRIx64 ")", sig.event_id,
	       sig.mailbox);
	tap_ok(kfdsync_hsa_signal_from_amd_signal(NULL, &sig) == -EINVAL &&
	       kfdsync_hsa_signal_from_amd_signal((const char *)(uintptr_t)s.handle + 4, &sig) ==
	       -EINVAL, "signal_describe_bad_pointer");
	hsa_signal_destroy(s);
}

/* Born signalled when the condition already holds; pending otherwise. */
TEST(born_signalled)
{
	hsa_signal_t s = signal_new(7);
	struct kfdsync_hsa_signal sig = describe(s);
	int yes = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 7, 0);
	int no = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 6, 0);

	tap_ok(yes >= 0 && fence_status(yes) == 1, "export_born_signalled");
	tap_ok(no >= 0 && fence_status(no) == 0, "export_pending_when_false");
	if (yes >= 0)
		close(yes);
	if (no >= 0)
		close(no);
	hsa_signal_destroy(s);
}

/*
 * hsa_signal_store_screlease() from another thread, per condition. The
 * signals stay alive until the end: their ROCr async handlers end on their
 * own once the condition held, but asynchronously.
 */
TEST(cpu_store)
{
	HOOKS_MODE_ONLY();

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		hsa_signal_t s = armed[n_armed++] = signal_new(cases[i].initial);
		int fd = kfdsync_hsa_export_sync_file(ctx, s, cases[i].cond, cases[i].compare, 0);
		bool hinted, stored_yes;
		int after_no, after_yes;

		if (fd < 0) {
			tap_ok(false, "cpu_store_%s: export: %s", cases[i].name, strerror(-fd));
			continue;
		}
		hinted = store_until_hint(s, cases[i].no);
		after_no = fence_status(fd);
		stored_yes = store_from_thread(s, cases[i].yes);
		after_yes = readable(fd, WAIT_MS) ? fence_status(fd) : fence_status(fd);
		tap_ok(hinted && after_no == 0 && stored_yes && after_yes == 1,
		       "cpu_store_%s (hinted %d, after %" PRId64 ": %d, after %" PRId64 ": %d)",
		       cases[i].name, hinted, cases[i].no, after_no, cases[i].yes, after_yes);
		close(fd);
	}
}

/* The same, woken through an eventfd. */
TEST(eventfd)
{
	HOOKS_MODE_ONLY();

	hsa_signal_t s = armed[n_armed++] = signal_new(0);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int ret = kfdsync_hsa_export_eventfd(ctx, s, HSA_SIGNAL_CONDITION_GTE, 10, 0, efd);
	bool no, yes;

	no = store_until_hint(s, 3) && !readable(efd, 0);
	yes = store_from_thread(s, 10) && readable(efd, WAIT_MS);
	tap_ok(ret == 0 && no && yes, "eventfd_gte (ret %d)", ret);
	close(efd);
}

TEST(gpu_completion)
{
	HOOKS_MODE_ONLY();

	hsa_signal_t s = signal_new(2);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 0, 0);
	uint64_t age, end;
	int first, second;
	bool ran;

	if (fd < 0) {
		tap_ok(false, "gpu_completion_counts_down: export: %s", strerror(-fd));
		hsa_signal_destroy(s);
		return;
	}
	age = event_age(sig.event_id);
	end = gpu_complete(&sig, 1);	/* 2 -> 1: not yet */
	ran = wait_age(sig.event_id, age + 1);
	first = fence_status(fd);
	end = gpu_complete(&sig, 0);	/* 1 -> 0: done */
	second = readable(fd, WAIT_MS) ? fence_status(fd) : fence_status(fd);
	tap_ok(ran && first == 0 && second == 1 && queue_status(sim, queue).completed >= end &&
	       hsa_signal_load_scacquire(s) == 0,
	       "gpu_completion_counts_down (after 1: %d, after 0: %d)", first, second);
	close(fd);
	hsa_signal_destroy(s);
}

/* A sticky end of the event (here: unregistered) ends condition fences. */
TEST(unregister_cancels)
{
	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 0, 0);
	int before = fd >= 0 ? fence_status(fd) : -1000;
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = { .num_fences = 1, .sync_fence_info = (uintptr_t)&fi };

	bool info_ok;

	kfdsync_event_remove(ctx, sig.event_id);
	info_ok = fd >= 0 && ioctl(fd, SYNC_IOC_FILE_INFO, &info) == 0;
	tap_ok(info_ok && before == 0 && fi.status == -ECANCELED &&
	       !strcmp(fi.driver_name, "kfdsync"), "unregister_cancels (status %d)", fi.status);
	if (fd >= 0)
		close(fd);
	hsa_signal_destroy(s);
}

/* A condition that never holds ends by its watchdog. */
TEST(watchdog)
{
	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 0, 50 * MS);
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = { .num_fences = 1, .sync_fence_info = (uintptr_t)&fi };
	bool ended = fd >= 0 && readable(fd, WAIT_MS);
	bool info_ok = ended && ioctl(fd, SYNC_IOC_FILE_INFO, &info) == 0;

	tap_ok(info_ok && fi.status == -ETIMEDOUT, "watchdog_ends_condition (status %d)",
	       fi.status);
	if (fd >= 0)
		close(fd);
	hsa_signal_destroy(s);
}

static int param_rw(const char *name, int val)
{
	char path[128];
	int old = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/kfdsync/parameters/%s", name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d", &old) != 1)
		old = -1;
	if (f)
		fclose(f);
	if (old < 0 || val < 0)
		return old;
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", val);
	return fclose(f) ? -1 : old;
}

/* Pending condition fences count against max_fences (a new context's). */
TEST(max_fences)
{
	HOOKS_MODE_ONLY();

	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int old = param_rw("max_fences", 2), fds[3], ret;
	struct kfdsync_ctx *small;

	if (old < 0) {
		tap_skip("cannot set kfdsync's max_fences", "max_fences_enospc");
		hsa_signal_destroy(s);
		return;
	}
	ret = kfdsync_ctx_new(&small);
	param_rw("max_fences", old);
	if (ret) {
		tap_ok(false, "max_fences_enospc: ctx_new: %s", strerror(-ret));
		hsa_signal_destroy(s);
		return;
	}
	for (int i = 0; i < 3; i++)
		fds[i] = kfdsync_hsa_signal_export_sync_file(small, &sig, KFDSYNC_HSA_EQ, 0, 0);
	/* Born signalled ones do not count. */
	ret = kfdsync_hsa_signal_export_sync_file(small, &sig, KFDSYNC_HSA_EQ, 1, 0);
	tap_ok(fds[0] >= 0 && fds[1] >= 0 && fds[2] == -ENOSPC && ret >= 0,
	       "max_fences_enospc (%d, born %d)", fds[2], ret);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ret >= 0)
		close(ret);
	kfdsync_ctx_free(small);
	hsa_signal_destroy(s);
}

/*
 * An upstream fence's error reaches a condition fence: an import with
 * KFDSYNC_IMPORT_FAIL_EVENT gives the signal's event the error, which ends
 * its pending condition fences and every later export of it.
 */
TEST(import_fail_event)
{
	HOOKS_MODE_ONLY();

	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 0, 0);
	struct kfdsync_import_desc desc = { .flags = KFDSYNC_IMPORT_FAIL_EVENT,
					    .fail_event_id = sig.event_id };
	struct kfdsync_timeline *tl = NULL;
	int tfd = -1, ret = -1, later = -1, first, second;
	bool ended = false;

	if (fd >= 0 && !kfdsync_timeline_new(&tl))
		tfd = kfdsync_timeline_create_fence(tl, 1, "upstream");
	if (tfd >= 0) {
		ret = kfdsync_import_sync_file(ctx, tfd, &desc);
		close(tfd);
	}
	kfdsync_timeline_free(tl);	/* its pending fence ends with -ENOENT */
	if (ret == 0)
		ended = readable(fd, WAIT_MS);
	first = fd >= 0 ? fence_error(fd) : fd;
	if (ended)
		later = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 1, 0);
	second = later >= 0 ? fence_error(later) : later;
	tap_ok(ret == 0 && ended && first == -ENOENT && second == -ENOENT,
	       "import_error_ends_condition (import %d, pending %d, later %d)", ret, first,
	       second);
	if (fd >= 0)
		close(fd);
	if (later >= 0)
		close(later);
	/* A fresh registration has no error. */
	kfdsync_event_remove(ctx, sig.event_id);
	hsa_signal_destroy(s);
}

static int raw_export(int fd, uint32_t event_id, uint32_t flags, uint64_t addr,
		      uint32_t condition, int64_t compare, int32_t *inout_fd)
{
	struct kfdsync_export_condition a = {
		.event_id = event_id, .flags = flags, .value_addr = addr,
		.compare_value = compare, .condition = condition,
		.fd = inout_fd ? *inout_fd : 0,
	};

	if (ioctl(fd, KFDSYNC_IOCTL_EXPORT_CONDITION, &a))
		return -errno;
	if (inout_fd)
		*inout_fd = a.fd;
	return 0;
}

TEST(bad_input)
{
	HOOKS_MODE_ONLY();

	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	uint64_t addr = (uint64_t)(uintptr_t)sig.value;
	int kfd = kfdsync_ctx_fd(ctx), efd = eventfd(0, EFD_CLOEXEC), out = 0;
	void *hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int32_t notev = 0, badfd = -1;

	munmap(hole, 4096);
	/* Registered through the library, so only the argument is wrong. */
	close(kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 1, 0));

	tap_errno(raw_export(kfd, sig.event_id, 0, addr, 4, 0, &out), EINVAL,
		  "bad_condition_einval");
	tap_errno(raw_export(kfd, sig.event_id, 0x80, addr, 0, 0, &out), EINVAL,
		  "bad_flags_einval");
	tap_errno(raw_export(kfd, sig.event_id, 0, addr + 4, 0, 0, &out), EINVAL,
		  "misaligned_value_einval");
	tap_errno(raw_export(kfd, sig.event_id, 0, (uint64_t)(uintptr_t)hole, 0, 0, &out), EFAULT,
		  "unmapped_value_efault");
	/* The mailbox is amdkfd's events page: a device mapping, not pinnable. */
	tap_errno(raw_export(kfd, sig.event_id, 0, sig.mailbox, 0, 0, &out), EFAULT,
		  "device_mapping_value_efault");
	tap_errno(raw_export(kfd, 4000, 0, addr, 0, 0, &out), ENOENT,
		  "unregistered_event_enoent");
	notev = kfd;
	tap_errno(raw_export(kfd, sig.event_id, KFDSYNC_CONDITION_EVENTFD, addr, 0, 0, &notev),
		  EINVAL, "eventfd_not_eventfd_einval");
	tap_errno(raw_export(kfd, sig.event_id, KFDSYNC_CONDITION_EVENTFD, addr, 0, 0, &badfd),
		  EBADF, "eventfd_bad_fd_ebadf");
	tap_ok(kfdsync_hsa_signal_export_sync_file(ctx, &sig, 7, 0, 0) == -EINVAL,
	       "lib_bad_condition_einval");
	close(efd);
	hsa_signal_destroy(s);
}

/*
 * Both modes: a hint of a context that was freed does nothing when ROCr
 * calls it later (no use of the closed fd: ASan would see a bad one).
 */
TEST(hint_after_ctx_free)
{
	hsa_signal_t s = armed[n_armed++] = signal_new(1);
	struct kfdsync_ctx *c2 = NULL;
	int fd = -1, end = -1000, ret = kfdsync_ctx_new(&c2);

	if (!ret)
		fd = kfdsync_hsa_export_sync_file(c2, s, HSA_SIGNAL_CONDITION_EQ, 0, 0);
	kfdsync_ctx_free(c2);	/* the fence ends with -ECANCELED */
	if (fd >= 0)
		end = fence_end(fd, WAIT_MS);
	store_from_thread(s, 0);	/* ROCr calls the forgotten hint */
	usleep(300 * 1000);
	tap_ok(ret == 0 && fd >= 0 && end == -ECANCELED,
	       "hint_after_ctx_free_is_harmless (export %d, end %d)", fd, end);
	if (fd >= 0)
		close(fd);
}

/* In hooks mode there is nothing to relay. */
TEST(event_relay_hooks_ebusy)
{
	HOOKS_MODE_ONLY();

	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 1, 0);

	tap_ok(kfdsync_event_relay(ctx, sig.event_id) == -EBUSY, "event_relay_hooks_mode_ebusy");
	if (fd >= 0)
		close(fd);
	kfdsync_event_remove(ctx, sig.event_id);
	hsa_signal_destroy(s);
}
