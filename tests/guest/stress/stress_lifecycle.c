// SPDX-License-Identifier: MIT
/*
 * stress_lifecycle: faults around kfdsync's fences, each while fences are
 * pending and held by other processes.
 *
 * How this program works. The parent never opens /dev/kfd; every producer
 * is a forked child (its own amdkfd process, GPU simulator queue and kfdsync
 * context) that hands pending fences to the parent over a UNIX socket
 * (SCM_RIGHTS). Then:
 *
 * - owners exit (normally and by SIGKILL) while the parent holds their
 *   fences: every fence ends with -ECANCELED or -EIO, none signals;
 * - `rmmod kfdsync` is refused while a context, a fence or a timeline
 *   lives anywhere, succeeds once all are closed, and the module loads
 *   again with its parameters (one changed, then put back);
 * - simulator faults mid-stream: a queue signals, hangs (KFDSIM_CMD_HANG
 *   in the stream, KFDSIM_INJECT_HANG from outside) and the fences behind
 *   the hang end by their watchdog (-ETIMEDOUT), those before it signalled;
 *   a hardware exception (KFDSIM_INJECT_HW_EXCEPTION) ends them with -EIO;
 * - a watchdog storm: thousands of fences with one short deadline on
 *   events and CPU timelines all end with -ETIMEDOUT, in seqno order on
 *   each timeline, while a thread that sleeps 1 ms measures how late it
 *   wakes (printed: a figure, not an assertion);
 * - amdgpu is unloaded while a process that left /dev/kfd holds a context
 *   and a fence (-EIO), and loaded again (the hooks come back).
 *
 * At the end every counter is back to zero.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "stress.h"

static struct stress_opts opts;
static uint64_t faults;

/* Wait until @fd ended (at most @ms): its status, or 0 if still pending. */
static int end_status(int fd, int ms)
{
	raw_wait(fd, ms);
	return raw_fence_status(fd);
}

/* As end_status(), all calls sharing one absolute limit @until. */
static int end_status_by(int fd, int64_t until)
{
	int64_t left = (until - now_ns()) / MS_NS;

	return end_status(fd, left > 0 ? (int)left : 0);
}

/* ---- a producer child ---- */

enum { PROD_PLAIN, PROD_HANG_STREAM, PROD_HANG_INJECT, PROD_HW_EXCEPTION, PROD_OFF_KFD };

struct prod_msg {
	int32_t n_before, n_after;	/* fences before / after the fault */
};

#define PROD_FENCES	8

/*
 * Opens everything, registers an event, exports fences and sends them.
 * PROD_PLAIN: @n pending fences, then waits for a byte and exits (or is
 * killed). The fault modes signal a few packets first, then fault.
 */
static void producer_main(int sock, int mode)
{
	int sim, ctx, fences[PROD_FENCES], n = 0, i;
	uint32_t q, dw[64];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct prod_msg m = { 0 };
	HsaEvent *ev;
	uint64_t end, age;
	char c;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(10);
	sim = kfdsim_open();
	ctx = raw_open(RAW_KFDSYNC_DEV);
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (sim < 0 || ctx < 0 || !ev || kfdsim_queue_create(sim, 0, &q, NULL) ||
	    raw_register(ctx, ev->EventId, slot_addr(ev)))
		_exit(11);
	if (mode != PROD_PLAIN && mode != PROD_OFF_KFD) {
		/* Two packets signal (their fences must signal), then the fault. */
		age = raw_age(ctx, ev->EventId);
		pm4_sim_delay(&b, 20000);
		pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
		if (kfdsim_submit_buf(sim, q, &b, &end))
			_exit(12);
		fences[n++] = raw_export(ctx, ev->EventId, age, 0);
		if (kfdsim_queue_wait(sim, q, end, WAIT_MS))
			_exit(13);
		usleep(20000);
		m.n_before = n;
		pm4_reset(&b);
		if (mode == PROD_HANG_STREAM)
			pm4_sim_hang(&b);
		else
			pm4_sim_delay(&b, 30000000);	/* long work, faulted below */
		pm4_release_mem_event(&b, slot_addr(ev), ev->EventId);
		age = raw_age(ctx, ev->EventId);
		if (kfdsim_submit_buf(sim, q, &b, &end))
			_exit(14);
	} else {
		age = raw_age(ctx, ev->EventId);
	}
	/* Pending fences for what comes next (the fault or the exit). */
	while (n < PROD_FENCES) {
		/* Short for the faults (the watchdog ends them), long otherwise. */
		fences[n] = raw_export(ctx, ev->EventId, age, (uint64_t)(now_ns() +
				       (mode == PROD_PLAIN || mode == PROD_OFF_KFD ? 40000 : 1500) *
				       MS_NS));
		if (fences[n] < 0)
			_exit(15);
		n++;
	}
	m.n_after = n - m.n_before;
	if (scm_send(sock, &m, sizeof(m), fences, 4, 0) ||
	    scm_send(sock, &m, sizeof(m), fences + 4, 4, 0))
		_exit(16);
	if (mode == PROD_HANG_INJECT)
		kfdsim_inject(sim, q, KFDSIM_INJECT_HANG);
	else if (mode == PROD_HW_EXCEPTION)
		kfdsim_inject(sim, q, KFDSIM_INJECT_HW_EXCEPTION);
	for (i = 0; i < n; i++)
		close(fences[i]);
	if (mode == PROD_OFF_KFD) {
		/* Off /dev/kfd (amdgpu may go); the context stays. */
		kfdsim_queue_destroy(sim, q);
		close(sim);
		munmap((void *)(uintptr_t)(slot_addr(ev) - (uint64_t)ev->EventId * 8), 4096 * 8);
		hsaKmtCloseKFD();
	}
	if (read(sock, &c, 1) < 0)
		_exit(17);
	_exit(0);
}

