// SPDX-License-Identifier: MIT
/*
 * kfdsync_bench: kfdsync's paths against their floors, in the test guest.
 *
 * Runs inside the guest (tools/bench boots it, once with the hooks and once
 * in relay mode) against the real amdkfd, kfdsync.ko and the GPU simulator.
 * Prints a table and, with --json FILE, the same figures as JSON (the
 * method and a run's figures: docs/performance.md). Under QEMU TCG absolute
 * figures are far slower than hardware and noisy: read ratios to the floors,
 * which are measured interleaved with each path (A, B, A, B, ...) so that
 * the noise hits both.
 *
 * Floors: amdkfd's own wake for the same packet (a RELEASE_MEM on an
 * unregistered event until hsaKmtWaitOnEvent() returns: what an
 * application waiting on the event itself gets); an eventfd write until a
 * poll() in another, already running thread returns (the least a
 * cross-thread wake-up costs here); a kfdsync timeline increment until
 * poll() on its fence returns (sw_sync's path; Debian's kernels have no
 * sw_sync); and the relay's floor, amdkfd's wake handed on by the woken
 * thread through an eventfd (the least any userspace relay costs).
 *
 * Sections: latency (p50/p90/p99/max per path and its floor), scaling (the
 * export's latency and the kernel's interrupt-to-signal time with 1 to 4095
 * registered events, each with a pending fence, and with 0 to 64 other
 * processes' contexts; wait-all/wait-any over N fences), throughput
 * (cycles per second against eventfd round trips), memory (slab bytes per
 * registered event and per pending fence, pinned pages per import), CPU
 * (time per signal), contexts (open and close, a process exiting with 1024
 * of them, against timelines), walks (the longest lock holds when a GPU
 * reset or amdgpu's going ends 64 processes' 4079 events each, injected
 * through debugfs), tracing (the export's latency with kfdsync's tracepoints
 * disabled and enabled) and idle wake-ups of every library thread.
 *
 * Usage: kfdsync_bench [-n ITERATIONS] [--quick] [--json FILE] [--sections LIST]
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hsakmt.h>
#include <linux/kfdsync.h>

#include <kfdsync.h>

#include "kfdsim.h"
#include "pm4.h"
#include "proc_threads.h"

#define MAX_EVENTS	4095
#define RESERVED_EVENTS	16	/* the floor's event, relay kicks, slack */

static int iterations = 1000;
static bool quick;
static int sim = -1;
static uint32_t queue;
static struct kfdsync_ctx *ctx;
static struct kfdsync_timeline *tl;
static uint32_t tl_value;
static HsaEvent *floor_ev;		/* never registered */
static HsaEvent *hsa_ev;		/* the HSA condition's event */
static HsaEvent *events[MAX_EVENTS];	/* events[0] is the measured one */
static int n_events, n_registered;
static bool relay_mode;
static const char *mode = "hooks";
static FILE *json;
static const char *only;	/* --sections: the ones to run, or NULL: all */

static void die(const char *what, int err)
{
	fprintf(stderr, "kfdsync_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Whether --sections includes section @name. */
static bool section(const char *name)
{
	size_t n = strlen(name);
	const char *p = only;

	if (!only)
		return true;
	while ((p = strstr(p, name))) {
		if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

/* ---- numbers ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct stats {
	int n;
	double p50, p90, p99, max;	/* microseconds */
};

static struct stats stats_of(int64_t *ns, int n)
{
	struct stats s = { .n = n };

	if (n < 1)
		return s;
	qsort(ns, n, sizeof(*ns), cmp_i64);
	s.p50 = ns[n / 2] / 1e3;
	s.p90 = ns[(int)(n * 0.9)] / 1e3;
	s.p99 = ns[(int)(n * 0.99)] / 1e3;
	s.max = ns[n - 1] / 1e3;
	return s;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* ---- JSON: sections of objects ---- */

static bool json_any_section, json_first_in_section;

static void json_section(const char *name)
{
	if (!json)
		return;
	fprintf(json, "%s\n  \"%s\": [", json_any_section ? " ]," : "", name);
	json_any_section = true;
	json_first_in_section = true;
}

/* Open an object with fields @fmt; more with json_stats(), then json_end(). */
static void json_begin(const char *fmt, ...)
{
	va_list ap;

	if (!json)
		return;
	fprintf(json, "%s\n    {", json_first_in_section ? "" : ",");
	json_first_in_section = false;
	va_start(ap, fmt);
	vfprintf(json, fmt, ap);
	va_end(ap);
}

static void json_end(void)
{
	if (json)
		fputc('}', json);
}

static void json_entry(const char *fmt, ...)
{
	va_list ap;

	if (!json)
		return;
	fprintf(json, "%s\n    {", json_first_in_section ? "" : ",");
	json_first_in_section = false;
	va_start(ap, fmt);
	vfprintf(json, fmt, ap);
	va_end(ap);
	json_end();
}

static void json_stats(const char *key, struct stats s)
{
	if (json)
		fprintf(json, ", \"%s\": {\"n\": %d, \"p50\": %.2f, \"p90\": %.2f, \"p99\": %.2f, "
			"\"max\": %.2f}", key, s.n, s.p50, s.p90, s.p99, s.max);
}

/* One latency row: a path and the floor measured interleaved with it. */
static void report_latency(const char *name, struct stats p, const char *floor_name,
			   struct stats f)
{
	printf("%-28s %6d %9.1f %9.1f %9.1f %9.1f  %-12s %9.1f %6.2f %6.2f\n", name, p.n, p.p50,
	       p.p90, p.p99, p.max, floor_name, f.p50, ratio(p.p50, f.p50), ratio(p.p90, f.p90));
	fflush(stdout);
	json_begin("\"name\": \"%s\", \"mode\": \"%s\", \"floor\": \"%s\", \"ratio_p50\": %.3f, "
		   "\"ratio_p90\": %.3f", name, mode, floor_name, ratio(p.p50, f.p50),
		   ratio(p.p90, f.p90));
	json_stats("path", p);
	json_stats("floor_stats", f);
	json_end();
}

static void table_header(const char *title)
{
	printf("\n# %s (%s mode, microseconds; ratios: p50 and p90 over the floor's)\n", title,
	       mode);
	printf("%-28s %6s %9s %9s %9s %9s  %-12s %9s %6s %6s\n", "# path", "n", "p50", "p90",
	       "p99", "max", "floor", "floor p50", "x p50", "x p90");
}

/* ---- primitives ---- */

static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, 20000) != 1)
		die("fence did not signal within 20 s", ETIMEDOUT);
}

static HsaEvent *new_event(void)
{
	HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };
	HsaEvent *ev = NULL;

	if (hsaKmtCreateEvent(&desc, false, false, &ev) != HSAKMT_STATUS_SUCCESS)
		return NULL;
	return ev;
}

/* Create events until @n exist (fewer if amdkfd runs out); how many. */
static int create_events(int n)
{
	while (n_events < n) {
		events[n_events] = new_event();
		if (!events[n_events])
			break;
		n_events++;
	}
	return n_events;
}

/* Register events[0..n-1] (create them first); how many are registered. */
static int register_events(int n)
{
	int ret;

	create_events(n);
	while (n_registered < n && n_registered < n_events) {
		ret = kfdsync_event_add_hsa(ctx, events[n_registered], NULL);
		if (ret) {
			fprintf(stderr, "# kfdsync_event_add_hsa #%d: %s\n", n_registered,
				strerror(-ret));
			break;
		}
		n_registered++;
	}
	return n_registered;
}

static void unregister_events(int down_to)
{
	while (n_registered > down_to)
		kfdsync_event_remove(ctx, events[--n_registered]->EventId);
}

static uint64_t age_of(HsaEvent *ev)
{
	struct kfdsync_event_state st;
	int ret = kfdsync_event_get_state(ctx, ev->EventId, &st);

	if (ret)
		die("kfdsync_event_get_state", -ret);
	return st.age;
}

static int export_next(HsaEvent *ev, int64_t watchdog_ns)
{
	int ret = kfdsync_event_export_sync_file(ctx, ev->EventId, age_of(ev), watchdog_ns);

	if (ret < 0)
		die("kfdsync_event_export_sync_file", -ret);
	return ret;
}

