// SPDX-License-Identifier: MIT
/*
 * kfdsync_import: sync_files imported into memory values and KFD events
 * (KFDSYNC_IOCTL_IMPORT_SYNC_FILE, libkfdsync's kfdsync_import_*).
 *
 * The chain the import exists for: another device's fence (vgem's, on a
 * vgem buffer, exported with DMA_BUF_IOCTL_EXPORT_SYNC_FILE) is imported to
 * a memory word; a simulated GPU queue waits on that word (WAIT_REG_MEM) and
 * then signals a KFD event (RELEASE_MEM), which is exported as a sync_file.
 * Ordering is checked on the kernel's own records: each fence's signal
 * timestamp (SYNC_IOC_FILE_INFO) and the simulator's completion record,
 * never by sleeping. Errors travel the same chain: a fence that ends with an
 * error writes the error value and fails the downstream event first, so its
 * fence ends with that error, never with success.
 *
 * Import to a KFD event must wake an hsaKmtWaitOnEvent() waiter after, never
 * before, the fence: the waiter records CLOCK_MONOTONIC when it wakes and it
 * must not be earlier than the fence's signal timestamp. In relay mode
 * (kfdsync loaded with hooks=0, run through relay-mode) the kernel refuses
 * SET_EVENT with EOPNOTSUPP and the same checks go through the library's
 * relay thread.
 *
 * Memory targets: subtract, 32-bit stores, an eventfd, a fence already
 * ended. Bad inputs, limits, cancellation and leaks are
 * kfdsync_import_errors's. Tests register themselves
 * (tests/common/harness.h).
 */

#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "kfdsync_import.h"
#include "vgem.h"

static int sim = -1;
static int vgem = -1;
static uint32_t queue;
static struct kfdsync_ctx *ctx;

/* ---- helpers ---- */

static uint64_t ev_register(int fd, const HsaEvent *ev)
{
	struct kfdsync_event_register a = { .event_id = ev->EventId,
					    .slot_addr = slot_addr(ev) };

	if (ioctl(fd, KFDSYNC_IOCTL_EVENT_REGISTER, &a))
		tap_bail("EVENT_REGISTER %u: %s", ev->EventId, strerror(errno));
	return a.age;
}

static int export(int fd, uint32_t id, uint64_t age)
{
	struct kfdsync_export a = { .event_id = id, .age = age };

	if (ioctl(fd, KFDSYNC_IOCTL_EXPORT_SYNC_FILE, &a))
		tap_bail("EXPORT_SYNC_FILE %u: %s", id, strerror(errno));
	return a.fd;
}

/* A queue program: wait until *@word != 0, then signal @ev. */
static uint64_t submit_gated_signal(uint64_t *word, HsaEvent *ev)
{
	uint32_t dw[32];
	struct pm4_buf b = PM4_BUF_INIT(dw);

	pm4_wait_reg_mem(&b, (uintptr_t)word, PM4_WAIT_NE, 0, 0xffffffffu);
	pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
	return submit(sim, queue, &b);
}

/* Wait until the queue completed up to @end; false after WAIT_MS. */
static bool wait_completed(uint64_t end)
{
	int64_t limit = kfdsim_now_ns() + (int64_t)WAIT_MS * 1000000;

	while (queue_status(sim, queue).completed < end) {
		if (kfdsim_now_ns() > limit)
			return false;
		usleep(1000);
	}
	return true;
}

/*
 * In relay mode the application reports its events' signals: do it for
 * the one signal of @ev the test expects (a timed wait is safe here, the
 * signal is not racing the timeout).
 */
static void relay_one_signal(HsaEvent *ev)
{
	struct kfdsync_relay_signal a = { .event_id = ev->EventId };

	if (!relay_mode)
		return;
	if (hsaKmtWaitOnEvent(ev, WAIT_MS) != HSAKMT_STATUS_SUCCESS)
		tap_diag("relay: event %u did not fire", ev->EventId);
	else if (ioctl(kfdsync, KFDSYNC_IOCTL_RELAY_SIGNAL, &a))
		tap_diag("RELAY_SIGNAL %u: %s", ev->EventId, strerror(errno));
}