struct producer {
	pid_t pid;
	int sock;
	int fences[PROD_FENCES];
	struct prod_msg m;
};

static bool producer_start(struct producer *p, int mode)
{
	int sv[2], fds[STRESS_MAX_FDS], i;
	unsigned int n1 = 0, n2 = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	p->pid = fork_or_bail();
	if (!p->pid) {
		close(sv[0]);
		producer_main(sv[1], mode);
	}
	close(sv[1]);
	p->sock = sv[0];
	if (scm_recv(p->sock, &p->m, sizeof(p->m), fds, STRESS_MAX_FDS, &n1, 0) !=
	    sizeof(p->m) || n1 != 4)
		goto fail;
	for (i = 0; i < 4; i++)
		p->fences[i] = fds[i];
	if (scm_recv(p->sock, &p->m, sizeof(p->m), fds, STRESS_MAX_FDS, &n2, 0) !=
	    sizeof(p->m) || n2 != 4)
		goto fail;
	for (i = 0; i < 4; i++)
		p->fences[4 + i] = fds[i];
	return true;
fail:
	tap_diag("producer (mode %d) failed: status %d", mode, reap(p->pid));
	return false;
}

static int producer_stop(struct producer *p)
{
	int i, code;

	if (write(p->sock, "x", 1) < 0) {
		/* it is gone already */
	}
	code = reap(p->pid);
	close(p->sock);
	for (i = 0; i < PROD_FENCES; i++)
		close(p->fences[i]);
	return code;
}

/* ---- owners exit while others hold their fences ---- */

static void test_owner_exit(bool kill_it)
{
	struct producer p;
	int i, bad = 0, st;

	if (!producer_start(&p, PROD_PLAIN)) {
		tap_ok(false, "owner_%s_fences_end", kill_it ? "killed" : "exits");
		return;
	}
	if (kill_it)
		kill(p.pid, SIGKILL);
	else if (write(p.sock, "x", 1) != 1)
		bad++;
	reap(p.pid);
	p.pid = -1;
	faults++;
	for (i = 0; i < PROD_FENCES; i++) {
		st = end_status(p.fences[i], WAIT_MS);
		if (st != -ECANCELED && st != -EIO) {
			tap_diag("fence %d of an owner that %s: status %d", i,
				 kill_it ? "was killed" : "exited", st);
			bad++;
		}
		close(p.fences[i]);
	}
	close(p.sock);
	tap_ok(!bad, "owner_%s_fences_end_canceled", kill_it ? "killed" : "exits");
}

/* ---- rmmod under load ---- */

static char saved_params[512];