/* Submit a RELEASE_MEM signalling @ev; returns the submit time. */
static int64_t signal_gpu(HsaEvent *ev)
{
	uint32_t dw[16];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	int64_t t0;
	int ret;

	pm4_release_mem_event(&b, ev->EventData.HWData2, ev->EventId);
	t0 = kfdsim_now_ns();
	ret = kfdsim_submit_buf(sim, queue, &b, NULL);
	if (ret)
		die("kfdsim_submit_buf", -ret);
	return t0;
}

/* ---- floors ---- */

/* amdkfd's own wake: RELEASE_MEM on an unregistered event, hsaKmtWaitOnEvent(). */
static int64_t floor_kfd(void)
{
	int64_t t0 = signal_gpu(floor_ev);

	if (hsaKmtWaitOnEvent(floor_ev, 20000) != HSAKMT_STATUS_SUCCESS)
		die("floor event not signalled within 20 s", ETIMEDOUT);
	return kfdsim_now_ns() - t0;
}

/* eventfd write -> poll() in an already running thread. */
static struct {
	int ping, pong;
	int64_t woke;
	pthread_t thread;
} efd;

static void *eventfd_main(void *arg)
{
	uint64_t v;

	(void)arg;
	for (;;) {
		struct pollfd p = { .fd = efd.ping, .events = POLLIN };

		if (poll(&p, 1, -1) != 1)
			continue;
		efd.woke = kfdsim_now_ns();
		if (read(efd.ping, &v, sizeof(v)) != sizeof(v))
			continue;
		if (v == 2)
			break;
		v = 1;
		if (write(efd.pong, &v, sizeof(v)) != sizeof(v))
			break;
	}
	return NULL;
}

static void eventfd_start(void)
{
	efd.ping = eventfd(0, EFD_CLOEXEC);
	efd.pong = eventfd(0, EFD_CLOEXEC);
	if (efd.ping < 0 || efd.pong < 0 || pthread_create(&efd.thread, NULL, eventfd_main, NULL))
		die("eventfd floor", errno);
	pthread_setname_np(efd.thread, "bench-eventfd");
}

static void eventfd_stop(void)
{
	uint64_t v = 2;

	if (write(efd.ping, &v, sizeof(v)) == sizeof(v))
		pthread_join(efd.thread, NULL);
	close(efd.ping);
	close(efd.pong);
}

static int64_t floor_eventfd(void)
{
	uint64_t v = 1;
	int64_t t0 = kfdsim_now_ns();

	if (write(efd.ping, &v, sizeof(v)) != sizeof(v))
		die("eventfd write", errno);
	wait_readable(efd.pong);
	if (read(efd.pong, &v, sizeof(v)) != sizeof(v))
		die("eventfd read", errno);
	return efd.woke - t0;
}

/*
 * The relay's floor: amdkfd's wake, handed on by the thread it woke. A
 * thread of ours waits on an unregistered event in hsaKmtWaitOnEvent() and
 * writes an eventfd when woken; the caller submits the RELEASE_MEM and
 * polls the eventfd. What any relay in userspace costs at least: amdkfd's
 * own wake plus one cross-thread wake-up, and no work in between.
 */
static struct {
	HsaEvent *ev;
	int fd;
	atomic_bool stop;
	pthread_t thread;
} krelay;

static void *krelay_main(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	for (;;) {
		HSAKMT_STATUS st = hsaKmtWaitOnEvent(krelay.ev, HSA_EVENTTIMEOUT_INFINITE);

		if (atomic_load(&krelay.stop) || st != HSAKMT_STATUS_SUCCESS)
			break;
		if (write(krelay.fd, &one, sizeof(one)) != sizeof(one))
			break;
	}
	return NULL;
}

static void krelay_start(void)
{
	int ret;

	krelay.ev = new_event();
	if (!krelay.ev)
		die("relay floor: hsaKmtCreateEvent", ENOSPC);
	krelay.fd = eventfd(0, EFD_CLOEXEC);
	if (krelay.fd < 0)
		die("relay floor: eventfd", errno);
	atomic_init(&krelay.stop, false);
	ret = pthread_create(&krelay.thread, NULL, krelay_main, NULL);
	if (ret)
		die("relay floor: pthread_create", ret);
	pthread_setname_np(krelay.thread, "bench-kfdrelay");
}

static void krelay_stop(void)
{
	atomic_store(&krelay.stop, true);
	hsaKmtSetEvent(krelay.ev);
	pthread_join(krelay.thread, NULL);
	hsaKmtDestroyEvent(krelay.ev);
	close(krelay.fd);
}

static int64_t floor_kfd_relay(void)
{
	int64_t t0 = signal_gpu(krelay.ev);
	uint64_t v;

	wait_readable(krelay.fd);
	t0 = kfdsim_now_ns() - t0;
	if (read(krelay.fd, &v, sizeof(v)) != sizeof(v))
		die("relay floor read", errno);
	return t0;
}

/* Timeline increment -> poll() on its fence (sw_sync's path). */
static int64_t floor_timeline(void)
{
	int fd = kfdsync_timeline_create_fence(tl, ++tl_value, "bench");
	int64_t t0;

	if (fd < 0)
		die("kfdsync_timeline_create_fence", -fd);
	t0 = kfdsim_now_ns();
	kfdsync_timeline_inc(tl, 1);
	wait_readable(fd);
	t0 = kfdsim_now_ns() - t0;
	close(fd);
	return t0;
}

/* ---- paths ---- */

static int64_t path_export_sync_file(void)
{
	int fd = export_next(events[0], 0);
	int64_t t0 = signal_gpu(events[0]);

	wait_readable(fd);
	t0 = kfdsim_now_ns() - t0;
	close(fd);
	return t0;
}

static int eventfd_export_fd = -1;

static int64_t path_export_eventfd(void)
{
	uint64_t v;
	int ret = kfdsync_event_export_eventfd(ctx, events[0]->EventId, age_of(events[0]), 0,
					       eventfd_export_fd);
	int64_t t0;

	if (ret)
		die("kfdsync_event_export_eventfd", -ret);
	t0 = signal_gpu(events[0]);
	wait_readable(eventfd_export_fd);
	t0 = kfdsim_now_ns() - t0;
	if (read(eventfd_export_fd, &v, sizeof(v)) != sizeof(v))
		die("read eventfd", errno);
	return t0;
}

static int64_t path_export_cpu(void)
{
	int fd = export_next(events[0], 0);
	int64_t t0 = kfdsim_now_ns();

	hsaKmtSetEvent(events[0]);
	wait_readable(fd);
	t0 = kfdsim_now_ns() - t0;
	close(fd);
	return t0;
}

static volatile uint64_t *import_word;

static int64_t path_import_memory(void)
{
	int fd = kfdsync_timeline_create_fence(tl, ++tl_value, "bench"), ret;
	int64_t t0, limit;

	if (fd < 0)
		die("kfdsync_timeline_create_fence", -fd);
	*import_word = 0;
	ret = kfdsync_import_to_memory(ctx, fd, (uint64_t *)import_word, 1, 2);
	if (ret)
		die("kfdsync_import_to_memory", -ret);
	t0 = kfdsim_now_ns();
	limit = t0 + 20000000000LL;
	kfdsync_timeline_inc(tl, 1);
	while (!*import_word)
		if (kfdsim_now_ns() > limit)
			die("imported word not written within 20 s", ETIMEDOUT);
	t0 = kfdsim_now_ns() - t0;
	close(fd);
	return t0;
}

static HsaEvent *import_ev;

static int64_t path_import_event(void)
{
	int fd = kfdsync_timeline_create_fence(tl, ++tl_value, "bench"), ret;
	int64_t t0;

	if (fd < 0)
		die("kfdsync_timeline_create_fence", -fd);
	ret = kfdsync_import_to_event(ctx, fd, import_ev->EventId);
	if (ret)
		die("kfdsync_import_to_event", -ret);
	t0 = kfdsim_now_ns();
	kfdsync_timeline_inc(tl, 1);
	if (hsaKmtWaitOnEvent(import_ev, 20000) != HSAKMT_STATUS_SUCCESS)
		die("imported event not set within 20 s", ETIMEDOUT);
	t0 = kfdsim_now_ns() - t0;
	close(fd);
	return t0;
}

static int64_t *hsa_value;
static struct kfdsync_hsa_signal hsa_sig;

