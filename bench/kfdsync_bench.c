// SPDX-License-Identifier: MIT
/*
 * kfdsync_bench: latencies of kfdsync's paths, measured in the test guest.
 *
 * Runs inside the guest (tools/bench boots it) against the real amdkfd,
 * kfdsync.ko and the GPU simulator, and prints one line per measurement:
 * the median, 90th percentile and maximum over the iterations, in
 * microseconds. Under QEMU TCG absolute figures are much slower than real
 * hardware; compare rows with each other, and runs of one machine.
 *
 * What is measured, each from the moment userspace starts the signal to the
 * moment a waiter sees it:
 *
 *   export_gpu/N	a simulated RELEASE_MEM (submit) until poll() on the
 *			exported sync_file returns, with N events registered
 *			in the context: the interrupt hook scans the
 *			process's registered events, so this shows its cost.
 *   export_cpu		hsaKmtSetEvent() until the exported sync_file polls
 *			readable (the CPU-set hook).
 *   import_memory	timeline increment until an imported memory word
 *			changes (written by the fence callback, so within the
 *			increment's own system call).
 *   import_done		the same increment until the import's eventfd says
 *			done (the worker ran).
 *   import_event	timeline increment until hsaKmtWaitOnEvent() returns
 *			(in-kernel kfd_set_event(); hooks mode only).
 *   timeline		timeline increment until poll() on its fence returns.
 *
 * Usage: kfdsync_bench [ITERATIONS]   (default 200)
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <hsakmt.h>
#include <linux/kfdsync.h>

#include <kfdsync.h>

#include "kfdsim.h"
#include "pm4.h"

#define MAX_EVENTS	1024

static int iterations = 200;
static int sim = -1;
static uint32_t queue;
static struct kfdsync_ctx *ctx;
static HsaEvent *events[MAX_EVENTS];

static void die(const char *what, int err)
{
	fprintf(stderr, "kfdsync_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void report(const char *name, int64_t *ns, int n)
{
	qsort(ns, n, sizeof(*ns), cmp_i64);
	printf("%-22s %8d %10.1f %10.1f %10.1f\n", name, n, ns[n / 2] / 1e3,
	       ns[n * 9 / 10] / 1e3, ns[n - 1] / 1e3);
	fflush(stdout);
}

static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 10000) != 1)
		die("fence did not signal within 10 s", ETIMEDOUT);
}

static HsaEvent *new_event(void)
{
	HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };
	HsaEvent *ev = NULL;

	if (hsaKmtCreateEvent(&desc, false, false, &ev) != HSAKMT_STATUS_SUCCESS)
		die("hsaKmtCreateEvent", ENOMEM);
	return ev;
}

/* Make sure @n events exist and are registered; the first one is signalled. */
static void register_events(int n)
{
	static int registered;
	int ret;

	for (; registered < n; registered++) {
		events[registered] = new_event();
		ret = kfdsync_event_add_hsa(ctx, events[registered], NULL);
		if (ret)
			die("kfdsync_event_add_hsa", -ret);
	}
}

static int export_next(HsaEvent *ev)
{
	struct kfdsync_event_state st;
	int ret = kfdsync_event_get_state(ctx, ev->EventId, &st);

	if (ret)
		die("kfdsync_event_get_state", -ret);
	ret = kfdsync_event_export_sync_file(ctx, ev->EventId, st.age, 0);
	if (ret < 0)
		die("kfdsync_event_export_sync_file", -ret);
	return ret;
}

static void bench_export_gpu(int n_events, int64_t *ns)
{
	HsaEvent *ev;
	char name[32];
	int i;

	register_events(n_events);
	ev = events[0];
	for (i = 0; i < iterations; i++) {
		uint32_t dw[16];
		struct pm4_buf b = PM4_BUF_INIT(dw);
		int fd = export_next(ev), ret;
		int64_t t0;

		pm4_release_mem_event(&b, ev->EventData.HWData2, ev->EventId);
		t0 = kfdsim_now_ns();
		ret = kfdsim_submit_buf(sim, queue, &b, NULL);
		if (ret)
			die("kfdsim_submit_buf", -ret);
		wait_readable(fd);
		ns[i] = kfdsim_now_ns() - t0;
		close(fd);
	}
	snprintf(name, sizeof(name), "export_gpu/%d", n_events);
	report(name, ns, iterations);
}

static void bench_export_cpu(int64_t *ns)
{
	HsaEvent *ev = events[0];
	int i;

	for (i = 0; i < iterations; i++) {
		int fd = export_next(ev);
		int64_t t0 = kfdsim_now_ns();

		hsaKmtSetEvent(ev);
		wait_readable(fd);
		ns[i] = kfdsim_now_ns() - t0;
		close(fd);
	}
	report("export_cpu", ns, iterations);
}