/* ---- other device -> memory -> simulated GPU -> sync_file ---- */

TEST(vgem_chain)
{
	static uint64_t word;
	HsaEvent *ev = new_event();
	struct vgem_buffer buf;
	struct sync_fence_info in, out;
	uint64_t age, end;
	int in_fd, out_fd, ret;

	if (!vgem_buffer_new(vgem, &buf, true))
		tap_bail("vgem buffer: %s", strerror(errno));
	in_fd = vgem_buffer_sync_file(&buf);
	if (in_fd < 0)
		tap_bail("DMA_BUF_IOCTL_EXPORT_SYNC_FILE: %s", strerror(errno));

	word = 0;
	age = ev_register(kfdsync, ev);
	{
		struct kfdsync_import a = { .fd = in_fd, .flags = KFDSYNC_IMPORT_MEMORY,
					    .addr = (uintptr_t)&word, .value = 1,
					    .error_value = 2 };

		ret = __import(kfdsync, &a);
	}
	tap_ok(ret == 0, "vgem_import_to_memory (%s)", strerror(-ret));

	end = submit_gated_signal(&word, ev);
	out_fd = export(kfdsync, ev->EventId, age);
	tap_ok(wait_until_executing(sim, queue, PM4_OP_WAIT_REG_MEM, WAIT_MS),
	       "queue_blocked_in_wait_reg_mem");
	tap_ok(!readable(out_fd, 100) && word == 0 && queue_status(sim, queue).completed < end,
	       "nothing_moves_before_the_vgem_fence");

	if (!vgem_fence_signal(vgem, buf.fence))
		tap_bail("VGEM_FENCE_SIGNAL: %s", strerror(errno));
	relay_one_signal(ev);
	tap_ok(readable(out_fd, WAIT_MS), "chain_completes_after_vgem_fence");
	in = fence_info(in_fd);
	out = fence_info(out_fd);
	tap_ok(word == 1 && out.status == 1 && queue_status(sim, queue).completed >= end,
	       "chain_value_written_queue_ran (word %" PRIu64 ", status %d)", word, out.status);
	tap_ok(in.status == 1 && out.timestamp_ns >= in.timestamp_ns,
	       "chain_in_order (vgem %" PRIu64 " <= compute %" PRIu64 ")",
	       (uint64_t)in.timestamp_ns, (uint64_t)out.timestamp_ns);
	close(in_fd);
	close(out_fd);
	vgem_buffer_free(vgem, &buf);
	ev_destroy(ev);
}

/* An error upstream is an error downstream, never a success. */
TEST(error_chain)
{
	static uint64_t word;
	struct kfdsync_timeline *tl = timeline_new();
	HsaEvent *ev = new_event();
	struct sync_fence_info out;
	uint64_t age, end;
	int in_fd, out_fd;
	struct kfdsync_import a;

	word = 0;
	age = ev_register(kfdsync, ev);
	in_fd = timeline_fence(tl, 1);
	a = (struct kfdsync_import){
		.fd = in_fd, .flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_FAIL_EVENT,
		.addr = (uintptr_t)&word, .value = 1, .error_value = 2,
		.fail_event_id = ev->EventId };
	tap_ok(__import(kfdsync, &a) == 0, "error_chain_import");
	end = submit_gated_signal(&word, ev);
	out_fd = export(kfdsync, ev->EventId, age);

	/* Freeing the timeline ends its pending fences with -ENOENT. */
	kfdsync_timeline_free(tl);
	tap_ok(readable(out_fd, WAIT_MS), "error_chain_completes");
	out = fence_info(out_fd);
	tap_ok(out.status == -ENOENT, "error_reaches_downstream_fence (status %d)", out.status);
	tap_ok(wait_word(&word, 2) && wait_completed(end),
	       "error_value_written_queue_released (word %" PRIu64 ")", word);
	{
		struct kfdsync_event_query q = { .event_id = ev->EventId };

		tap_ok(!ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_QUERY, &q) && q.error == -ENOENT,
		       "downstream_event_sticky_error (%d)", q.error);
	}
	close(in_fd);
	close(out_fd);
	ev_destroy(ev);
}