static int64_t path_hsa_condition(void)
{
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	int64_t t0;
	int fd, ret;

	*hsa_value = 1;
	fd = kfdsync_hsa_signal_export_sync_file(ctx, &hsa_sig, KFDSYNC_HSA_EQ, 0, 0);
	if (fd < 0)
		die("kfdsync_hsa_signal_export_sync_file", -fd);
	pm4_write_data64(&b, (uintptr_t)hsa_value, 0);
	pm4_release_mem_event(&b, hsa_sig.mailbox, hsa_sig.event_id);
	t0 = kfdsim_now_ns();
	ret = kfdsim_submit_buf(sim, queue, &b, NULL);
	if (ret)
		die("kfdsim_submit_buf", -ret);
	wait_readable(fd);
	t0 = kfdsim_now_ns() - t0;
	close(fd);
	return t0;
}

/*
 * Where a GPU signal's latency goes, per hop: the submit until the
 * simulator raises the interrupt (its queue thread wakes and runs the
 * packet), the interrupt until the fence's signal timestamp (amdkfd's
 * interrupt path, plus with the relay its thread's wake-up and report), and
 * the signal until poll() returns (waking the consumer). amdkfd's own wake
 * is the submit until the interrupt, then the interrupt until
 * hsaKmtWaitOnEvent() returns.
 */
struct hops {
	int64_t submit_irq, irq_signal, signal_wake, irq_wake;
};

static int64_t last_irq(void)
{
	struct kfdsim_queue_status st = { .queue_id = queue };

	if (kfdsim_queue_status(sim, queue, &st))
		die("kfdsim_queue_status", EIO);
	return (int64_t)st.last_irq_ns;
}

static struct hops hops_export(void)
{
	struct kfdsync_fence_status f;
	int fd = export_next(events[0], 0);
	int64_t t0 = signal_gpu(events[0]), t1, irq;
	struct hops h;

	wait_readable(fd);
	t1 = kfdsim_now_ns();
	irq = last_irq();
	if (kfdsync_sync_file_get_status(fd, NULL, &f, 1) != 1)
		die("kfdsync_sync_file_get_status", EIO);
	h = (struct hops){ .submit_irq = irq - t0, .irq_signal = (int64_t)f.timestamp_ns - irq,
			   .signal_wake = t1 - (int64_t)f.timestamp_ns, .irq_wake = t1 - irq };
	close(fd);
	return h;
}

static struct hops hops_floor(void)
{
	int64_t t0 = signal_gpu(floor_ev), t1, irq;

	if (hsaKmtWaitOnEvent(floor_ev, 20000) != HSAKMT_STATUS_SUCCESS)
		die("floor event not signalled within 20 s", ETIMEDOUT);
	t1 = kfdsim_now_ns();
	irq = last_irq();
	return (struct hops){ .submit_irq = irq - t0, .irq_wake = t1 - irq };
}

static void hops_row(const char *name, const char *hop, int64_t *ns, int n)
{
	struct stats s = stats_of(ns, n);

	printf("%-28s %-14s %9.1f %9.1f %9.1f\n", name, hop, s.p50, s.p90, s.p99);
	json_begin("\"name\": \"%s\", \"hop\": \"%s\", \"mode\": \"%s\"", name, hop, mode);
	json_stats("stats", s);
	json_end();
}

static void bench_hops(void)
{
	int n = iterations, i;
	int64_t *v[6];
	static const char *const names[] = { "submit->irq", "irq->signal", "signal->wake",
					     "irq->wake", "submit->irq", "irq->wake" };

	for (i = 0; i < 6; i++) {
		v[i] = calloc(n, sizeof(int64_t));
		if (!v[i])
			die("calloc", ENOMEM);
	}
	for (i = 0; i < n; i++) {
		struct hops e = hops_export(), f = hops_floor();

		v[0][i] = e.submit_irq;
		v[1][i] = e.irq_signal;
		v[2][i] = e.signal_wake;
		v[3][i] = e.irq_wake;
		v[4][i] = f.submit_irq;
		v[5][i] = f.irq_wake;
	}
	printf("\n# where the latency goes, per hop (%s mode, microseconds, interleaved)\n", mode);
	printf("%-28s %-14s %9s %9s %9s\n", "# path", "hop", "p50", "p90", "p99");
	json_section("hops");
	for (i = 0; i < 6; i++) {
		hops_row(i < 4 ? "export_sync_file" : "floor:kfd_wait", names[i], v[i], n);
		free(v[i]);
	}
}

/* Interleave path and floor, @n times each. */
static void interleave(int64_t (*path)(void), int64_t (*floor_fn)(void), int n,
		       struct stats *ps, struct stats *fs)
{
	int64_t *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	int i;

	if (!a || !b)
		die("calloc", ENOMEM);
	for (i = 0; i < n; i++) {
		a[i] = path();
		b[i] = floor_fn();
	}
	*ps = stats_of(a, n);
	*fs = stats_of(b, n);
	free(a);
	free(b);
}

static void latency_row(const char *name, int64_t (*path)(void), const char *floor_name,
			int64_t (*floor_fn)(void))
{
	struct stats p, f;

	interleave(path, floor_fn, iterations, &p, &f);
	report_latency(name, p, floor_name, f);
}

static void bench_latency(void)
{
	struct stats p, f;

	table_header("latency");
	json_section("latency");
	/* Two floors against each other: the machine's noise, for scale. */
	interleave(floor_eventfd, floor_kfd, iterations, &p, &f);
	report_latency("floor:eventfd", p, "kfd_wait", f);
	interleave(floor_timeline, floor_eventfd, iterations, &p, &f);
	report_latency("floor:timeline", p, "eventfd", f);
	krelay_start();
	interleave(floor_kfd_relay, floor_kfd, iterations, &p, &f);
	report_latency("floor:kfd_relay", p, "kfd_wait", f);

	latency_row("export_sync_file", path_export_sync_file, "kfd_wait", floor_kfd);
	/* A relay has one wake-up more than amdkfd: compare it with its own floor. */
	if (relay_mode)
		latency_row("export_sync_file", path_export_sync_file, "kfd_relay",
			    floor_kfd_relay);
	krelay_stop();
	latency_row("export_eventfd", path_export_eventfd, "kfd_wait", floor_kfd);
	if (!relay_mode)
		latency_row("hsa_condition", path_hsa_condition, "kfd_wait", floor_kfd);
	else
		printf("# hsa_condition: skipped in relay mode (ROCr's hints relay it)\n");
	latency_row("export_cpu_set", path_export_cpu, "eventfd", floor_eventfd);
	latency_row("import_memory", path_import_memory, "eventfd", floor_eventfd);
	latency_row("import_event", path_import_event, "eventfd", floor_eventfd);
	latency_row("timeline", floor_timeline, "eventfd", floor_eventfd);
	bench_hops();
}

/* ---- scaling ---- */

/* Pending fences, one per registered event but events[0] (kept open). */
static int pending_fds[MAX_EVENTS];
static int n_pending;

static void pend_fences(int n)
{
	while (n_pending + 1 < n && n_pending + 1 < n_registered) {
		HsaEvent *ev = events[n_pending + 1];
		int fd = kfdsync_event_export_sync_file(ctx, ev->EventId, age_of(ev),
							3600LL * 1000000000);

		if (fd < 0) {
			fprintf(stderr, "# pending fence #%d: %s\n", n_pending, strerror(-fd));
			break;
		}
		pending_fds[n_pending++] = fd;
	}
}

static void unpend_fences(void)
{
	while (n_pending)
		close(pending_fds[--n_pending]);
}

/* The export path, and the kernel's time from the interrupt to the signal. */
static int64_t last_irq_to_signal;

static int64_t path_export_irq(void)
{
	struct kfdsync_fence_status f;
	struct kfdsim_queue_status st = { .queue_id = queue };
	int fd = export_next(events[0], 0);
	int64_t t0 = signal_gpu(events[0]);

	wait_readable(fd);
	t0 = kfdsim_now_ns() - t0;
	if (kfdsync_sync_file_get_status(fd, NULL, &f, 1) == 1 && !kfdsim_queue_status(sim, queue, &st))
		last_irq_to_signal = (int64_t)(f.timestamp_ns - st.last_irq_ns);
	close(fd);
	return t0;
}

