// SPDX-License-Identifier: MIT
/*
 * kfdsync_import_errors: what sync_file imports refuse, their limits, and
 * what they leave behind when cancelled.
 *
 * How this program works: it calls KFDSYNC_IOCTL_IMPORT_SYNC_FILE with bad
 * arguments (a table; another process; the library's NULL checks) and
 * checks the documented errnos and that nothing was written; then it
 * leaves imports pending and closes their context: they write and set
 * nothing, release their page pins (/proc/vmstat's
 * nr_foll_pin_acquired/_released) and leave Mlocked and the slab alone;
 * max_imports gives -ENOSPC and frees up as imports end; a library context
 * freed with an event import pending sets nothing. In relay mode (through
 * kfdsync_import_errors_relay) the same, without kernel event sets. Tests
 * register themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "kfdsync_import.h"

#define PENDING_IMPORTS		100

static uint64_t vmstat(const char *name)
{
	char key[64];
	unsigned long long v;
	uint64_t found = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* Pages pinned system-wide, with the per-CPU counter deltas folded in. */
static int64_t pins_held(void)
{
	FILE *f = fopen("/proc/sys/vm/stat_refresh", "w");

	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	return (int64_t)(vmstat("nr_foll_pin_acquired") - vmstat("nr_foll_pin_released"));
}

static uint64_t meminfo_kb(const char *name)
{
	char line[256];
	size_t n = strlen(name);
	unsigned long long v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':')
			sscanf(line + n + 1, "%llu", &v);
	fclose(f);
	return v;
}

/* ---- bad input ---- */