/* ---- import to a KFD event ---- */

struct waiter {
	HsaEvent *ev;
	pthread_t thread;
	volatile bool woke;
	int64_t woke_ns;
	HSAKMT_STATUS status;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->status = hsaKmtWaitOnEvent(w->ev, WAIT_MS);
	w->woke_ns = kfdsim_now_ns();
	w->woke = true;
	return NULL;
}

static void waiter_start(struct waiter *w, HsaEvent *ev)
{
	memset(w, 0, sizeof(*w));
	w->ev = ev;
	if (pthread_create(&w->thread, NULL, waiter_main, w))
		tap_bail("pthread_create failed");
}

TEST(event)
{
	struct kfdsync_timeline *tl = timeline_new();
	HsaEvent *ev = new_event();
	struct sync_fence_info fi;
	struct kfdsync_import a;
	struct waiter w;
	int fd, ret;

	fd = timeline_fence(tl, 1);
	a = (struct kfdsync_import){ .fd = fd, .flags = KFDSYNC_IMPORT_SET_EVENT,
				     .event_id = ev->EventId };
	ret = __import(kfdsync, &a);
	if (relay_mode)
		tap_ok(ret == -EOPNOTSUPP, "kernel_set_event_refused_in_relay_mode (%s)",
		       strerror(-ret));
	else
		tap_ok(ret == 0, "kernel_set_event_import (%s)", strerror(-ret));
	if (relay_mode) {
		ret = kfdsync_import_to_event(ctx, fd, ev->EventId);
		tap_ok(ret == 0, "library_relay_set_event_import (%s)", strerror(-ret));
	} else {
		tap_ok(true, "library_relay_not_needed_with_hooks");
	}
	{
		/* A child of fork() has no relay thread: freeing its copy must not wait. */
		int status = -1;
		pid_t pid = fork();

		if (pid == 0) {
			alarm(10);
			kfdsync_ctx_free(ctx);
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, &status, 0) != pid)
			status = -1;
		tap_ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		       "ctx_free_in_forked_child_returns (status %#x)", status);
	}

	waiter_start(&w, ev);
	usleep(200 * 1000);
	tap_ok(!w.woke, "waiter_sleeps_while_fence_pending");
	kfdsync_timeline_inc(tl, 1);
	pthread_join(w.thread, NULL);
	fi = fence_info(fd);
	tap_ok(w.status == HSAKMT_STATUS_SUCCESS, "waiter_woken_by_import (status %d)", w.status);
	tap_ok(fi.status == 1 && w.woke_ns >= (int64_t)fi.timestamp_ns,
	       "waiter_woke_after_fence (%" PRId64 " >= %" PRIu64 ")", w.woke_ns,
	       (uint64_t)fi.timestamp_ns);
	/* Set once: an auto-reset event is not set again. */
	tap_ok(hsaKmtWaitOnEvent(ev, 200) == HSAKMT_STATUS_WAIT_TIMEOUT, "event_set_once");
	close(fd);
	kfdsync_timeline_free(tl);
	ev_destroy(ev);
}

/*
 * sync_file -> KFD event -> (registered, exported) sync_file, all through
 * the library: in relay mode its two relays (the import's, setting the
 * event; the export's, reporting it) make the same chain work.
 */