static void scaling_row(const char *kind, int count, int actual)
{
	int64_t *a = calloc(iterations, sizeof(*a)), *b = calloc(iterations, sizeof(*b));
	int64_t *k = calloc(iterations, sizeof(*k));
	struct stats p, f, ks;
	char name[48];
	int i;

	if (!a || !b || !k)
		die("calloc", ENOMEM);
	for (i = 0; i < iterations; i++) {
		a[i] = path_export_irq();
		k[i] = last_irq_to_signal;
		b[i] = floor_kfd();
	}
	p = stats_of(a, iterations);
	f = stats_of(b, iterations);
	ks = stats_of(k, iterations);
	snprintf(name, sizeof(name), "export/%s=%d", kind, actual);
	printf("%-28s %6d %9.1f %9.1f %9.1f %9.1f  %-12s %9.1f %6.2f %6.2f  irq->signal %7.1f %7.1f\n",
	       name, p.n, p.p50, p.p90, p.p99, p.max, "kfd_wait", f.p50, ratio(p.p50, f.p50),
	       ratio(p.p90, f.p90), ks.p50, ks.p90);
	fflush(stdout);
	json_begin("\"kind\": \"%s\", \"count\": %d, \"requested\": %d, \"mode\": \"%s\", "
		   "\"ratio_p50\": %.3f, \"ratio_p90\": %.3f", kind, actual, count, mode,
		   ratio(p.p50, f.p50), ratio(p.p90, f.p90));
	json_stats("path", p);
	json_stats("floor_stats", f);
	json_stats("irq_to_signal", ks);
	json_end();
	free(a);
	free(b);
	free(k);
}

/* Other processes, each with a context, events registered and fences pending. */
static pid_t children[64];
static int n_children;
static int child_pipe[2];

static void child_main(int n_ev, int ready_fd)
{
	struct kfdsync_ctx *c;
	static int fds[MAX_EVENTS];
	char x = 1;
	int i, n = 0;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS || kfdsync_ctx_new(&c))
		_exit(1);
	for (i = 0; i < n_ev && i < MAX_EVENTS; i++) {
		HsaEvent *ev = new_event();

		if (!ev || kfdsync_event_add_hsa(c, ev, NULL))
			break;
		fds[n++] = kfdsync_event_export_sync_file(c, ev->EventId, 0, 3600LL * 1000000000);
	}
	if (write(ready_fd, &x, 1) != 1)
		_exit(1);
	close(ready_fd);
	/* Until the parent closes its end. */
	while (read(child_pipe[0], &x, 1) > 0)
		;
	for (i = 0; i < n; i++)
		close(fds[i]);
	_exit(0);
}

static void spawn_children(int n, int n_ev)
{
	int ready[2];
	char x;

	if (!n_children && pipe(child_pipe))
		die("pipe", errno);
	if (pipe(ready))
		die("pipe", errno);
	while (n_children < n) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork", errno);
		if (pid == 0) {
			close(ready[0]);
			close(child_pipe[1]);
			child_main(n_ev, ready[1]);
		}
		children[n_children++] = pid;
		if (read(ready[0], &x, 1) != 1)
			die("a child process failed to set up", EIO);
	}
	close(ready[0]);
	close(ready[1]);
}

static void reap_children(void)
{
	if (!n_children)
		return;
	close(child_pipe[1]);
	while (n_children)
		waitpid(children[--n_children], NULL, 0);
	close(child_pipe[0]);
}

/* Wait-all (merged sync_file, or poll until every fd) and wait-any over N fences. */
static void waitn_rows(int n)
{
	int64_t *merged = calloc(iterations, sizeof(int64_t));
	int64_t *all = calloc(iterations, sizeof(int64_t));
	int64_t *any = calloc(iterations, sizeof(int64_t));
	struct pollfd *p = calloc(n, sizeof(*p));
	int *fds = calloc(n, sizeof(int));
	/* Merging N fences one by one costs O(N^2): fewer rounds for large N. */
	int it, i, iters = 4000 / n < iterations / 4 ? 4000 / n : iterations / 4;
	struct stats s1, s2, s3;

	if (iters < 1)
		iters = 1;
	if (!merged || !all || !any || !p || !fds)
		die("calloc", ENOMEM);
	for (it = 0; it < iters; it++) {
		for (int kind = 0; kind < 3; kind++) {
			uint32_t *dw = calloc(8 * n + 8, sizeof(uint32_t));
			struct pm4_buf b = { .dw = dw, .cap = 8 * n + 8 };
			int mfd = -1, left;
			int64_t t0;

			for (i = 0; i < n; i++)
				fds[i] = export_next(events[i], 0);
			if (kind == 0) {
				mfd = dup(fds[0]);
				for (i = 1; i < n; i++) {
					int m = kfdsync_sync_file_merge(NULL, mfd, fds[i]);

					if (m < 0)
						die("kfdsync_sync_file_merge", -m);
					close(mfd);
					mfd = m;
				}
			}
			if (kind == 2)
				pm4_release_mem_event(&b, events[n - 1]->EventData.HWData2,
						      events[n - 1]->EventId);
			else
				for (i = 0; i < n; i++)
					pm4_release_mem_event(&b, events[i]->EventData.HWData2,
							      events[i]->EventId);
			t0 = kfdsim_now_ns();
			if (kfdsim_submit_buf(sim, queue, &b, NULL))
				die("kfdsim_submit_buf", EIO);
			if (kind == 0) {
				wait_readable(mfd);
				merged[it] = kfdsim_now_ns() - t0;
				close(mfd);
			} else {
				for (i = 0; i < n; i++)
					p[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
				for (left = kind == 1 ? n : 1; left > 0;) {
					/* n > 0: said so, for gcc 14's -Wstringop-overflow. */
					int r = poll(p, n > 0 ? (nfds_t)n : 0, 20000);

					if (r <= 0)
						die("poll", r ? errno : ETIMEDOUT);
					for (i = 0; i < n; i++)
						if (p[i].revents) {
							p[i].fd = -1;
							left--;
						}
				}
				(kind == 1 ? all : any)[it] = kfdsim_now_ns() - t0;
			}
			for (i = 0; i < n; i++)
				close(fds[i]);
			free(dw);
			if (kind == 2) {	/* the others are still pending: signal them */
				struct pm4_buf b2 = { .dw = calloc(8 * n, 4), .cap = 8 * n };
				uint64_t end;

				for (i = 0; i < n - 1; i++)
					pm4_release_mem_event(&b2, events[i]->EventData.HWData2,
							      events[i]->EventId);
				if (n > 1 && !kfdsim_submit_buf(sim, queue, &b2, &end))
					kfdsim_queue_wait(sim, queue, end, 20000);
				free((void *)b2.dw);
				/* Relay mode: let the relay report them before the next export. */
				if (relay_mode)
					usleep(20000);
			}
		}
	}
	s1 = stats_of(merged, iters);
	s2 = stats_of(all, iters);
	s3 = stats_of(any, iters);
	printf("%-28s %6d %9.1f %9.1f %9.1f %9.1f\n", "waitall_merged", n, s1.p50, s1.p90, s1.p99,
	       s1.max);
	printf("%-28s %6d %9.1f %9.1f %9.1f %9.1f\n", "waitall_poll", n, s2.p50, s2.p90, s2.p99,
	       s2.max);
	printf("%-28s %6d %9.1f %9.1f %9.1f %9.1f\n", "waitany_poll", n, s3.p50, s3.p90, s3.p99,
	       s3.max);
	fflush(stdout);
	json_begin("\"kind\": \"wait\", \"count\": %d, \"mode\": \"%s\"", n, mode);
	json_stats("waitall_merged", s1);
	json_stats("waitall_poll", s2);
	json_stats("waitany_poll", s3);
	json_end();
	free(merged);
	free(all);
	free(any);
	free(p);
	free(fds);
}

static void bench_scaling(void)
{
	static const int counts[] = { 1, 64, 1024, MAX_EVENTS };
	static const int contexts[] = { 1, 8, 64 };
	size_t i;

	table_header("scaling: registered events, each with a pending fence");
	json_section("scaling");
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		int want = counts[i] == MAX_EVENTS ? MAX_EVENTS - RESERVED_EVENTS : counts[i];

		if (quick && counts[i] > 64)
			break;
		register_events(want);
		pend_fences(want);
		scaling_row("events", counts[i], n_registered);
	}
	unpend_fences();
	unregister_events(1);

	table_header("scaling: other processes' contexts (64 events, 64 pending fences each)");
	scaling_row("contexts", 0, 0);
	for (i = 0; i < sizeof(contexts) / sizeof(contexts[0]); i++) {
		if (quick && contexts[i] > 1)
			break;
		spawn_children(contexts[i], 64);
		scaling_row("contexts", contexts[i], n_children);
	}
	reap_children();

	printf("\n# wait on N exported fences (%s mode, microseconds from the submit)\n", mode);
	printf("%-28s %6s %9s %9s %9s %9s\n", "# wait", "N", "p50", "p90", "p99", "max");
	for (i = 0; i < 3; i++) {
		static const int ns[] = { 8, 64, 512 };

		if (quick && ns[i] > 8)
			break;
		register_events(ns[i]);
		waitn_rows(ns[i]);
	}
	unregister_events(1);
}