static void save_params(void)
{
	static const char *const names[] = {
		"watchdog_ms", "watchdog_max_ms", "max_fences", "max_events", "max_user_fences",
		"max_user_contexts", "max_user_timelines", "max_user_events", "max_imports",
		"max_user_imports", "max_timeline_fences",
	};
	char buf[32];
	size_t len = 0, i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!kfdsync_param_read(names[i], buf, sizeof(buf)))
			len += snprintf(saved_params + len, sizeof(saved_params) - len, "%s%s=%s",
					len ? " " : "", names[i], buf);
}

static bool refused(void)
{
	int ret = kmod_unload("kfdsync", 1);

	if (!ret) {
		/* Unloaded under load: put it back so the rest can run. */
		kmod_load_project("kmod/kfdsync.ko", saved_params);
		return false;
	}
	return ret == -EAGAIN || ret == -EWOULDBLOCK || ret == -EBUSY;
}

static void test_rmmod(void)
{
	struct producer p;
	int tl, tlf, code;
	char buf[32] = "";

	if (!getenv("KFDSYNC_KMOD_DIR")) {
		tap_skip("needs the guest's module directory", "rmmod_under_load");
		return;
	}
	save_params();
	if (!producer_start(&p, PROD_PLAIN))
		tap_bail("producer failed");
	tap_ok(refused(), "rmmod_refused_with_owner_and_fences");
	faults++;
	code = producer_stop(&p);	/* closes our copies too */
	tap_ok(code == 0, "producer_exits (%d)", code);

	tl = raw_open(KFDSYNC_TL_DEVICE);
	tlf = raw_tl_fence(tl, 3);
	close(tl);			/* the fence ended, but lives */
	tap_ok(tlf >= 0 && refused(), "rmmod_refused_with_one_ended_fence");
	close(tlf);
	code = kmod_unload("kfdsync", 100);
	tap_ok(!code, "rmmod_succeeds_once_all_closed (%s)", code ? strerror(-code) : "ok");
	faults++;
	if (!code) {
		char params[600];

		snprintf(params, sizeof(params), "%s watchdog_ms=4321", saved_params);
		code = kmod_load_project("kmod/kfdsync.ko", params);
		kfdsync_param_read("watchdog_ms", buf, sizeof(buf));
		tap_ok(!code && !strcmp(buf, "4321"), "reload_with_parameters (%s, watchdog_ms %s)",
		       code ? strerror(-code) : "ok", buf);
		code = kmod_unload("kfdsync", 100);
		if (!code)
			code = kmod_load_project("kmod/kfdsync.ko", saved_params);
		tap_ok(!code, "reload_with_saved_parameters (%s)", code ? strerror(-code) : "ok");
	} else {
		tap_skip("not unloaded", "reload_with_parameters");
		tap_skip("not unloaded", "reload_with_saved_parameters");
	}
}

/* ---- simulator faults mid-stream ---- */

static void test_sim_fault(int mode, const char *name, int want)
{
	struct producer p;
	int i, before_ok = 0, after_ok = 0, st;

	if (!producer_start(&p, mode)) {
		tap_ok(false, "%s", name);
		return;
	}
	faults++;
	for (i = 0; i < p.m.n_before; i++)
		before_ok += end_status(p.fences[i], WAIT_MS) == 1;
	for (; i < PROD_FENCES; i++) {
		st = end_status(p.fences[i], WAIT_MS);
		if (st == want)
			after_ok++;
		else
			tap_diag("%s: fence %d ended with %d", name, i, st);
	}
	tap_ok(before_ok == p.m.n_before && after_ok == p.m.n_after,
	       "%s (%d of %d before signalled, %d of %d after ended %d)", name, before_ok,
	       p.m.n_before, after_ok, p.m.n_after, want);
	producer_stop(&p);
}

/* ---- the watchdog storm ---- */

struct sleeper {
	_Atomic int stop;
	int64_t max_late_ns;
	uint64_t loops;
};

static void *sleeper_run(void *arg)
{
	struct sleeper *s = arg;

	while (!atomic_load(&s->stop)) {
		int64_t t0 = now_ns(), late;

		sleep_ns(MS_NS);
		late = now_ns() - t0 - MS_NS;
		if (late > s->max_late_ns)
			s->max_late_ns = late;
		s->loops++;
	}
	return NULL;
}

#define STORM_TL	4
#define STORM_TL_FENCES	1000
#define STORM_CTX	2
#define STORM_EV_FENCES	1000

