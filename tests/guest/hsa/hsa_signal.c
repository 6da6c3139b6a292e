// SPDX-License-Identifier: MIT
/*
 * hsa_signal: ROCr HSA signals as fences, and fences into HSA signals.
 *
 * How this program works: it initialises Debian's ROCr (libhsa-runtime64)
 * on the guest's CPU-only /dev/kfd and creates interrupt signals with
 * hsa_signal_create(): each is an amd_signal_t (its value) paired with a KFD
 * event (its mailbox). libkfdsync exports "the signal's value satisfies a
 * condition" as sync_files and eventfds (KFDSYNC_IOCTL_EXPORT_CONDITION).
 *
 * - CPU: another thread changes the value with hsa_signal_store_screlease(),
 *   which sets the signal's KFD event. After a store the event's age has
 *   advanced (kfdsync saw the hint and checked the value), so "not
 *   signalled" then is a real answer, not a race: a value that does not
 *   satisfy the condition leaves the fence pending, one that does signals
 *   it. Table-driven over the four conditions.
 * - GPU: a simulated queue (/dev/kfdsim) writes the next value of the
 *   signal, then writes the event id to the mailbox and raises the
 *   interrupt (RELEASE_MEM), through amdkfd's real interrupt path.
 * - Import: a vgem fence imported into a signal (subtract 1, set its
 *   event) releases a thread blocked in hsa_signal_wait_scacquire().
 * - Bad input gets the documented errnos; closing everything leaves no
 *   page pinned (nr_foll_pin_acquired == nr_foll_pin_released deltas).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include <hsa/hsa.h>
#include <kfdsync_hsa.h>
#include <linux/sync_file.h>

#include "sim_test.h"
#include "vgem.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MS		1000000LL

static struct kfdsync_ctx *ctx;

/* Signals with a ROCr async handler (kfdsync_hsa.h): destroyed at the end. */
static hsa_signal_t armed[16];
static unsigned int n_armed;
static int sim = -1;
static uint32_t queue;

/* ---- helpers ---- */

static uint64_t event_age(uint32_t id)
{
	struct kfdsync_event_state st;

	if (kfdsync_event_get_state(ctx, id, &st))
		return UINT64_MAX;
	return st.age;
}