/* ---- contexts: open, close, exit (issue 25) ---- */

static int64_t open_close(const char *path)
{
	int64_t t0 = kfdsim_now_ns();
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die(path, errno);
	close(fd);
	return kfdsim_now_ns() - t0;
}

static int64_t path_ctx_open_close(void)
{
	return open_close("/dev/kfdsync");
}

static int64_t floor_tl_open_close(void)
{
	return open_close("/dev/kfdsync_timeline");
}

#define EXIT_FILES	1024

/*
 * A process that opens EXIT_FILES of @path and exits: the time from its
 * exit (it is told to go) until waitpid() returns in the parent.
 */
static int64_t exit_with(const char *path)
{
	int ready[2], go[2], i;
	int64_t t0, t1;
	pid_t pid;
	char x = 1;

	if (pipe(ready) || pipe(go))
		die("pipe", errno);
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		for (i = 0; i < EXIT_FILES; i++)
			if (open(path, O_RDWR | O_CLOEXEC) < 0)
				_exit(1);
		if (write(ready[1], &x, 1) != 1 || read(go[0], &x, 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &x, 1) != 1)
		die("a process with many files failed to set up", EMFILE);
	t0 = kfdsim_now_ns();
	if (write(go[1], &x, 1) != 1)
		die("write", errno);
	waitpid(pid, NULL, 0);
	t1 = kfdsim_now_ns();
	fprintf(stderr, "# a process exited with %d of %s in %.1f ms\n", EXIT_FILES, path,
		(t1 - t0) / 1e6);
	close(ready[0]);
	close(go[1]);
	return t1 - t0;
}

static int64_t path_exit_contexts(void)
{
	return exit_with("/dev/kfdsync");
}

static int64_t floor_exit_timelines(void)
{
	return exit_with("/dev/kfdsync_timeline");
}

/*
 * Opening and closing a context (an address space's notifier), against a
 * timeline's open and close (the same misc device path without one); a
 * process exiting with EXIT_FILES contexts, against one with as many
 * timelines.
 */
static void bench_contexts(void)
{
	int rounds = quick ? 2 : 8, fds[EXIT_FILES], i, n = 0;
	struct stats p, f;

	table_header("contexts: open and close, exit with many");
	json_section("contexts");
	interleave(path_ctx_open_close, floor_tl_open_close, iterations, &p, &f);
	report_latency("ctx_open_close", p, "tl_open_close", f);
	/* The same with this process holding EXIT_FILES - 1 contexts. */
	while (n < EXIT_FILES - 1 && (fds[n] = open("/dev/kfdsync", O_RDWR | O_CLOEXEC)) >= 0)
		n++;
	interleave(path_ctx_open_close, floor_tl_open_close, iterations, &p, &f);
	report_latency("ctx_open_close_1023_open", p, "tl_open_close", f);
	for (i = 0; i < n; i++)
		close(fds[i]);
	interleave(path_exit_contexts, floor_exit_timelines, rounds, &p, &f);
	report_latency("exit_1024_contexts", p, "exit_1024_tls", f);
}

/* ---- walks of every process: a GPU reset, amdgpu going (issue 25) ---- */

#define WALK_PROCS	64
#define DEBUGFS		"/sys/kernel/debug/kfdsync/"

static int debugfs_write(const char *file, const char *text)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), DEBUGFS "%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* The longest holds of <debugfs>/kfdsync/slots, in ns: table, process, hook. */
static bool slots_held(int64_t held[3])
{
	FILE *f = fopen(DEBUGFS "slots", "r");
	char line[256];
	bool ok = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%" SCNd64 " %" SCNd64 " %" SCNd64, &held[0],
					     &held[1], &held[2]) == 3)
			ok = true;
	fclose(f);
	return ok;
}

static uint32_t user_fences(void)
{
	struct kfdsync_module_status st;

	if (kfdsync_ctx_get_module_status(ctx, &st))
		return 0;
	return st.user_fences;
}

/* Inject @what, wait for every pending fence to end; a row of the holds. */
static void walk_row(const char *what, int procs, int events)
{
	int64_t held[3] = { 0 }, t0, ended = -1;
	uint32_t pending = user_fences();

	debugfs_write("slots", "0");
	t0 = kfdsim_now_ns();
	if (debugfs_write("inject", what)) {
		printf("# %s: no <debugfs>/kfdsync/inject\n", what);
		return;
	}
	while (kfdsim_now_ns() - t0 < 120 * 1000000000LL) {
		if (!user_fences()) {
			ended = kfdsim_now_ns() - t0;
			break;
		}
		usleep(1000);
	}
	if (!slots_held(held))
		printf("# %s: no <debugfs>/kfdsync/slots\n", what);
	printf("%-14s %5d %7d %8u %12.1f %12.1f %12.1f %12.1f\n", what, procs, events, pending,
	       held[0] / 1e3, held[1] / 1e3, held[2] / 1e3, ended / 1e3);
	json_entry("\"name\": \"%s\", \"mode\": \"%s\", \"processes\": %d, \"events\": %d, "
		   "\"pending\": %u, \"table_us\": %.1f, \"process_us\": %.1f, \"hook_us\": %.1f, "
		   "\"ended_us\": %.1f", what, mode, procs, events, pending, held[0] / 1e3,
		   held[1] / 1e3, held[2] / 1e3, ended / 1e3);
}

/*
 * WALK_PROCS other processes with MAX_EVENTS - RESERVED_EVENTS registered
 * events each, a pending fence on every one: how long kfdsync holds its
 * locks, and runs in the hook, when a GPU reset ends every process's fences
 * (injected: no GPU here), then when every slot ends (as amdgpu going).
 */
static void bench_walks(void)
{
	int procs = quick ? 2 : WALK_PROCS, events = quick ? 64 : MAX_EVENTS - RESERVED_EVENTS;

	if (relay_mode) {
		printf("\n# walks: skipped in relay mode (no slots)\n");
		return;
	}
	unregister_events(1);
	spawn_children(procs, events);
	printf("\n# walks of every process (%s mode; longest holds, microseconds)\n", mode);
	printf("%-14s %5s %7s %8s %12s %12s %12s %12s\n", "# inject", "procs", "events",
	       "pending", "table lock", "process lock", "in the hook", "all ended");
	json_section("walks");
	walk_row("reset", procs, events);
	walk_row("end", procs, events);
	reap_children();
}

/* ---- tracing ---- */

/*
 * kfdsync's tracepoints on the export path: export_sync_file with the
 * "kfdsync" events disabled (each a static branch) and enabled into a
 * tracefs instance of the bench's own (its ring buffer written, nobody
 * reading it), in alternating blocks, each sample interleaved with
 * amdkfd's wake. Tasks' names are not recorded meanwhile
 * (options/record-cmd): that would hook sched_switch at every enable, and
 * patching __schedule this often can hang a QEMU TCG guest
 * (tests/guest/kfdsync/kfdsync_trace.c).
 */
static char trace_inst[200];

/* Write @val to the file @dir/@name: true if it took it. */
static bool write_at(const char *dir, const char *name, const char *val)
{
	char path[256];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok;
}

static bool trace_enable(bool on)
{
	return write_at(trace_inst, "events/kfdsync/enable", on ? "1" : "0");
}