static void storm_child(int sock)
{
	static int fds[STORM_CTX * STORM_EV_FENCES];
	int ctx[STORM_CTX], k, i, n = 0, bad = 0;
	int64_t deadline;
	HsaEvent *ev[STORM_CTX];
	struct sync_fence_info fi;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(40);
	deadline = now_ns() + 3 * S_NS;
	for (k = 0; k < STORM_CTX; k++) {
		ctx[k] = raw_open(RAW_KFDSYNC_DEV);
		ev[k] = create_event(HSA_EVENTTYPE_SIGNAL, false);
		if (ctx[k] < 0 || !ev[k] || raw_register(ctx[k], ev[k]->EventId, slot_addr(ev[k])))
			_exit(41);
		for (i = 0; i < STORM_EV_FENCES; i++) {
			fds[n] = raw_export(ctx[k], ev[k]->EventId, 0, (uint64_t)deadline);
			if (fds[n] < 0)
				_exit(42);
			n++;
		}
	}
	if (write(sock, "r", 1) != 1)
		_exit(43);
	for (i = 0; i < n; i++) {
		if (end_status_by(fds[i], deadline + 30 * S_NS) != -ETIMEDOUT ||
		    fence_infos(fds[i], &fi, 1, NULL) != 1 || (int64_t)fi.timestamp_ns < deadline)
			bad++;
		close(fds[i]);
	}
	if (write(sock, &bad, sizeof(bad)) != sizeof(bad))
		_exit(44);
	_exit(0);
}

static void test_watchdog_storm(void)
{
	static int tlf[STORM_TL][STORM_TL_FENCES];
	struct sleeper s = { 0 };
	char saved[32] = "10000", c;
	int tl[STORM_TL], t, i, bad = 0, order = 0, ev_bad = -1, sv[2];
	int64_t deadline, t0, last_end = 0, prev;
	struct sync_fence_info fi;
	pthread_t th;
	pid_t pid;

	/* Event fences in a child (its own amdkfd process), timelines here. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		tap_bail("socketpair: %s", strerror(errno));
	pid = fork_or_bail();
	if (!pid)
		storm_child(sv[1]);
	{
		struct pollfd pf = { .fd = sv[0], .events = POLLIN };
		char path[64], buf[2048];

		if (poll(&pf, 1, 60000) != 1 || read(sv[0], &c, 1) != 1) {
			/* Where it is stuck, for the report. */
			snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
			if (!read_text(path, buf, sizeof(buf)))
				tap_diag("storm child's kernel stack:\n%s", buf);
			kill(pid, SIGKILL);
			tap_ok(false, "storm_child_exports_event_fences (status %d)", reap(pid));
			close(sv[0]);
			close(sv[1]);
			return;
		}
	}

	kfdsync_param_read("watchdog_ms", saved, sizeof(saved));
	kfdsync_param_write("watchdog_ms", "2500");
	for (t = 0; t < STORM_TL; t++) {
		tl[t] = raw_open(KFDSYNC_TL_DEVICE);
		if (tl[t] < 0)
			tap_bail("timeline: %s", strerror(-tl[t]));
	}
	kfdsync_param_write("watchdog_ms", saved);
	t0 = now_ns();
	/* Every timeline fence gets its watchdog at creation: within ~a second. */
	for (t = 0; t < STORM_TL; t++)
		for (i = 0; i < STORM_TL_FENCES; i++) {
			tlf[t][i] = raw_tl_fence(tl[t], (uint32_t)i + 1);
			if (tlf[t][i] < 0)
				tap_bail("timeline fence: %s", strerror(-tlf[t][i]));
		}
	deadline = t0 + 2500 * MS_NS;
	pthread_create(&th, NULL, sleeper_run, &s);
	for (t = 0; t < STORM_TL; t++) {
		prev = 0;
		for (i = 0; i < STORM_TL_FENCES; i++) {
			if (end_status_by(tlf[t][i], deadline + 30 * S_NS) != -ETIMEDOUT ||
			    fence_infos(tlf[t][i], &fi, 1, NULL) != 1 ||
			    (int64_t)fi.timestamp_ns < deadline)
				bad++;
			else if ((int64_t)fi.timestamp_ns < prev)
				order++;
			prev = (int64_t)fi.timestamp_ns;
			if (prev > last_end)
				last_end = prev;
		}
	}
	if (read(sv[0], &ev_bad, sizeof(ev_bad)) != sizeof(ev_bad))
		ev_bad = -1;
	atomic_store(&s.stop, 1);
	pthread_join(th, NULL);
	faults += STORM_TL * STORM_TL_FENCES + STORM_CTX * STORM_EV_FENCES;
	tap_ok(!bad, "storm_timeline_fences_all_etimedout (%d of %d wrong)", bad,
	       STORM_TL * STORM_TL_FENCES);
	tap_ok(!order, "storm_timeline_fences_end_in_order (%d out of order)", order);
	tap_ok(ev_bad == 0, "storm_event_fences_all_etimedout (%d of %d wrong)", ev_bad,
	       STORM_CTX * STORM_EV_FENCES);
	tap_ok(reap(pid) == 0, "storm_child_exits");
	tap_diag("watchdog storm: %d timeline + %d event fences expired; last ended %.1f ms "
		 "after the first deadline; a 1 ms sleeper overslept by at most %.3f ms (%"
		 PRIu64 " sleeps) (a figure, not an assertion)", STORM_TL * STORM_TL_FENCES,
		 STORM_CTX * STORM_EV_FENCES, (double)(last_end - deadline) / MS_NS,
		 (double)s.max_late_ns / MS_NS, s.loops);
	for (t = 0; t < STORM_TL; t++) {
		for (i = 0; i < STORM_TL_FENCES; i++)
			close(tlf[t][i]);
		close(tl[t]);
	}
	close(sv[0]);
	close(sv[1]);
}