TEST(bad_inputs)
{
	static uint64_t word;
	struct kfdsync_timeline *tl = timeline_new();
	int fd = timeline_fence(tl, 1);
	int efd = eventfd(0, EFD_CLOEXEC);
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	HsaEvent *ev = new_event();
	struct kfdsync_import good = { .fd = fd, .flags = KFDSYNC_IMPORT_MEMORY,
				       .addr = (uintptr_t)&word, .value = 1 };
	struct kfdsync_import a;

	munmap(gone, 4096);

#define BAD(field_changes, err, name)						\
	do {									\
		a = good;							\
		field_changes;							\
		tap_errno(ioctl(kfdsync, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &a), err, name); \
	} while (0)

	BAD(a.fd = efd, EINVAL, "bad_not_a_sync_file");
	BAD(a.fd = 9999, EBADF, "bad_closed_fd");
	BAD(a.flags = 0x40 | KFDSYNC_IMPORT_MEMORY, EINVAL, "bad_unknown_flag");
	BAD((a.flags = KFDSYNC_IMPORT_SUB, a.addr = 0, a.value = 0), EINVAL, "bad_no_action");
	BAD(a.pad = 1, EINVAL, "bad_pad");
	BAD(a.addr += 4, EINVAL, "bad_misaligned_64");
	BAD((a.flags |= KFDSYNC_IMPORT_MEMORY32, a.addr += 2), EINVAL, "bad_misaligned_32");
	BAD((a.flags |= KFDSYNC_IMPORT_MEMORY32, a.value = 1ull << 32), EINVAL,
	    "bad_value_too_wide_32");
	BAD((a.flags |= KFDSYNC_IMPORT_MEMORY32, a.error_value = 1ull << 32), EINVAL,
	    "bad_error_value_too_wide_32");
	BAD(a.addr = (uintptr_t)ro, EFAULT, "bad_read_only_memory");
	BAD(a.addr = (uintptr_t)gone, EFAULT, "bad_unmapped_memory");
	BAD(a.addr = slot_addr(ev), EFAULT, "bad_device_mapping_events_page");
	BAD(a.addr = 0xffff888000000000ull, EFAULT, "bad_kernel_address");
	BAD((a.flags = KFDSYNC_IMPORT_SET_EVENT, a.addr = 0, a.value = 0), EINVAL,
	    "bad_set_event_id_zero");
	BAD((a.flags = KFDSYNC_IMPORT_SET_EVENT, a.addr = 0, a.value = 0,
	     a.event_id = KFDSYNC_EVENT_ID_LIMIT), EINVAL, "bad_set_event_id_limit");
	BAD(a.event_id = 5, EINVAL, "bad_event_id_without_flag");
	BAD((a.flags |= KFDSYNC_IMPORT_FAIL_EVENT, a.fail_event_id = 4000), ENOENT,
	    "bad_fail_event_unregistered");
	BAD((a.flags |= KFDSYNC_IMPORT_EVENTFD, a.eventfd = fd), EINVAL,
	    "bad_eventfd_not_an_eventfd");
	BAD((a.flags |= KFDSYNC_IMPORT_EVENTFD, a.eventfd = 9999), EBADF, "bad_eventfd_closed");
	tap_errno(ioctl(kfdsync, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, (void *)16), EFAULT,
		  "bad_argument_pointer");
#undef BAD

	/* Another process (a child with the inherited fd) is refused. */
	{
		pid_t pid = fork();
		int status = -1;

		if (pid == 0) {
			a = good;
			_exit(ioctl(kfdsync, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &a) < 0 &&
			      errno == EPERM ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "bad_other_process_eperm");
	}

	{
		struct kfdsync_import_desc d = { .flags = KFDSYNC_IMPORT_EVENTFD };

		tap_ok(kfdsync_import_sync_file(NULL, fd, &d) == -EINVAL &&
		       kfdsync_import_sync_file((struct kfdsync_ctx *)1, fd, NULL) == -EINVAL,
		       "library_rejects_null");
	}
	tap_ok(word == 0, "bad_inputs_wrote_nothing");
	munmap(ro, 4096);
	close(efd);
	close(fd);
	ev_destroy(ev);
	kfdsync_timeline_free(tl);
}

/* ---- limits, cancellation, leaks ---- */

TEST(cancel_and_leaks)
{
	static uint64_t words[PENDING_IMPORTS];
	struct kfdsync_timeline *tl = timeline_new();
	HsaEvent *ev = new_event();
	int64_t pins0 = pins_held();
	uint64_t mlocked0 = meminfo_kb("Mlocked");
	uint64_t unrecl0 = meminfo_kb("SUnreclaim");
	int fd = timeline_fence(tl, 1);
	int ctx_fd = open_kfdsync();
	int i, ok = 0, ret, efd;

	for (i = 0; i < PENDING_IMPORTS; i++) {
		struct kfdsync_import a = {
			.fd = fd, .flags = KFDSYNC_IMPORT_MEMORY, .addr = (uintptr_t)&words[i],
			.value = 1 };

		if (!relay_mode) {
			a.flags |= KFDSYNC_IMPORT_SET_EVENT;
			a.event_id = ev->EventId;
		}
		ok += __import(ctx_fd, &a) == 0;
	}
	tap_ok(ok == PENDING_IMPORTS, "pending_imports_made (%d)", ok);
	tap_ok(pins_held() - pins0 == PENDING_IMPORTS, "each_import_pins_one_page (%" PRId64 ")",
	       pins_held() - pins0);
	close(ctx_fd);
	tap_ok(pins_held() == pins0, "close_releases_every_pin (%" PRId64 " held)",
	       pins_held() - pins0);
	kfdsync_timeline_inc(tl, 1);
	usleep(100 * 1000);
	for (i = 0, ok = 0; i < PENDING_IMPORTS; i++)
		ok += words[i] == 0;
	tap_ok(ok == PENDING_IMPORTS, "cancelled_imports_write_nothing");
	tap_ok(hsaKmtWaitOnEvent(ev, 100) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "cancelled_imports_set_nothing");
	tap_ok(meminfo_kb("Mlocked") == mlocked0, "mlocked_unchanged");
	/* Generous: 100 imports are ~20 KiB; slab noise is the rest. */
	tap_ok(meminfo_kb("SUnreclaim") < unrecl0 + 1024, "slab_not_growing (%" PRIu64
	       " -> %" PRIu64 " kB)", unrecl0, meminfo_kb("SUnreclaim"));
	close(fd);

	/* max_imports, snapshotted at open. */
	if (!param_write("max_imports", 4))
		tap_bail("cannot write max_imports");
	ctx_fd = open_kfdsync();
	param_write("max_imports", 1024);
	fd = timeline_fence(tl, 10);
	efd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	for (i = 0, ok = 0; i < 5; i++) {
		struct kfdsync_import a = { .fd = fd,
					    .flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_EVENTFD,
					    .addr = (uintptr_t)&words[i], .value = 1, .eventfd = efd };

		ret = __import(ctx_fd, &a);
		ok += ret == 0;
	}
	tap_ok(ok == 4 && ret == -ENOSPC, "max_imports_enospc (%d made, last %s)", ok,
	       strerror(-ret));
	kfdsync_timeline_inc(tl, 10);
	/* An import counts until its eventfd says done. */
	for (i = 0, ok = 0; i < 4; i++) {
		uint64_t one;

		ok += readable(efd, WAIT_MS) && read(efd, &one, sizeof(one)) == sizeof(one) &&
		      words[i] == 1;
	}
	close(efd);
	tap_ok(ok == 4, "limit_frees_up_as_imports_end");
	{
		struct kfdsync_import a = { .fd = fd, .flags = KFDSYNC_IMPORT_MEMORY,
					    .addr = (uintptr_t)&words[4], .value = 1 };

		tap_ok(__import(ctx_fd, &a) == 0 && wait_word(&words[4], 1),
		       "import_accepted_again_after_limit");
	}
	close(ctx_fd);
	close(fd);
	tap_ok(pins_held() == pins0, "no_pins_left (%" PRId64 ")", pins_held() - pins0);
	ev_destroy(ev);
	kfdsync_timeline_free(tl);
}

/* The library's relay, stopped with imports pending, sets nothing. */
TEST(library_free_pending)
{
	struct kfdsync_timeline *tl = timeline_new();
	HsaEvent *ev = new_event();
	struct kfdsync_ctx *ctx;
	int fd = timeline_fence(tl, 1), ret;

	if (kfdsync_ctx_new(&ctx))
		tap_bail("kfdsync_ctx_new failed");
	ret = kfdsync_import_to_event(ctx, fd, ev->EventId);
	kfdsync_ctx_free(ctx);
	kfdsync_timeline_inc(tl, 1);
	tap_ok(ret == 0 && hsaKmtWaitOnEvent(ev, 200) == HSAKMT_STATUS_WAIT_TIMEOUT,
	       "freed_context_cancels_event_import (%s)", strerror(-ret));
	close(fd);
	kfdsync_timeline_free(tl);
	ev_destroy(ev);
}

int main(int argc, char **argv)
{
	return import_main(argc, argv, import_setup, import_teardown);
}