/* Events the instance recorded ("entries-written" of its trace's header). */
static long trace_written(void)
{
	char path[256], line[256];
	long in, written = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", trace_inst);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && line[0] == '#')
		if (sscanf(line, "# entries-in-buffer/entries-written: %ld/%ld", &in, &written) == 2)
			break;
	fclose(f);
	return written;
}

static void bench_tracing(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	int n = iterations, block = 50, i, j, k[2] = { 0, 0 };
	int64_t *path[2], *floor_ns[2];
	const char *root = NULL;
	struct stats p[2], f[2];
	long written;

	for (i = 0; i < 2 && !trace_inst[0]; i++) {
		/* Before the instance: it copies the option. */
		if (!write_at(dirs[i], "options/record-cmd", "0"))
			continue;
		root = dirs[i];
		snprintf(trace_inst, sizeof(trace_inst), "%s/instances/kfdsync_bench_%d", dirs[i],
			 (int)getpid());
		if (mkdir(trace_inst, 0700))
			trace_inst[0] = '\0';
	}
	if (!trace_inst[0] || !trace_enable(false)) {
		printf("\n# tracing: skipped, no tracefs instance with kfdsync's events\n");
		if (trace_inst[0])
			rmdir(trace_inst);
		trace_inst[0] = '\0';
		if (root)
			write_at(root, "options/record-cmd", "1");
		return;
	}
	for (i = 0; i < 2; i++) {
		path[i] = calloc(n, sizeof(int64_t));
		floor_ns[i] = calloc(n, sizeof(int64_t));
		if (!path[i] || !floor_ns[i])
			die("calloc", ENOMEM);
	}
	/*
	 * Off, then on, a block of each at a time: the noise hits both, and so
	 * does the retranslation that follows each toggle under QEMU TCG.
	 */
	for (i = 0; i < 2 * n; i += 2 * block) {
		for (int on = 0; on < 2; on++) {
			if (!trace_enable(on))
				die("enabling kfdsync's events", EIO);
			for (j = 0; j < block && k[on] < n; j++, k[on]++) {
				path[on][k[on]] = path_export_sync_file();
				floor_ns[on][k[on]] = floor_kfd();
			}
		}
	}
	trace_enable(false);
	written = trace_written();
	for (i = 0; i < 2; i++) {
		p[i] = stats_of(path[i], n);
		f[i] = stats_of(floor_ns[i], n);
	}
	table_header("tracepoints: export_sync_file, kfdsync's events off and on");
	json_section("tracing");
	report_latency("export_sync_file:trace_off", p[0], "kfd_wait", f[0]);
	report_latency("export_sync_file:trace_on", p[1], "kfd_wait", f[1]);
	/* The two against each other: what enabling costs. */
	report_latency("export_sync_file:trace_on", p[1], "trace_off", p[0]);
	printf("# %ld events recorded while on: %.1f per export\n", written,
	       n ? (double)written / n : 0);
	json_entry("\"name\": \"events_per_export\", \"mode\": \"%s\", \"value\": %.2f", mode,
		   n ? (double)written / n : 0);
	for (i = 0; i < 2; i++) {
		free(path[i]);
		free(floor_ns[i]);
	}
	if (rmdir(trace_inst))
		fprintf(stderr, "# rmdir %s: %s\n", trace_inst, strerror(errno));
	trace_inst[0] = '\0';
	write_at(root, "options/record-cmd", "1");
}

/* ---- throughput ---- */

static double seconds_of(int64_t ns)
{
	return ns / 1e9;
}

/* register + export + signal + wait + close + unregister, on @n events at once. */
static int64_t cycles(int n, int rounds)
{
	uint32_t *dw = calloc(8 * n + 8, 4);
	int *fds = calloc(n, sizeof(int));
	int64_t t0 = kfdsim_now_ns();
	int r, i, ret;

	if (!dw || !fds)
		die("calloc", ENOMEM);
	for (r = 0; r < rounds; r++) {
		struct pm4_buf b = { .dw = dw, .cap = 8 * n + 8 };

		for (i = 0; i < n; i++) {
			HsaEvent *ev = events[1 + i];

			ret = kfdsync_event_add_hsa(ctx, ev, NULL);
			if (ret)
				die("kfdsync_event_add_hsa", -ret);
			fds[i] = kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 0);
			if (fds[i] < 0)
				die("kfdsync_event_export_sync_file", -fds[i]);
			pm4_release_mem_event(&b, ev->EventData.HWData2, ev->EventId);
		}
		if (kfdsim_submit_buf(sim, queue, &b, NULL))
			die("kfdsim_submit_buf", EIO);
		for (i = 0; i < n; i++) {
			wait_readable(fds[i]);
			close(fds[i]);
			kfdsync_event_remove(ctx, events[1 + i]->EventId);
		}
	}
	free(dw);
	free(fds);
	return kfdsim_now_ns() - t0;
}

/*
 * One event's cycle, step by step: what each call costs (the submit's step
 * runs until poll() returns). @rounds samples of each.
 */
static void cycle_steps(int rounds)
{
	static const char *const names[] = { "register", "export", "signal+wait", "close",
					      "unregister" };
	enum { STEPS = 5 };
	int64_t *v[STEPS];
	HsaEvent *ev = events[1];
	int r, i;

	for (i = 0; i < STEPS; i++) {
		v[i] = calloc(rounds, sizeof(int64_t));
		if (!v[i])
			die("calloc", ENOMEM);
	}
	for (r = 0; r < rounds; r++) {
		int64_t t[STEPS + 1];
		int fd, ret;

		t[0] = kfdsim_now_ns();
		ret = kfdsync_event_add_hsa(ctx, ev, NULL);
		if (ret)
			die("kfdsync_event_add_hsa", -ret);
		t[1] = kfdsim_now_ns();
		fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 0);
		if (fd < 0)
			die("kfdsync_event_export_sync_file", -fd);
		t[2] = kfdsim_now_ns();
		signal_gpu(ev);
		wait_readable(fd);
		t[3] = kfdsim_now_ns();
		close(fd);
		t[4] = kfdsim_now_ns();
		kfdsync_event_remove(ctx, ev->EventId);
		t[5] = kfdsim_now_ns();
		for (i = 0; i < STEPS; i++)
			v[i][r] = t[i + 1] - t[i];
	}
	printf("\n# cycle_one_event step by step (%s mode, microseconds)\n", mode);
	printf("%-28s %9s %9s %9s\n", "# step", "p50", "p90", "p99");
	json_section("cycle_steps");
	for (i = 0; i < STEPS; i++) {
		struct stats s = stats_of(v[i], rounds);

		printf("%-28s %9.1f %9.1f %9.1f\n", names[i], s.p50, s.p90, s.p99);
		json_begin("\"name\": \"%s\", \"mode\": \"%s\"", names[i], mode);
		json_stats("stats", s);
		json_end();
		free(v[i]);
	}
}

static int64_t timeline_cycles(int rounds)
{
	int64_t t0 = kfdsim_now_ns();
	int r;

	for (r = 0; r < rounds; r++)
		floor_timeline();
	return kfdsim_now_ns() - t0;
}

static int64_t eventfd_roundtrips(int rounds)
{
	int64_t t0 = kfdsim_now_ns();
	int r;

	for (r = 0; r < rounds; r++)
		floor_eventfd();
	return kfdsim_now_ns() - t0;
}