/* Wait until the event's age reaches @age; false after @ms. */
static bool wait_age_ms(uint32_t id, uint64_t age, int ms)
{
	int64_t end = kfdsim_now_ns() + (int64_t)ms * MS;

	while (event_age(id) < age) {
		if (kfdsim_now_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static bool wait_age(uint32_t id, uint64_t age)
{
	return wait_age_ms(id, age, WAIT_MS);
}

/* 1 signalled, 0 pending, <0 error status (SYNC_IOC_FILE_INFO). */
static int fence_status(int fd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000;
	return info.status;
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static hsa_signal_t signal_new(hsa_signal_value_t value)
{
	hsa_signal_t s;

	if (hsa_signal_create(value, 0, NULL, &s) != HSA_STATUS_SUCCESS)
		tap_bail("hsa_signal_create failed");
	return s;
}

static struct kfdsync_hsa_signal describe(hsa_signal_t s)
{
	struct kfdsync_hsa_signal sig;

	if (kfdsync_hsa_signal_describe(s, &sig))
		tap_bail("signal %#" PRIx64 " is not an interrupt signal", s.handle);
	return sig;
}

struct store {
	hsa_signal_t s;
	hsa_signal_value_t value;
};

static void *store_main(void *arg)
{
	struct store *st = arg;

	hsa_signal_store_screlease(st->s, st->value);
	return NULL;
}

/* Store @value from another thread and wait for the store. */
static bool store_from_thread(hsa_signal_t s, hsa_signal_value_t value)
{
	struct store st = { .s = s, .value = value };
	pthread_t t;

	if (pthread_create(&t, NULL, store_main, &st))
		return false;
	pthread_join(t, NULL);
	return true;
}

/*
 * Store @value from another thread until a store has set the signal's
 * event (ROCr sets it only once its event thread waits on the signal, see
 * kfdsync_hsa.h), so that kfdsync has checked the value since.
 */
static bool store_until_hint(hsa_signal_t s, hsa_signal_value_t value)
{
	struct kfdsync_hsa_signal sig = describe(s);
	int64_t end = kfdsim_now_ns() + (int64_t)WAIT_MS * MS;

	do {
		uint64_t age = event_age(sig.event_id);

		if (!store_from_thread(s, value))
			return false;
		if (wait_age_ms(sig.event_id, age + 1, 100))
			return true;
	} while (kfdsim_now_ns() < end);
	return false;
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

static bool vmstat_pins(uint64_t *acquired, uint64_t *released)
{
	char name[64];
	unsigned long long v;
	int found = 0;
	FILE *f;

	/* Fold the per-CPU counter deltas first. */
	f = fopen("/proc/sys/vm/stat_refresh", "w");
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return false;
	while (fscanf(f, "%63s %llu", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired")) {
			*acquired = v;
			found++;
		} else if (!strcmp(name, "nr_foll_pin_released")) {
			*released = v;
			found++;
		}
	}
	fclose(f);
	return found == 2;
}

/* ---- tests ---- */

static void test_describe(void)
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
static void test_born_signalled(void)
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

static const struct {
	const char *name;
	hsa_signal_condition_t cond;
	hsa_signal_value_t compare, initial, no, yes;
} cases[] = {
	{ "eq", HSA_SIGNAL_CONDITION_EQ, 0, 1, 5, 0 },
	{ "ne", HSA_SIGNAL_CONDITION_NE, 3, 3, 3, 4 },
	{ "lt", HSA_SIGNAL_CONDITION_LT, 1, 2, 1, -1 },	/* signed: -1 < 1 */
	{ "gte", HSA_SIGNAL_CONDITION_GTE, 100, 1, 99, 100 },
};

/*
 * hsa_signal_store_screlease() from another thread, per condition. The
 * signals stay alive until the end: their ROCr async handlers end on their
 * own once the condition held, but asynchronously.
 */
static void test_cpu_store(void)
{
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
static void test_eventfd(void)
{
	hsa_signal_t s = armed[n_armed++] = signal_new(0);
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int ret = kfdsync_hsa_export_eventfd(ctx, s, HSA_SIGNAL_CONDITION_GTE, 10, 0, efd);
	bool no, yes;

	no = store_until_hint(s, 3) && !readable(efd, 0);
	yes = store_from_thread(s, 10) && readable(efd, WAIT_MS);
	tap_ok(ret == 0 && no && yes, "eventfd_gte (ret %d)", ret);
	close(efd);
}

/*
 * A simulated GPU completion: write the signal's next value, then the
 * event id to the mailbox, and raise the interrupt.
 */
static uint64_t gpu_complete(const struct kfdsync_hsa_signal *sig, int64_t value)
{
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	pm4_sim_delay(&b, 1000);
	pm4_release_mem(&b, (uint64_t)(uintptr_t)sig->value, (uint64_t)value,
			PM4_RELEASE_MEM_DATA_64, PM4_RELEASE_MEM_INT_NONE, 0);
	pm4_release_mem_event(&b, sig->mailbox, sig->event_id);
	if (b.overflow)
		tap_bail("PM4 buffer overflow");
	return submit(sim, queue, &b);
}

static void test_gpu_completion(void)
{
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
static void test_unregister_cancels(void)
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
static void test_watchdog(void)
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
static void test_max_fences(void)
{
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

/* 1 signalled, 0 pending, else the fence's error. */
static int fence_error(int fd)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = { .num_fences = 1, .sync_fence_info = (uintptr_t)&fi };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000;
	return fi.status;
}

/*
 * An upstream fence's error reaches a condition fence: an import with
 * KFDSYNC_IMPORT_FAIL_EVENT gives the signal's event the error, which ends
 * its pending condition fences and every later export of it.
 */
static void test_import_fail_event(void)
{
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

static void test_bad_input(void)
{
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

/* ---- relay mode (kfdsync loaded with hooks=0: hsa_signal_relay) ---- */

static bool relay_mode;

/* 1 signalled, 0 pending, else the fence's error; after at most @ms. */
static int fence_end(int fd, int ms)
{
	readable(fd, ms);
	return fence_error(fd);
}

/*
 * The wrappers in relay mode: a "no" store leaves the fence pending, a
 * "yes" store ends it on the condition (status 1) long before its 30 s
 * watchdog would (-ETIMEDOUT): the hint relayed the signal.
 */
static void test_relay_cpu_store(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		hsa_signal_t s = armed[n_armed++] = signal_new(cases[i].initial);
		int fd = kfdsync_hsa_export_sync_file(ctx, s, cases[i].cond, cases[i].compare,
						      30000 * MS);
		int after_no, after_yes;

		if (fd < 0) {
			tap_ok(false, "relay_cpu_store_%s: export: %s", cases[i].name,
			       strerror(-fd));
			continue;
		}
		store_from_thread(s, cases[i].no);
		after_no = fence_end(fd, 200);
		store_from_thread(s, cases[i].yes);
		after_yes = fence_end(fd, WAIT_MS);
		tap_ok(after_no == 0 && after_yes == 1,
		       "relay_cpu_store_%s (after %" PRId64 ": %d, after %" PRId64 ": %d)",
		       cases[i].name, cases[i].no, after_no, cases[i].yes, after_yes);
		close(fd);
	}
}

/* A simulated GPU completion, exported through the wrapper: relayed too. */
static void test_relay_gpu_completion(void)
{
	hsa_signal_t s = armed[n_armed++] = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_export_sync_file(ctx, s, HSA_SIGNAL_CONDITION_EQ, 0, 30000 * MS);
	int before = fd >= 0 ? fence_status(fd) : -1000, after;

	if (fd >= 0)
		gpu_complete(&sig, 0);
	after = fd >= 0 ? fence_end(fd, WAIT_MS) : fd;
	tap_ok(before == 0 && after == 1, "relay_gpu_completion (before %d, after %d)", before,
	       after);
	if (fd >= 0)
		close(fd);
}

/*
 * Without the wrappers, the application relays: kfdsync_event_relay()
 * after the value changed. Without it, the fence ends by its watchdog.
 */
static void test_relay_raw_export(void)
{
	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 0, 30000 * MS);
	int lone = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 5, 200 * MS);
	int before, ret, after, lone_end;

	*sig.value = 0;		/* a CPU store ROCr does not see */
	before = fd >= 0 ? fence_end(fd, 200) : fd;
	ret = kfdsync_event_relay(ctx, sig.event_id);
	after = fd >= 0 ? fence_end(fd, WAIT_MS) : fd;
	/* value 0, not 5: the relayed signal did not satisfy this one. */
	lone_end = lone >= 0 ? fence_end(lone, WAIT_MS) : lone;
	tap_ok(before == 0 && ret == 0 && after == 1,
	       "relay_raw_export_event_relay (before %d, relay %d, after %d)", before, ret,
	       after);
	tap_ok(lone_end == -ETIMEDOUT, "relay_raw_export_unmet_ends_by_watchdog (%d)", lone_end);
	if (fd >= 0)
		close(fd);
	if (lone >= 0)
		close(lone);
	kfdsync_event_remove(ctx, sig.event_id);
	hsa_signal_destroy(s);
}

/*
 * A hint whose fence has ended (watchdog, plus the hint's slack) is inert:
 * when ROCr finally sees the condition hold and calls it, it reports
 * nothing, so the event's age (advanced only by relays here) stays.
 */
static void test_relay_hint_inert_after_fence(void)
{
	hsa_signal_t s = armed[n_armed++] = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_export_sync_file(ctx, s, HSA_SIGNAL_CONDITION_EQ, 0, 100 * MS);
	int end = fd >= 0 ? fence_end(fd, WAIT_MS) : fd;
	uint64_t age;

	usleep(1300 * 1000);	/* past the hint's second of slack */
	age = event_age(sig.event_id);
	store_from_thread(s, 0);
	usleep(300 * 1000);
	tap_ok(end == -ETIMEDOUT && age != UINT64_MAX && event_age(sig.event_id) == age,
	       "relay_hint_inert_after_its_fence (end %d, age %" PRIu64 " -> %" PRIu64 ")", end,
	       age, event_age(sig.event_id));
	if (fd >= 0)
		close(fd);
}

/*
 * Both modes: a hint of a context that was freed does nothing when ROCr
 * calls it later (no use of the closed fd: ASan would see a bad one).
 */
static void test_hint_after_ctx_free(void)
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
static void test_event_relay_hooks_ebusy(void)
{
	hsa_signal_t s = signal_new(1);
	struct kfdsync_hsa_signal sig = describe(s);
	int fd = kfdsync_hsa_signal_export_sync_file(ctx, &sig, KFDSYNC_HSA_EQ, 1, 0);

	tap_ok(kfdsync_event_relay(ctx, sig.event_id) == -EBUSY, "event_relay_hooks_mode_ebusy");
	if (fd >= 0)
		close(fd);
	kfdsync_event_remove(ctx, sig.event_id);
	hsa_signal_destroy(s);
}

/* ---- import: a vgem fence into an HSA signal ---- */

/* A sync_file for a new unsignalled vgem fence on @buf. */
static int vgem_sync_file(int vgem, struct vgem_buffer *buf)
{
	if (!vgem_buffer_new(vgem, buf, true))
		return -errno;
	/* A reader waits for vgem's write fence. */
	return kfdsync_dmabuf_export_sync_file(buf->dmabuf, KFDSYNC_DMABUF_READ);
}

struct waiter {
	hsa_signal_t s;
	hsa_signal_value_t seen;
	volatile bool done;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->seen = hsa_signal_wait_scacquire(w->s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
					    HSA_WAIT_STATE_BLOCKED);
	w->done = true;
	return NULL;
}

static void test_import_vgem(void)
{
	struct waiter w = { .seen = -1 };
	struct vgem_buffer buf;
	struct timespec until;
	bool before, joined;
	int vgem, sf, ret;
	pthread_t t;

	vgem = drm_open_driver("vgem", false);
	if (vgem < 0) {
		tap_skip("no vgem device in the guest", "import_vgem_releases_waiter");
		return;
	}
	sf = vgem_sync_file(vgem, &buf);
	if (sf < 0) {
		tap_ok(false, "import_vgem_releases_waiter: vgem fence: %s", strerror(-sf));
		vgem_buffer_free(vgem, &buf);
		close(vgem);
		return;
	}
	w.s = signal_new(1);
	ret = kfdsync_hsa_import_sync_file(ctx, sf, w.s, KFDSYNC_HSA_IMPORT_SUBTRACT, 1, 1);
	close(sf);	/* the import holds the fence */
	if (ret || pthread_create(&t, NULL, waiter_main, &w)) {
		tap_ok(false, "import_vgem_releases_waiter: import: %s", strerror(-ret));
		vgem_fence_signal(vgem, buf.fence);
		hsa_signal_destroy(w.s);
		vgem_buffer_free(vgem, &buf);
		close(vgem);
		return;
	}
	/* Not a proof that it blocks, but it must not have returned. */
	usleep(100 * 1000);
	before = !w.done && hsa_signal_load_scacquire(w.s) == 1;
	ret = vgem_fence_signal(vgem, buf.fence) ? 0 : -errno;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	joined = pthread_timedjoin_np(t, NULL, &until) == 0;
	tap_ok(before && ret == 0 && joined && w.seen == 0 && hsa_signal_load_scacquire(w.s) == 0,
	       "import_vgem_releases_waiter (waiting before: %d, joined %d, seen %" PRId64 ")",
	       before, joined, w.seen);
	if (!joined) {
		hsa_signal_store_screlease(w.s, 0);	/* release it anyway */
		pthread_join(t, NULL);
	}
	hsa_signal_destroy(w.s);
	vgem_buffer_free(vgem, &buf);
	close(vgem);
}

/* Run examples/hsa with @args; its exit status, its output in @out. */
static int run_example(const char *args, char *out, size_t size)
{
	char cmd[600];
	size_t len = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", HSA_EXAMPLE, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (len + 1 < size) {
		size_t n = fread(out + len, 1, size - 1 - len, p);

		if (!n)
			break;
		len += n;
	}
	out[len] = '\0';
	return pclose(p);
}

/*
 * examples/hsa runs its frames: export completion, import release; a
 * frame whose fence ended by its watchdog is not presented.
 */
static void test_example(void)
{
	char out[4096];
	int status = run_example("--frames 3", out, sizeof(out));

	if (status)
		tap_diag("%s", out);
	tap_ok(status == 0 && strstr(out, "compositor: frame 2: complete") &&
	       strstr(out, "stream: frame 2: buffer released"),
	       "example_external_semaphore (status %d)", status);
	status = run_example("--frames 3 --stall-frame 1 --watchdog-ms 300", out, sizeof(out));
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 1 &&
	       strstr(out, "compositor: frame 0: complete, presenting") &&
	       strstr(out, "compositor: frame 1: ended with an error") &&
	       !strstr(out, "frame 1: complete"),
	       "example_error_is_not_presented (status %d)", status);
	if (!strstr(out, "frame 1: ended with an error"))
		tap_diag("%s", out);
}

int main(void)
{
	uint64_t acq0 = 0, rel0 = 0, acq1 = 0, rel1 = 0;
	bool have_vmstat;
	int ret;

	struct kfdsync_module_info mi;

	scrub_hsa_env();
	require_sim_guest();
	printf("TAP version 13\n");

	have_vmstat = vmstat_pins(&acq0, &rel0);
	if (hsa_init() != HSA_STATUS_SUCCESS)
		tap_bail("hsa_init failed on /dev/kfd");
	ret = kfdsync_ctx_new(&ctx);
	if (ret)
		tap_bail("kfdsync_ctx_new: %s", strerror(-ret));
	ret = kfdsync_ctx_get_module_info(ctx, &mi);
	if (ret)
		tap_bail("kfdsync_ctx_get_module_info: %s", strerror(-ret));
	relay_mode = (mi.flags & KFDSYNC_INFO_RELAY_FORCED) || !mi.hooks;
	tap_plan(relay_mode ? 19 : 29);
	tap_diag("kfdsync in %s mode", relay_mode ? "relay" : "hooks");
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);

	test_describe();		/* 2 */
	test_born_signalled();		/* 2 */
	if (relay_mode) {
		/* What relay mode changes: the hints relay. */
		test_relay_cpu_store();			/* 4 */
		test_relay_gpu_completion();		/* 1 */
		test_relay_raw_export();		/* 2 */
		test_relay_hint_inert_after_fence();	/* 1 */
		test_hint_after_ctx_free();		/* 1 */
		test_unregister_cancels();		/* 1 */
		test_watchdog();			/* 1 */
		test_import_vgem();			/* 1 */
		test_example();				/* 2 */
	} else {
		test_cpu_store();		/* 4 */
		test_eventfd();			/* 1 */
		test_gpu_completion();		/* 1 */
		test_unregister_cancels();	/* 1 */
		test_watchdog();		/* 1 */
		test_max_fences();		/* 1 */
		test_import_fail_event();	/* 1 */
		test_bad_input();		/* 9 */
		test_import_vgem();		/* 1 */
		test_example();			/* 2 */
		test_hint_after_ctx_free();	/* 1 */
		test_event_relay_hooks_ebusy();	/* 1 */
	}

	/* Every armed condition held long ago: their handlers are done. */
	for (unsigned int i = 0; i < n_armed; i++)
		hsa_signal_destroy(armed[i]);
	kfdsim_queue_destroy(sim, queue);
	close(sim);
	kfdsync_ctx_free(ctx);
	hsa_shut_down();

	if (have_vmstat && vmstat_pins(&acq1, &rel1))
		tap_ok(acq1 - acq0 == rel1 - rel0 && acq1 - acq0 >= 8,
		       "pins_released (acquired +%" PRIu64 ", released +%" PRIu64 ")",
		       acq1 - acq0, rel1 - rel0);
	else
		tap_skip("no nr_foll_pin_* in /proc/vmstat", "pins_released");
	return tap_exit();
}