/* ---- amdgpu goes away under load ---- */

static void test_amdgpu_cycle(void)
{
	struct producer p;
	struct kfdsync_info info;
	int ctx, ret, st = 0, code, i, eio = 0;

	if (!getenv("KFDSYNC_KMOD_DIR")) {
		tap_skip("needs the guest", "amdgpu_unload_under_load");
		return;
	}
	if (!producer_start(&p, PROD_OFF_KFD))
		tap_bail("off-kfd producer failed");
	ret = kmod_unload("amdgpu", 100);
	tap_ok(!ret, "amdgpu_unloads_with_contexts_and_fences (%s)", ret ? strerror(-ret) : "ok");
	faults++;
	for (i = 0; i < PROD_FENCES && !ret; i++) {
		st = end_status(p.fences[i], WAIT_MS);
		eio += st == -EIO;
	}
	tap_ok(eio == PROD_FENCES, "amdgpu_gone_fences_eio (%d of %d, last %d)", eio,
	       PROD_FENCES, st);
	code = system("modprobe amdgpu");
	ctx = raw_open(RAW_KFDSYNC_DEV);
	ret = ctx >= 0 ? raw_info(ctx, &info) : ctx;
	tap_ok(!code && !ret && info.hooks == info.hooks_supported && info.hooks,
	       "amdgpu_back_hooks_attached (%#x)", ret ? 0 : info.hooks);
	if (ctx >= 0)
		close(ctx);
	code = producer_stop(&p);
	tap_ok(code == 0, "off_kfd_producer_exits (%d)", code);
}

int main(int argc, char **argv)
{
	scrub_hsa_env();
	stress_parse(argc, argv, "stress_lifecycle", 0, 0, &opts);
	require_sim_guest();
	require_sim_interrupts();	/* its GPU work is the simulator's */
	stress_require_root();
	{
		/* The storm holds thousands of sync_file fds. */
		struct rlimit nofile = { 65536, 65536 };

		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	stress_check_zero("counters_zero_before", 0, 0, 2000);
	/* The hardware exception last: the rest does not run after it. */
	test_watchdog_storm();
	test_rmmod();
	test_amdgpu_cycle();
	for (unsigned long r = 0; r < (opts.iterations ? opts.iterations : 1); r++) {
		test_owner_exit(false);
		test_owner_exit(true);
		test_sim_fault(PROD_HANG_STREAM, "sim_hang_in_stream_watchdog", -ETIMEDOUT);
		test_sim_fault(PROD_HANG_INJECT, "sim_hang_injected_watchdog", -ETIMEDOUT);
	}
	test_sim_fault(PROD_HW_EXCEPTION, "sim_hw_exception_eio", -EIO);
	tap_diag("faults: %" PRIu64 " (owner exits, module unloads, simulator faults, expiries)",
		 faults);
	stress_check_zero("counters_zero_after", 0, 0, 15000);
	printf("1..%u\n", tap_count);
	return tap_exit();
}