static void bench_throughput(void)
{
	int chunks = quick ? 1 : 10, chunk = iterations / 10 > 0 ? iterations / 10 : 1;
	int64_t one = 0, many = 0, tlc = 0, efdt = 0;
	int c, many_n = 64;

	create_events(1 + many_n);
	unregister_events(1);
	for (c = 0; c < chunks; c++) {
		one += cycles(1, chunk);
		efdt += eventfd_roundtrips(chunk);
		many += cycles(many_n, chunk / 8 > 0 ? chunk / 8 : 1);
		efdt += eventfd_roundtrips(chunk);
		tlc += timeline_cycles(chunk);
		efdt += eventfd_roundtrips(chunk);
	}
	{
		double efd_rate = 3.0 * chunks * chunk / seconds_of(efdt);
		double one_rate = (double)chunks * chunk / seconds_of(one);
		double many_rate = (double)chunks * (chunk / 8 > 0 ? chunk / 8 : 1) * many_n /
				   seconds_of(many);
		double tl_rate = (double)chunks * chunk / seconds_of(tlc);

		printf("\n# throughput (%s mode, per second; interleaved in %d chunks)\n", mode, chunks);
		printf("%-28s %12s %8s\n", "# cycle", "per second", "x floor");
		printf("%-28s %12.0f %8.2f\n", "floor:eventfd_roundtrip", efd_rate, 1.0);
		printf("%-28s %12.0f %8.2f\n", "cycle_one_event", one_rate, ratio(one_rate, efd_rate));
		printf("%-28s %12.0f %8.2f\n", "cycle_64_events", many_rate,
		       ratio(many_rate, efd_rate));
		printf("%-28s %12.0f %8.2f\n", "timeline_cycle", tl_rate, ratio(tl_rate, efd_rate));
		fflush(stdout);
		json_section("throughput");
		json_entry("\"name\": \"floor:eventfd_roundtrip\", \"mode\": \"%s\", \"per_s\": %.1f",
			   mode, efd_rate);
		json_entry("\"name\": \"cycle_one_event\", \"mode\": \"%s\", \"per_s\": %.1f, "
			   "\"ratio\": %.3f", mode, one_rate, ratio(one_rate, efd_rate));
		json_entry("\"name\": \"cycle_64_events\", \"mode\": \"%s\", \"per_s\": %.1f, "
			   "\"ratio\": %.3f", mode, many_rate, ratio(many_rate, efd_rate));
		json_entry("\"name\": \"timeline_cycle\", \"mode\": \"%s\", \"per_s\": %.1f, "
			   "\"ratio\": %.3f", mode, tl_rate, ratio(tl_rate, efd_rate));
	}
	cycle_steps(quick ? 3 : iterations / 2);
}

/* ---- memory ---- */

/* Bytes in use in every slab cache (active_objs * objsize), and per cache. */
#define MAX_CACHES 512
struct slab_snap {
	int n;
	char name[MAX_CACHES][32];
	int64_t bytes[MAX_CACHES];
	int64_t total;
};

static void slab_read(struct slab_snap *s)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512];

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && s->n < MAX_CACHES) {
		long active, num, size;
		char name[64];

		if (line[0] == '#' || sscanf(line, "%63s %ld %ld %ld", name, &active, &num, &size) != 4)
			continue;
		snprintf(s->name[s->n], sizeof(s->name[0]), "%.31s", name);
		s->bytes[s->n] = (int64_t)active * size;
		s->total += s->bytes[s->n];
		s->n++;
	}
	fclose(f);
}

/* Print the caches that grew most between @a and @b; return total bytes. */
static int64_t slab_delta(const char *what, const struct slab_snap *a, const struct slab_snap *b,
			  int per)
{
	int64_t d = b->total - a->total;
	int i, j, shown = 0;
	char top[256] = "";

	for (shown = 0; shown < 4; shown++) {
		int best = -1;
		int64_t bd = 0;

		for (i = 0; i < b->n; i++) {
			int64_t x = b->bytes[i];

			for (j = 0; j < a->n; j++)
				if (!strcmp(a->name[j], b->name[i]))
					x -= a->bytes[j];
			if (x > bd && !strstr(top, b->name[i])) {
				bd = x;
				best = i;
			}
		}
		if (best < 0 || bd < per * 16)
			break;
		snprintf(top + strlen(top), sizeof(top) - strlen(top), "%s%s %.0f", shown ? ", " : "",
			 b->name[best], (double)bd / per);
	}
	printf("%-34s %6d %10.0f   (%s)\n", what, per, per ? (double)d / per : 0, top);
	json_entry("\"name\": \"%s\", \"mode\": \"%s\", \"count\": %d, \"bytes_per\": %.1f, "
		   "\"top_caches\": \"%s\"", what, mode, per, per ? (double)d / per : 0, top);
	return d;
}

static long vmstat(const char *key)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char name[64];
	long v, r = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &v) == 2)
		if (!strcmp(name, key))
			r = v;
	fclose(f);
	return r;
}

static void bench_memory(void)
{
	struct slab_snap *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	int n = quick ? 64 : MAX_EVENTS - RESERVED_EVENTS, i, efdn;
	int *fds;
	long pins0, pins1;
	void *pages;

	if (!a || !b)
		die("malloc", ENOMEM);
	printf("\n# kernel memory (%s mode; slab bytes in use, deltas; largest caches)\n", mode);
	printf("%-34s %6s %10s\n", "# what", "count", "bytes each");
	json_section("memory");
	create_events(n);
	unregister_events(0);
	n_registered = 0;
	sleep(1);
	slab_read(a);
	register_events(n);
	slab_read(b);
	slab_delta("registered_event", a, b, n_registered);

	/* Pending fences with an eventfd (no sync_file at all). */
	efdn = eventfd(0, EFD_CLOEXEC);
	slab_read(a);
	for (i = 0; i < n_registered; i++)
		if (kfdsync_event_export_eventfd(ctx, events[i]->EventId, age_of(events[i]),
						 3600LL * 1000000000, efdn))
			break;
	slab_read(b);
	slab_delta("pending_fence_eventfd", a, b, i);
	/* Pending fences as sync_files (fence, sync_file, struct file). */
	fds = calloc(n_registered, sizeof(int));
	slab_read(a);
	for (i = 0; i < n_registered; i++) {
		fds[i] = kfdsync_event_export_sync_file(ctx, events[i]->EventId, age_of(events[i]),
							3600LL * 1000000000);
		if (fds[i] < 0)
			break;
	}
	slab_read(b);
	slab_delta("pending_fence_sync_file", a, b, i);
	/* The same sync_file count from a timeline: what a sync_file alone costs. */
	{
		int *tfd = calloc(i, sizeof(int)), k, m = i;
		struct kfdsync_timeline *t2;

		if (tfd && !kfdsync_timeline_new(&t2)) {
			slab_read(a);
			for (k = 0; k < m && k < 1000; k++)
				tfd[k] = kfdsync_timeline_create_fence(t2, k + 1, "bench");
			slab_read(b);
			slab_delta("timeline_fence_sync_file", a, b, k);
			for (int j = 0; j < k; j++)
				close(tfd[j]);
			kfdsync_timeline_free(t2);
		}
		free(tfd);
	}
	/* End them: unregistering cancels the fences. */
	for (int j = 0; j < i; j++)
		close(fds[j]);
	free(fds);
	unregister_events(1);
	close(efdn);

	/* Pinned pages per import: one import per page of fresh anonymous memory. */
	n = quick ? 16 : 256;
	pages = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	fds = calloc(n, sizeof(int));
	if (pages != MAP_FAILED && fds) {
		memset(pages, 0, (size_t)n * 4096);
		pins0 = vmstat("nr_foll_pin_acquired") - vmstat("nr_foll_pin_released");
		for (i = 0; i < n; i++) {
			fds[i] = kfdsync_timeline_create_fence(tl, tl_value + 1 + i, "bench");
			if (fds[i] < 0 ||
			    kfdsync_import_to_memory(ctx, fds[i], (uint64_t *)((char *)pages + 4096 * i), 1, 2))
				break;
		}
		pins1 = vmstat("nr_foll_pin_acquired") - vmstat("nr_foll_pin_released");
		/*
		 * Pins are charged to the user's locked_vm (as io_uring's
		 * buffers), not to the process's VmLck, and not at all with
		 * CAP_IPC_LOCK (the benchmark runs as root): /proc/vmstat's pin
		 * counters are what shows them.
		 */
		printf("%-34s %6d %10.2f   (pages; /proc/vmstat nr_foll_pin_*)\n",
		       "pinned_pages_per_import", i, i ? (double)(pins1 - pins0) / i : 0);
		json_entry("\"name\": \"pinned_pages_per_import\", \"mode\": \"%s\", \"count\": %d, "
			   "\"pages_per\": %.2f", mode, i, i ? (double)(pins1 - pins0) / i : 0);
		kfdsync_timeline_inc(tl, (uint32_t)n);
		tl_value += n;
		for (int j = 0; j < i; j++)
			close(fds[j]);
		munmap(pages, (size_t)n * 4096);
	}
	free(fds);
	free(a);
	free(b);
}

/* ---- CPU and idle wake-ups ---- */

static int64_t rusage_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static int64_t rusage_sys_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL;
}