static void bench_import_memory(struct kfdsync_timeline *tl, uint32_t *value, int64_t *ns,
				int64_t *done_ns)
{
	static volatile uint64_t word;
	int efd = eventfd(0, EFD_CLOEXEC), i;

	if (efd < 0)
		die("eventfd", errno);
	for (i = 0; i < iterations; i++) {
		int fd = kfdsync_timeline_create_fence(tl, ++*value, "bench");
		struct kfdsync_import a = {
			.fd = fd, .flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_EVENTFD,
			.addr = (uintptr_t)&word, .value = 1, .error_value = 2, .eventfd = efd };
		int64_t t0, limit;
		uint64_t done;

		if (fd < 0)
			die("kfdsync_timeline_create_fence", -fd);
		word = 0;
		if (ioctl(kfdsync_ctx_fd(ctx), KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &a))
			die("KFDSYNC_IOCTL_IMPORT_SYNC_FILE", errno);
		t0 = kfdsim_now_ns();
		limit = t0 + 10000000000LL;
		kfdsync_timeline_inc(tl, 1);
		while (!word)
			if (kfdsim_now_ns() > limit)
				die("imported word not written within 10 s", ETIMEDOUT);
		ns[i] = kfdsim_now_ns() - t0;
		wait_readable(efd);
		done_ns[i] = kfdsim_now_ns() - t0;
		if (read(efd, &done, sizeof(done)) != sizeof(done))
			die("read eventfd", errno);
		close(fd);
	}
	close(efd);
	report("import_memory", ns, iterations);
	report("import_done", done_ns, iterations);
}

static void bench_import_event(struct kfdsync_timeline *tl, uint32_t *value, int64_t *ns)
{
	HsaEvent *ev = new_event();
	int i;

	for (i = 0; i < iterations; i++) {
		int fd = kfdsync_timeline_create_fence(tl, ++*value, "bench");
		int64_t t0;
		int ret;

		if (fd < 0)
			die("kfdsync_timeline_create_fence", -fd);
		ret = kfdsync_import_to_event(ctx, fd, ev->EventId);
		if (ret)
			die("kfdsync_import_to_event", -ret);
		t0 = kfdsim_now_ns();
		kfdsync_timeline_inc(tl, 1);
		if (hsaKmtWaitOnEvent(ev, 10000) != HSAKMT_STATUS_SUCCESS)
			die("imported event not set within 10 s", ETIMEDOUT);
		ns[i] = kfdsim_now_ns() - t0;
		close(fd);
	}
	report("import_event", ns, iterations);
	hsaKmtDestroyEvent(ev);
}

static void bench_timeline(struct kfdsync_timeline *tl, uint32_t *value, int64_t *ns)
{
	int i;

	for (i = 0; i < iterations; i++) {
		int fd = kfdsync_timeline_create_fence(tl, ++*value, "bench");
		int64_t t0;

		if (fd < 0)
			die("kfdsync_timeline_create_fence", -fd);
		t0 = kfdsim_now_ns();
		kfdsync_timeline_inc(tl, 1);
		wait_readable(fd);
		ns[i] = kfdsim_now_ns() - t0;
		close(fd);
	}
	report("timeline", ns, iterations);
}

int main(int argc, char **argv)
{
	static const int event_counts[] = { 1, 16, 256, MAX_EVENTS };
	struct kfdsync_module_info info;
	struct kfdsync_timeline *tl;
	uint32_t value = 0;
	int64_t *ns, *ns2;
	size_t i;
	int ret;

	if (argc > 1)
		iterations = atoi(argv[1]);
	if (iterations < 1 || iterations > 1000000) {
		fprintf(stderr, "usage: kfdsync_bench [ITERATIONS (1-1000000)]\n");
		return 2;
	}
	ns = calloc(iterations, sizeof(*ns));
	ns2 = calloc(iterations, sizeof(*ns2));
	if (!ns || !ns2)
		die("calloc", ENOMEM);

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		die("hsaKmtOpenKFD (is amdgpu loaded?)", ENODEV);
	sim = kfdsim_open();
	if (sim < 0)
		die("kfdsim_open (is kfdsim.ko loaded? the bench runs in the test guest)", -sim);
	ret = kfdsim_queue_create(sim, 0, &queue, NULL);
	if (ret)
		die("kfdsim_queue_create", -ret);
	ret = kfdsync_ctx_new(&ctx);
	if (ret)
		die("kfdsync_ctx_new", -ret);
	ret = kfdsync_ctx_get_module_info(ctx, &info);
	if (ret)
		die("kfdsync_ctx_get_module_info", -ret);
	ret = kfdsync_timeline_new(&tl);
	if (ret)
		die("kfdsync_timeline_new", -ret);

	printf("# kfdsync_bench: kernel %s, hooks %#x, %d iterations, microseconds\n",
	       info.release, info.hooks, iterations);
	printf("%-22s %8s %10s %10s %10s\n", "# path", "n", "median", "p90", "max");
	for (i = 0; i < sizeof(event_counts) / sizeof(event_counts[0]); i++)
		bench_export_gpu(event_counts[i], ns);
	bench_export_cpu(ns);
	bench_import_memory(tl, &value, ns, ns2);
	if (info.hooks & KFDSYNC_HOOK_CPU_SET)
		bench_import_event(tl, &value, ns);
	else
		printf("# import_event: skipped, needs the hooks (relay mode)\n");
	bench_timeline(tl, &value, ns);

	kfdsync_timeline_free(tl);
	kfdsync_ctx_free(ctx);
	kfdsim_queue_destroy(sim, queue);
	hsaKmtCloseKFD();
	free(ns2);
	free(ns);
	return 0;
}