TEST(event_to_export)
{
	struct kfdsync_timeline *tl = timeline_new();
	HsaEvent *ev = new_event();
	struct kfdsync_event_state st;
	int in_fd = timeline_fence(tl, 1);
	uint64_t age;
	int out_fd, ret;

	ret = kfdsync_event_add_hsa(ctx, ev, &age);
	if (ret)
		tap_bail("kfdsync_event_add_hsa: %s", strerror(-ret));
	ret = kfdsync_import_to_event(ctx, in_fd, ev->EventId);
	out_fd = kfdsync_event_export_sync_file(ctx, ev->EventId, age, 0);
	if (out_fd < 0)
		tap_bail("kfdsync_event_export_sync_file: %s", strerror(-out_fd));
	tap_ok(ret == 0 && !readable(out_fd, 100), "imported_set_counts_for_export (%s)",
	       strerror(-ret));
	kfdsync_timeline_inc(tl, 1);
	tap_ok(readable(out_fd, WAIT_MS) && fence_info(out_fd).status == 1 &&
	       !kfdsync_event_get_state(ctx, ev->EventId, &st) && st.age == age + 1,
	       "imported_set_signals_export");
	close(in_fd);
	close(out_fd);
	kfdsync_timeline_free(tl);
	kfdsync_event_remove(ctx, ev->EventId);
	hsaKmtDestroyEvent(ev);
}

/* ---- memory variants ---- */

TEST(memory_variants)
{
	static uint64_t word64;
	static uint32_t word32[2];
	struct kfdsync_timeline *tl = timeline_new();
	struct kfdsync_import_desc d;
	int fd = timeline_fence(tl, 1), efd, ret;
	uint64_t v;

	word64 = 10;
	memset(&d, 0, sizeof(d));
	d.flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_SUB;
	d.addr = &word64;
	d.value = 3;
	d.error_value = 100;
	tap_ok(kfdsync_import_sync_file(ctx, fd, &d) == 0, "sub64_import");

	word32[0] = 0xdead;
	word32[1] = 0xbeef;
	memset(&d, 0, sizeof(d));
	d.flags = KFDSYNC_IMPORT_MEMORY | KFDSYNC_IMPORT_MEMORY32;
	d.addr = &word32[1];
	d.value = 0xffffffffu;
	tap_ok(kfdsync_import_sync_file(ctx, fd, &d) == 0, "store32_import");

	efd = eventfd(0, EFD_CLOEXEC);
	{
		struct kfdsync_import a = { .fd = fd, .flags = KFDSYNC_IMPORT_EVENTFD,
					    .eventfd = efd };

		tap_ok(__import(kfdsync, &a) == 0, "eventfd_import");
	}
	tap_ok(!readable(efd, 100) && word64 == 10 && word32[1] == 0xbeef,
	       "nothing_before_the_fence");
	kfdsync_timeline_inc(tl, 1);
	tap_ok(readable(efd, WAIT_MS) && read(efd, &v, sizeof(v)) == sizeof(v) && v == 1,
	       "eventfd_signalled_once_done");
	tap_ok(wait_word(&word64, 7), "sub64_subtracted (%" PRIu64 ")", word64);
	tap_ok(word32[1] == 0xffffffffu && word32[0] == 0xdead,
	       "store32_writes_only_its_word (%#x %#x)", word32[0], word32[1]);
	close(fd);

	/* A fence that has already ended: acted on at once. */
	word64 = 0;
	fd = timeline_fence(tl, 1);
	ret = kfdsync_import_to_memory(ctx, fd, &word64, 42, 43);
	tap_ok(ret == 0 && wait_word(&word64, 42), "born_signalled_fence_written (%" PRIu64 ")",
	       word64);
	close(fd);
	close(efd);
	kfdsync_timeline_free(tl);
}

static void setup(void)
{
	import_setup();
	sim = kfdsim_open();
	if (sim < 0)
		tap_bail("kfdsim_open: %s", strerror(-sim));
	queue = queue_create(sim);
	vgem = drm_open_driver("vgem", false);
	if (vgem < 0)
		tap_bail("no vgem device");
	if (kfdsync_ctx_new(&ctx))
		tap_bail("kfdsync_ctx_new failed");
}

static void teardown(void)
{
	kfdsync_ctx_free(ctx);
	close(vgem);
	kfdsim_queue_destroy(sim, queue);
	close(sim);
	import_teardown();
}

int main(int argc, char **argv)
{
	return import_main(argc, argv, setup, teardown);
}