/* Busy CPU time of the whole guest (all but idle and iowait), in ns. */
static int64_t system_busy_ns(void)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	long hz = sysconf(_SC_CLK_TCK);

	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) != 8)
		v[0] = 0;
	fclose(f);
	return (int64_t)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * (1000000000LL / hz);
}

static void cpu_row(const char *name, int64_t (*fn)(void), int n)
{
	int64_t p0 = rusage_ns(), s0 = rusage_sys_ns(), b0 = system_busy_ns(), t0 = kfdsim_now_ns();
	int i;

	for (i = 0; i < n; i++)
		fn();
	{
		double proc = (double)(rusage_ns() - p0) / n / 1e3;
		double sys = (double)(rusage_sys_ns() - s0) / n / 1e3;
		double busy = (double)(system_busy_ns() - b0) / n / 1e3;
		double wall = (double)(kfdsim_now_ns() - t0) / n / 1e3;

		printf("%-28s %6d %10.1f %10.1f %10.1f %10.1f\n", name, n, proc, sys, busy, wall);
		json_entry("\"name\": \"%s\", \"mode\": \"%s\", \"n\": %d, \"process_us\": %.2f, "
			   "\"process_sys_us\": %.2f, \"guest_busy_us\": %.2f, \"wall_us\": %.2f",
			   name, mode, n, proc, sys, busy, wall);
	}
}

static void bench_cpu(void)
{
	int n = quick ? 20 : iterations * 2;

	printf("\n# CPU per signal (%s mode, microseconds; process = getrusage(RUSAGE_SELF), "
	       "guest = /proc/stat busy time of every CPU)\n", mode);
	printf("%-28s %6s %10s %10s %10s %10s\n", "# what", "n", "process", "process sys", "guest",
	       "wall");
	json_section("cpu");
	cpu_row("floor:kfd_wait", floor_kfd, n);
	cpu_row("export_sync_file", path_export_sync_file, n);
	cpu_row("floor:kfd_wait", floor_kfd, n);
	cpu_row("export_sync_file", path_export_sync_file, n);
}

static void bench_idle(void)
{
	static struct proc_thread a[PROC_THREADS_MAX], b[PROC_THREADS_MAX];
	int na, nb, i, j, secs = quick ? 1 : 5;
	pid_t self = getpid();

	printf("\n# idle wake-ups per second of every thread but the main one (%s mode, %d s, "
	       "%d events registered)\n", mode, secs, n_registered);
	json_section("idle");
	sleep(1);
	na = proc_threads("", a, PROC_THREADS_MAX);
	sleep(secs);
	nb = proc_threads("", b, PROC_THREADS_MAX);
	for (i = 0; i < nb && i < PROC_THREADS_MAX; i++) {
		char path[64], comm[32] = "?";
		FILE *f;

		if (b[i].tid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", b[i].tid);
		f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		for (j = 0; j < na; j++)
			if (a[j].tid == b[i].tid)
				break;
		if (j == na)
			continue;
		printf("%-28s %6d %10.2f\n", comm, b[i].tid,
		       (double)(b[i].switches - a[j].switches) / secs);
		json_entry("\"thread\": \"%s\", \"mode\": \"%s\", \"wakeups_per_s\": %.2f", comm, mode,
			   (double)(b[i].switches - a[j].switches) / secs);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "sections", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const struct {
		const char *name;
		void (*run)(void);
	} sections[] = {
		{ "latency", bench_latency }, { "scaling", bench_scaling },
		{ "throughput", bench_throughput }, { "memory", bench_memory },
		{ "cpu", bench_cpu }, { "contexts", bench_contexts }, { "walks", bench_walks },
		{ "tracing", bench_tracing },
	};
	struct kfdsync_module_info info;
	struct kfdsync_event_state st;
	int c, ret;

	while ((c = getopt_long(argc, argv, "n:qj:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			iterations = atoi(optarg);
			break;
		case 'q':
			quick = true;
			break;
		case 'j':
			json = fopen(optarg, "w");
			if (!json)
				die(optarg, errno);
			break;
		case 's':
			only = optarg;
			break;
		default:
			fprintf(stderr, "usage: kfdsync_bench [-n ITERATIONS] [--quick] [--json FILE]"
				" [--sections LIST]\n"
				"  -n, --iterations N  samples per latency row (default 1000)\n"
				"  -q, --quick         smoke run: the small sizes only\n"
				"  -j, --json FILE     also write the figures as JSON\n"
				"  -s, --sections LIST only these sections, comma-separated: latency,\n"
				"                      scaling, throughput, memory, cpu, contexts,\n"
				"                      walks, tracing, idle; all by default\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (iterations < 1 || iterations > 1000000)
		die("iterations must be 1-1000000", EINVAL);
	/* A sanitizer's exit skips stdio's flush: never lose the table. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* 4095 pending sync_files and more: raise the fd limit (root may). */
	{
		struct rlimit rl;

		if (!getrlimit(RLIMIT_NOFILE, &rl)) {
			rl.rlim_cur = rl.rlim_max;
			if (rl.rlim_max < 65536) {
				struct rlimit big = { 65536, 65536 };

				if (!setrlimit(RLIMIT_NOFILE, &big))
					rl = big;
			}
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	unsetenv("HSA_OVERRIDE_GFX_VERSION");

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		die("hsaKmtOpenKFD (is amdgpu loaded?)", ENODEV);
	sim = kfdsim_open();
	if (sim < 0)
		die("kfdsim_open (is kfdsim.ko loaded? the bench runs in the test guest)", -sim);
	/* Room for the wait rows' bursts (512 RELEASE_MEMs of 8 dwords). */
	ret = kfdsim_queue_create(sim, 65536, &queue, NULL);
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
	floor_ev = new_event();
	import_ev = new_event();
	if (!floor_ev || !import_ev || register_events(1) != 1)
		die("events", ENOSPC);
	kfdsync_event_get_state(ctx, events[0]->EventId, &st);
	relay_mode = st.source == KFDSYNC_SOURCE_RELAY;
	mode = relay_mode ? "relay" : "hooks";
	eventfd_start();
	eventfd_export_fd = eventfd(0, EFD_CLOEXEC);
	import_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	hsa_value = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (eventfd_export_fd < 0 || import_word == MAP_FAILED || hsa_value == MAP_FAILED)
		die("setup", errno);
	hsa_ev = new_event();
	if (!hsa_ev)
		die("events", ENOSPC);
	hsa_sig = (struct kfdsync_hsa_signal){ .value = hsa_value,
		.mailbox = hsa_ev->EventData.HWData2, .event_id = hsa_ev->EventId };

	printf("# kfdsync_bench: kernel %s, %s mode (hooks %#x), %d iterations%s\n", info.release,
	       mode, info.hooks, iterations, quick ? ", quick" : "");
	if (json)
		fprintf(json, "{\n  \"kernel\": \"%s\", \"mode\": \"%s\", \"iterations\": %d, "
			"\"quick\": %s,", info.release, mode, iterations, quick ? "true" : "false");

	for (c = 0; c < (int)(sizeof(sections) / sizeof(sections[0])); c++)
		if (section(sections[c].name))
			sections[c].run();
	if (!section("idle"))
		goto out;
	register_events(quick ? 8 : 1024);
	/* Relay mode: start the import relay thread too (one import to an event). */
	if (relay_mode) {
		int fd = kfdsync_timeline_create_fence(tl, ++tl_value, "bench");

		if (fd >= 0 && !kfdsync_import_to_event(ctx, fd, import_ev->EventId)) {
			kfdsync_timeline_inc(tl, 1);
			hsaKmtWaitOnEvent(import_ev, 20000);
		}
		if (fd >= 0)
			close(fd);
	}
	bench_idle();

out:
	if (json) {
		fprintf(json, " ]\n}\n");
		fclose(json);
	}
	eventfd_stop();
	kfdsync_timeline_free(tl);
	kfdsync_ctx_free(ctx);
	kfdsim_queue_destroy(sim, queue);
	for (c = 0; c < n_events; c++)
		hsaKmtDestroyEvent(events[c]);
	hsaKmtDestroyEvent(floor_ev);
	hsaKmtDestroyEvent(import_ev);
	hsaKmtDestroyEvent(hsa_ev);
	hsaKmtCloseKFD();
	return 0;
}
