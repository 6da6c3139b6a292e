// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_workers: what kfdsync's workers and walks must never do
 * (issue 35), each seen from outside.
 *
 * How this program works (see kfdsync_hardening.h): a kprobe event on a
 * kernel function, recorded with its callers' stack in a tracefs instance
 * of the test's own (kfdsync_kprobe.h), says who called it:
 * - the import worker (the rescuer of a WQ_MEM_RECLAIM queue) never unpins
 *   a written page itself: unpin_user_pages_dirty_lock() takes the folio's
 *   lock, so it must not run under kfdsync_import_work();
 * - one MMU notifier per address space: 1,024 opens and closes of contexts
 *   of a process that holds one register none (__mmu_notifier_register()
 *   calls of this process), and a process exiting with 1,024 contexts is
 *   timed;
 * - the import worker never runs exit_mmap(): an owner exits while the
 *   worker sets its event (holding its address space), so the worker's
 *   reference is the last; exit_mmap() must then run in mmput_async()'s
 *   work, never under kfdsync_import_work();
 * - the fences a trace shows ending each signalled, unless the trace says
 *   they were dropped (kfdsync_fence_end dropped=1): timeline fences are
 *   closed while another thread signals them, many times;
 * - a GPU reset (injected through <debugfs>/kfdsync/inject: no GPU
 *   here) of 64 processes with 4,079 registered events and a pending fence
 *   each: the longest hold of kfdsync_procs_lock and the time in the hook
 *   (<debugfs>/kfdsync/slots) stay within a bound;
 * - last, a hardware exception (the GPU simulator's) of one process with
 *   4,079 events registered in 4 contexts and a pending fence each: the
 *   hook only queues the process (its time in the hook stays within a
 *   bound), and every fence ends with -EIO after the exception, none
 *   before it and none lost.
 * Tests register themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "kfdsync_hardening.h"
#include "kfdsync_kprobe.h"

#define DEBUGFS			"/sys/kernel/debug/kfdsync/"

/* ---- the import worker never unpins a written page ---- */

#define N_IMPORTS	64

static void imports_end(void *arg)
{
	static uint64_t words[N_IMPORTS];
	int *ret = arg, ctx, tl, fence, i, k;

	ctx = raw_open(RAW_KFDSYNC_DEV);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	fence = tl >= 0 ? raw_tl_fence(tl, 1) : tl;
	if (ctx < 0 || fence < 0) {
		*ret = ctx < 0 ? ctx : fence;
		return;
	}
	memset(words, 0, sizeof(words));
	for (i = 0; i < N_IMPORTS && !*ret; i++)
		*ret = raw_import_memory(ctx, fence, &words[i], 1, 2);
	raw_tl_inc(tl, 1);
	for (k = 0; k < 2000; k++) {
		for (i = 0; i < N_IMPORTS && __atomic_load_n(&words[i], __ATOMIC_ACQUIRE) == 1;
		     i++)
			;
		if (i == N_IMPORTS)
			break;
		usleep(1000);
	}
	if (!*ret && i < N_IMPORTS)
		*ret = -ETIMEDOUT;
	/* Closing waits for the context's imports, their pins released. */
	close(fence);
	close(tl);
	close(ctx);
}

TEST(import_worker_never_unpins_written_pages)
{
	struct probe_result r;
	int ret = 0;

	if (probe_calls("unpin_user_pages_dirty_lock", NULL, "kfdsync_import_work", NULL,
			imports_end, &ret, &r)) {
		tap_skip("no kprobe events or tracefs instances", "import_unpins_seen");
		tap_skip("no kprobe events or tracefs instances",
			 "import_worker_never_unpins_written_pages");
		return;
	}
	tap_ret(ret, 0, "imports_written");
	tap_ok(r.calls >= N_IMPORTS, "import_unpins_seen (%d of %d)", r.calls, N_IMPORTS);
	if (r.from)
		tap_diag("first: %s", r.first);
	tap_ok(r.from == 0,
	       "import_worker_never_unpins_written_pages (%d of %d unpins on its stack)",
	       r.from, r.calls);
}

/* ---- one MMU notifier per address space ---- */

#define N_CYCLES	1024

static void open_close_cycles(void *arg)
{
	int *ret = arg, i, fd;

	for (i = 0; i < N_CYCLES; i++) {
		fd = raw_open(RAW_KFDSYNC_DEV);
		if (fd < 0) {
			*ret = fd;
			return;
		}
		close(fd);
	}
}

/*
 * A child with N_CYCLES contexts open exits: how long until it is reaped.
 * (max_user_contexts is raised meanwhile: this process holds one too.)
 */
static int64_t exit_with_contexts(int *opened)
{
	int *shared = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char saved[32], c;
	int go[2], i;
	int64_t t0;
	pid_t pid;

	if (shared == MAP_FAILED || pipe(go))
		tap_bail("setup: %s", strerror(errno));
	shared[0] = shared[1] = 0;
	kfdsync_param_read("max_user_contexts", saved, sizeof(saved));
	saved[strcspn(saved, "\n")] = '\0';
	kfdsync_param_write("max_user_contexts", "4096");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		struct rlimit rl = { 4 * N_CYCLES, 4 * N_CYCLES };

		close(go[1]);
		setrlimit(RLIMIT_NOFILE, &rl);
		for (i = 0; i < N_CYCLES && raw_open(RAW_KFDSYNC_DEV) >= 0; i++)
			shared[0] = i + 1;
		__atomic_store_n(&shared[1], 1, __ATOMIC_RELEASE);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	while (!__atomic_load_n(&shared[1], __ATOMIC_ACQUIRE) &&
	       waitpid(pid, NULL, WNOHANG) == 0)
		usleep(10000);
	*opened = shared[0];
	t0 = raw_now_ns();
	close(go[1]);
	reap(pid);
	t0 = raw_now_ns() - t0;
	kfdsync_param_write("max_user_contexts", saved);
	munmap(shared, 2 * sizeof(int));
	return t0;
}

TEST(one_mmu_notifier_per_address_space)
{
	struct probe_result r;
	char filter[64];
	int ret = 0, opened = 0;
	int64_t exit_ns;

	/* This process holds a context (kfdsync) all along. */
	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	if (probe_calls("__mmu_notifier_register", filter, NULL, NULL, open_close_cycles,
			&ret, &r)) {
		tap_skip("no kprobe events or tracefs instances",
			 "open_close_registers_no_notifier");
	} else {
		tap_ret(ret, 0, "open_close_1024_contexts");
		tap_ok(r.calls == 0,
		       "open_close_registers_no_notifier (%d registrations in %d opens)",
		       r.calls, N_CYCLES);
	}
	/*
	 * An SRCU grace period per context (about 1 ms and more here) made
	 * this seconds; one notifier makes it one.
	 */
	exit_ns = exit_with_contexts(&opened);
	tap_diag("a process with %d contexts exited in %.1f ms", opened, exit_ns / 1e6);
	tap_ok(opened == N_CYCLES && exit_ns < 1000 * MS,
	       "exit_with_1024_contexts_under_1_s (%d, %.1f ms)", opened, exit_ns / 1e6);
}

/* The longest holds of <debugfs>/kfdsync/slots: table, process, hook (ns). */
static bool slots_held(long long held[3])
{
	return kfdsync_slots(held) >= 0 && held[0] >= 0;
}

/* ---- the import worker never runs exit_mmap() ---- */

#define RACE_CONTEXTS	4096
#define RACE_ROUNDS	10

/*
 * The owner: one event, registered in RACE_CONTEXTS contexts with a pending
 * fence each, and an import that sets it when @fence (the parent's) ends.
 * It exits the moment the first of its fences signals (spinning on it, so
 * as not to wait for a wake-up): while the import worker, which holds its
 * address space to set the event, is still in amdkfd's set_event(), whose
 * hook ends the other fences, in the order they were registered.
 */
static void exit_race_child(int fence, int ready)
{
	struct rlimit rl = { 2 * RACE_CONTEXTS + 256, 2 * RACE_CONTEXTS + 256 };
	static struct pollfd pfd[RACE_CONTEXTS];
	HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };
	struct kfdsync_import imp = { .fd = fence, .flags = KFDSYNC_IMPORT_SET_EVENT };
	HsaEvent *ev = NULL;
	int ctx0 = -1, ctx, i;
	char c;

	setrlimit(RLIMIT_NOFILE, &rl);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS ||
	    hsaKmtCreateEvent(&desc, true, false, &ev) != HSAKMT_STATUS_SUCCESS)
		_exit(1);
	for (i = 0; i < RACE_CONTEXTS; i++) {
		ctx = raw_open(RAW_KFDSYNC_DEV);
		if (ctx < 0)
			_exit(20);
		if (raw_register(ctx, ev->EventId, slot_addr(ev)))
			_exit(2);
		pfd[i].fd = raw_export(ctx, ev->EventId, 0, 0);
		pfd[i].events = POLLIN;
		if (pfd[i].fd < 0)
			_exit(3);
		if (ctx0 < 0)
			ctx0 = ctx;
	}
	imp.event_id = ev->EventId;
	if (raw_ioctl(ctx0, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &imp))
		_exit(4);
	c = 'r';
	if (write(ready, &c, 1) != 1)
		_exit(5);
	for (i = 0; i < 60 * 1000 * 100 && poll(pfd, 1, 0) == 0; i++)
		;
	_exit(0);
}

struct exit_race {
	int tl;
	pid_t child;
	int status;
};

static void exit_race_go(void *arg)
{
	struct exit_race *x = arg;

	raw_tl_inc(x->tl, 1);
	x->status = reap(x->child);
	/* mmput_async()'s work, if the import worker held the last reference. */
	usleep(300 * 1000);
}

TEST(import_worker_never_runs_exit_mmap)
{
	int rounds = 0, from_worker = 0, async = 0, calls = 0, k, ready[2], fence;
	long long held[3] = { -1, -1, -1 };
	struct exit_race x;
	struct probe_result r;
	char saved[32], c;

	write_text(DEBUGFS "slots", "0");
	kfdsync_param_read("max_user_contexts", saved, sizeof(saved));
	saved[strcspn(saved, "\n")] = '\0';
	kfdsync_param_write("max_user_contexts", "8192");
	for (k = 0; k < RACE_ROUNDS; k++) {
		x.tl = raw_open(KFDSYNC_TL_DEVICE);
		fence = x.tl >= 0 ? raw_tl_fence(x.tl, 1) : x.tl;
		if (fence < 0 || pipe(ready))
			tap_bail("setup: %s", strerror(errno));
		fflush(stdout);
		x.child = fork();
		if (x.child < 0)
			tap_bail("fork: %s", strerror(errno));
		if (!x.child) {
			close(ready[0]);
			exit_race_child(fence, ready[1]);
		}
		close(ready[1]);
		close(fence);
		if (read(ready[0], &c, 1) != 1) {
			tap_diag("round %d: the owner failed to set up (status %d)", k,
				 reap(x.child));
			close(ready[0]);
			close(x.tl);
			continue;
		}
		close(ready[0]);
		/*
		 * mmput_async()'s work tail-calls __mmput(): the stack shows
		 * a kworker (process_one_work), not mmput_async_fn.
		 */
		if (probe_calls("exit_mmap", NULL, "kfdsync_import_work", "process_one_work",
				exit_race_go, &x, &r)) {
			kill(x.child, SIGKILL);
			reap(x.child);
			close(x.tl);
			break;
		}
		close(x.tl);
		rounds++;
		calls += r.calls;
		from_worker += r.from;
		async += r.also;
		if (r.from)
			tap_diag("round %d: %s", k, r.first);
	}
	kfdsync_param_write("max_user_contexts", saved);
	if (slots_held(held))
		tap_diag("the longest time a hook spent ending fences: %.1f us", held[2] / 1e3);
	if (!rounds) {
		tap_skip("no kprobe events or tracefs instances",
			 "import_worker_never_runs_exit_mmap");
		return;
	}
	tap_diag("%d rounds: %d exit_mmap() calls, %d in a kworker (the import worker held the "
		 "last reference), %d of them on the import worker itself", rounds, calls, async,
		 from_worker);
	tap_ok(from_worker == 0, "import_worker_never_runs_exit_mmap (%d of %d rounds)",
	       from_worker, rounds);
	if (!async && !from_worker)
		tap_diag("the race (the owner gone while the worker holds its mm) was not hit");
}

/* ---- dropped fences: the trace says so ---- */

struct drop_race {
	int tl;
	uint32_t go, done;	/* values to reach, reached */
};

/* Advance the timeline to each value main asks for, at once. */
static void *drop_signaller(void *arg)
{
	struct drop_race *d = arg;
	uint32_t want;

	for (;;) {
		while ((want = __atomic_load_n(&d->go, __ATOMIC_ACQUIRE)) == d->done)
			;
		if (want == UINT32_MAX)
			return NULL;
		raw_tl_inc(d->tl, 1);
		__atomic_store_n(&d->done, want, __ATOMIC_RELEASE);
	}
}

/* A tracefs instance recording fences' ends and signals. */
static int trace_inst_setup(char *inst, size_t size)
{
	const char *t = tracing_dir();

	if (!t)
		return -1;
	trace_write(t, "options/record-cmd", "0", O_TRUNC);
	snprintf(inst, size, "%s/instances/kfdsync_drop_%d", t, (int)getpid());
	if (mkdir(inst, 0700)) {
		trace_write(t, "options/record-cmd", "1", O_TRUNC);
		return -1;
	}
	trace_write(inst, "buffer_size_kb", "16384", O_TRUNC);
	if (trace_write(inst, "events/kfdsync/kfdsync_fence_end/enable", "1", O_TRUNC) ||
	    trace_write(inst, "events/dma_fence/dma_fence_signaled/enable", "1", O_TRUNC)) {
		rmdir(inst);
		trace_write(t, "options/record-cmd", "1", O_TRUNC);
		return -1;
	}
	return 0;
}

struct ended {
	unsigned long long context, seqno;
	int dropped;
};

static int ended_cmp(const void *a, const void *b)
{
	const struct ended *x = a, *y = b;

	if (x->context != y->context)
		return x->context < y->context ? -1 : 1;
	return x->seqno < y->seqno ? -1 : x->seqno > y->seqno;
}

TEST(dropped_fences_said_so_in_the_trace)
{
	static struct ended ends[200000], sig[200000];
	int n_end = 0, n_sig = 0, dropped = 0, unsignalled = 0, signalled_dropped = 0, i, j;
	struct drop_race d = { 0 };
	char inst[160], path[200], line[512];
	unsigned long long ctx, seq;
	pthread_t thr;
	uint32_t v;
	int64_t end;
	FILE *f;

	if (trace_inst_setup(inst, sizeof(inst))) {
		tap_skip("no tracefs instance with kfdsync's events",
			 "dropped_fences_said_so_in_the_trace");
		return;
	}
	d.tl = raw_open(KFDSYNC_TL_DEVICE);
	if (d.tl < 0)
		tap_bail("timeline: %s", strerror(-d.tl));
	/*
	 * A timeline fence one ahead, closed the moment the other thread is
	 * told to advance the timeline to it: some end while their last
	 * reference goes (refcount zero, release not yet run).
	 */
	pthread_create(&thr, NULL, drop_signaller, &d);
	end = raw_now_ns() + 5000 * MS;
	for (v = 1; raw_now_ns() < end && v < 60000; v++) {
		int fd = raw_tl_fence(d.tl, v);

		__atomic_store_n(&d.go, v, __ATOMIC_RELEASE);
		if (fd >= 0)
			close(fd);
		while (__atomic_load_n(&d.done, __ATOMIC_ACQUIRE) != v)
			;
	}
	__atomic_store_n(&d.go, UINT32_MAX, __ATOMIC_RELEASE);
	pthread_join(thr, NULL);
	close(d.tl);
	trace_write(inst, "events/kfdsync/kfdsync_fence_end/enable", "0", O_TRUNC);
	trace_write(inst, "events/dma_fence/dma_fence_signaled/enable", "0", O_TRUNC);

	snprintf(path, sizeof(path), "%s/trace", inst);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		const char *p;
		int dr = 0;

		if (line[0] == '#')
			continue;
		if ((p = strstr(line, "kfdsync_fence_end: ")) && n_end < 200000 &&
		    sscanf(p, "kfdsync_fence_end: context=%llu seqno=%llu", &ctx, &seq) == 2) {
			p = strstr(p, "dropped=");
			dr = p ? atoi(p + 8) : 0;
			ends[n_end++] = (struct ended){ ctx, seq, dr };
		} else if ((p = strstr(line, "dma_fence_signaled: ")) && n_sig < 200000) {
			const char *c = strstr(p, "context="), *s = strstr(p, "seqno=");

			if (c && s)
				sig[n_sig++] = (struct ended){ strtoull(c + 8, NULL, 10),
							       strtoull(s + 6, NULL, 10), 0 };
		}
	}
	if (f)
		fclose(f);
	rmdir(inst);
	trace_write(tracing_dir(), "options/record-cmd", "1", O_TRUNC);

	/* dma_fence prints 32-bit seqnos: compare those. */
	for (i = 0; i < n_end; i++)
		ends[i].seqno &= 0xffffffffULL;
	qsort(sig, n_sig, sizeof(sig[0]), ended_cmp);
	for (i = 0; i < n_end; i++) {
		struct ended key = { ends[i].context, ends[i].seqno, 0 };
		bool seen = bsearch(&key, sig, n_sig, sizeof(sig[0]), ended_cmp);

		dropped += ends[i].dropped;
		unsignalled += !ends[i].dropped && !seen;
		signalled_dropped += ends[i].dropped && seen;
	}
	for (i = 0, j = 0; i < n_end; i++)
		j += !ends[i].dropped;
	tap_diag("%d fences ended in the trace, %d signalled, %d said dropped", n_end, n_sig,
		 dropped);
	tap_ok(n_end > 0 && j > 0, "fence_ends_traced (%d)", n_end);
	tap_ok(unsignalled == 0,
	       "every_fence_end_not_said_dropped_signalled (%d never signalled)", unsignalled);
	tap_ok(signalled_dropped == 0, "no_dropped_fence_signalled (%d)", signalled_dropped);
	if (!dropped && !unsignalled)
		tap_diag("the race (a fence ending while its last reference goes) was not hit");
}

/* ---- a GPU reset's walk: the longest lock holds ---- */

#define WALK_PROCS	64
#define WALK_EVENTS	4079

/* Registered events with a pending fence each, held until @hold closes. */
static void walk_child(int ready, int hold)
{
	struct rlimit rl = { WALK_EVENTS + 256, WALK_EVENTS + 256 };
	int ctx, i, n = 0;
	char c = 0;

	setrlimit(RLIMIT_NOFILE, &rl);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(1);
	ctx = raw_open(RAW_KFDSYNC_DEV);
	if (ctx < 0)
		_exit(2);
	for (i = 0; i < WALK_EVENTS; i++) {
		HsaEvent *ev = NULL;
		HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };

		if (hsaKmtCreateEvent(&desc, true, false, &ev) != HSAKMT_STATUS_SUCCESS)
			break;
		if (raw_register(ctx, ev->EventId, slot_addr(ev)) ||
		    raw_export(ctx, ev->EventId, 0, 0) < 0)
			break;
		n++;
	}
	c = n == WALK_EVENTS ? 'r' : 'x';
	if (write(ready, &c, 1) != 1)
		_exit(3);
	while (read(hold, &c, 1) > 0)
		;
	_exit(0);
}

static const char *const walk_params[][2] = {
	{ "max_fences", "4096" }, { "max_user_fences", "1048576" },
	{ "max_user_events", "1048576" }, { "watchdog_ms", "3600000" },
	{ "watchdog_max_ms", "3600000" },
};

#define N_WALK_PARAMS (sizeof(walk_params) / sizeof(walk_params[0]))

/* Set walk_params, saving what they were in @saved. */
static void walk_params_set(char saved[N_WALK_PARAMS][32])
{
	unsigned int i;

	for (i = 0; i < N_WALK_PARAMS; i++) {
		kfdsync_param_read(walk_params[i][0], saved[i], sizeof(saved[i]));
		saved[i][strcspn(saved[i], "\n")] = '\0';
		kfdsync_param_write(walk_params[i][0], walk_params[i][1]);
	}
}

static void walk_params_restore(char saved[N_WALK_PARAMS][32])
{
	unsigned int i;

	for (i = 0; i < N_WALK_PARAMS; i++)
		kfdsync_param_write(walk_params[i][0], saved[i]);
}

/*
 * The bounds. A reset picks the processes under RCU and ends their fences
 * in a worker, a process's lock held for 64 slots at a time: the process
 * table's lock is not held for the walk at all, and the hook (here: the
 * injection) only queues. Walking every slot of every process under the
 * table's lock, in the hook, held it 1.73 s and ran 1.82 s with these 64 x
 * 4,079 (commit 8553d96, QEMU TCG on a loaded 2-core host; 5 ms in the hook
 * after it). The bounds leave TCG and load a factor of 10 or more either
 * way. One process's lock (at most 13.8 ms for a batch under that load,
 * against 90.8 ms before) is only reported: it moves with the host.
 */
#define TABLE_BOUND_NS	(50 * MS)
#define HOOK_BOUND_NS	(200 * MS)

TEST(reset_walk_holds_bounded)
{
	char saved[N_WALK_PARAMS][32], c;
	int ready[2], hold[2], n_ready = 0;
	long long held[3] = { -1, -1, -1 };
	pid_t pids[WALK_PROCS];
	struct kfdsync_status st;
	unsigned int i;
	int64_t t0, ended = -1;

	if (access(DEBUGFS "slots", R_OK) || access(DEBUGFS "inject", W_OK)) {
		tap_skip("no <debugfs>/kfdsync/slots and inject", "reset_walk_holds_bounded");
		return;
	}
	walk_params_set(saved);
	if (pipe(ready) || pipe(hold))
		tap_bail("pipe: %s", strerror(errno));
	fflush(stdout);
	for (i = 0; i < WALK_PROCS; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			tap_bail("fork: %s", strerror(errno));
		if (!pids[i]) {
			close(ready[0]);
			close(hold[1]);
			walk_child(ready[1], hold[0]);
		}
	}
	close(ready[1]);
	close(hold[0]);
	for (i = 0; i < WALK_PROCS && read(ready[0], &c, 1) == 1; i++)
		n_ready += c == 'r';
	tap_ok(n_ready == WALK_PROCS, "walk_processes_ready (%d of %d with %d fences)", n_ready,
	       WALK_PROCS, WALK_EVENTS);

	write_text(DEBUGFS "slots", "0");
	t0 = raw_now_ns();
	tap_ret(write_text(DEBUGFS "inject", "reset"), 0, "walk_inject_reset");
	while (raw_now_ns() - t0 < 120000 * MS) {
		if (!raw_status(kfdsync, &st) && st.user_fences == 0) {
			ended = raw_now_ns() - t0;
			break;
		}
		usleep(2000);
	}
	slots_held(held);
	tap_diag("reset of %d processes x %d events: table lock %.1f us, process lock %.1f us, "
		 "hook %.1f us longest; all ended in %.1f ms", WALK_PROCS, WALK_EVENTS,
		 held[0] / 1e3, held[1] / 1e3, held[2] / 1e3, ended / 1e6);
	tap_ok(ended >= 0, "walk_every_fence_ended (%.1f ms)", ended / 1e6);
	tap_ok(held[0] >= 0 && held[0] < TABLE_BOUND_NS,
	       "reset_walk_table_lock_hold_bounded (%.1f us < %.1f us)", held[0] / 1e3,
	       TABLE_BOUND_NS / 1e3);
	tap_ok(held[2] >= 0 && held[2] < HOOK_BOUND_NS,
	       "reset_hook_time_bounded (%.1f us < %.1f us)", held[2] / 1e3,
	       HOOK_BOUND_NS / 1e3);

	close(hold[1]);
	for (i = 0; i < WALK_PROCS; i++)
		reap(pids[i]);
	close(ready[0]);
	walk_params_restore(saved);
}

/* ---- an exception's end: the hook only queues ---- */

#define EXC_CONTEXTS	4
#define EXC_EVENTS	WALK_EVENTS
#define EXC_FENCES	(EXC_CONTEXTS * EXC_EVENTS)
/* For them all to end: the worker took 0.1-0.2 s under TCG. */
#define EXC_WAIT_MS	(6 * WAIT_MS)

/* What the exception's child saw; @code is 0 or where it failed. */
struct exc_result {
	int code;
	int early;		/* ended before the exception was raised */
	int lost;		/* not ended within EXC_WAIT_MS after it */
	int wrong;		/* ended with another status than -EIO */
	int before;		/* ended, but stamped before the exception */
	long long held[3];	/* <debugfs>/kfdsync/slots: table, process, hook */
	int64_t ended_ns;	/* from the exception to the last fence's end */
};

/* @fd's one fence: its status (1, 0, -errno) and when it ended (0: not). */
static int fence_info(int fd, int *status, int64_t *when)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = {
		.num_fences = 1, .sync_fence_info = (uintptr_t)&fi,
	};

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) || info.num_fences != 1)
		return -1;
	*status = fi.status;
	*when = (int64_t)fi.timestamp_ns;
	return 0;
}

/*
 * One process: EXC_EVENTS events, each registered in EXC_CONTEXTS contexts
 * with a pending fence in each; then a hardware exception of its queue.
 */
static struct exc_result exc_child(void)
{
	struct rlimit rl = { EXC_FENCES + 256, EXC_FENCES + 256 };
	static int fences[EXC_FENCES];
	struct exc_result r = { .code = 0 };
	int ctx[EXC_CONTEXTS], s, status;
	int64_t t0, when, last = 0, left;
	uint32_t q;
	HsaEvent *ev;
	int i, k;

	if (setrlimit(RLIMIT_NOFILE, &rl) || hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		return (struct exc_result){ .code = 1 };
	sim = kfdsim_open();
	if (sim < 0 || kfdsim_queue_create(sim, 0, &q, NULL))
		return (struct exc_result){ .code = 2 };
	for (k = 0; k < EXC_CONTEXTS; k++) {
		ctx[k] = raw_open(RAW_KFDSYNC_DEV);
		if (ctx[k] < 0)
			return (struct exc_result){ .code = 3 };
	}
	for (i = 0; i < EXC_EVENTS; i++) {
		HsaEventDescriptor desc = { .EventType = HSA_EVENTTYPE_SIGNAL };

		ev = NULL;
		if (hsaKmtCreateEvent(&desc, true, false, &ev) != HSAKMT_STATUS_SUCCESS)
			return (struct exc_result){ .code = 4 };
		for (k = 0; k < EXC_CONTEXTS; k++) {
			if (raw_register(ctx[k], ev->EventId, slot_addr(ev)))
				return (struct exc_result){ .code = 5 };
			s = raw_export(ctx[k], ev->EventId, 0, 0);
			if (s < 0)
				return (struct exc_result){ .code = 6 };
			fences[k * EXC_EVENTS + i] = s;
		}
	}
	for (i = 0; i < EXC_FENCES; i++)
		r.early += raw_fence_status(fences[i]) != 0;

	write_text(DEBUGFS "slots", "0");
	t0 = raw_now_ns();
	if (kfdsim_inject(sim, q, KFDSIM_INJECT_HW_EXCEPTION))
		return (struct exc_result){ .code = 7 };
	for (i = 0; i < EXC_FENCES; i++) {
		left = (t0 + EXC_WAIT_MS * MS - raw_now_ns()) / MS;
		if (!raw_wait(fences[i], left > 0 ? (int)left : 0) ||
		    fence_info(fences[i], &status, &when) || !when) {
			r.lost++;
			continue;
		}
		r.wrong += status != -EIO;
		r.before += when < t0;
		if (when > last)
			last = when;
	}
	r.ended_ns = last - t0;
	slots_held(r.held);
	return r;
}

/* Run exc_child() in a process of its own; bails out if it failed. */
static struct exc_result exc_run(void)
{
	struct exc_result r = { .code = -1 };
	int res[2], code;
	pid_t pid;

	if (pipe(res))
		tap_bail("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (!pid) {
		close(res[0]);
		r = exc_child();
		_exit(write(res[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(res[1]);
	if (read(res[0], &r, sizeof(r)) != sizeof(r))
		r.code = -1;
	close(res[0]);
	code = reap(pid);
	if (r.code || code)
		tap_bail("exception child failed at step %d (status %d)", r.code, code);
	return r;
}

/*
 * The bound. The exception hook (kfd_signal_hw_exception_event(), in a
 * kprobe: preemption off) only queues the process; the slot worker ends
 * its fences, a process's lock held for 64 slots at a time. Ending all
 * EXC_FENCES of them in the hook, as before (kfdsync_proc_end() called
 * from kfdsync_slot_process_error()), took 80 to 206 ms there in four tries
 * (6.1 under QEMU TCG on a loaded 2-core host; 0.1 to 0.27 ms since):
 * the bound is a tenth of the least. A try over it is tried again, twice
 * at most (the host may preempt the guest's CPU in any one); the least
 * counts.
 */
#define EXC_HOOK_BOUND_NS	(8 * MS)
#define EXC_TRIES		3

TEST(exception_end_hold_bounded)
{
	int early = 0, lost = 0, wrong = 0, before = 0, try;
	long long least = LLONG_MAX;
	char saved[N_WALK_PARAMS][32];
	const char *no_sim = getenv("KFDSYNC_SIM_UNUSABLE");
	struct exc_result r;

	if (access(DEBUGFS "slots", R_OK) || (no_sim && *no_sim)) {
		tap_skip(no_sim && *no_sim ? no_sim : "no <debugfs>/kfdsync/slots",
			 "exception_end_hold_bounded");
		return;
	}
	walk_params_set(saved);
	for (try = 0; try < EXC_TRIES && least >= EXC_HOOK_BOUND_NS; try++) {
		r = exc_run();
		tap_diag("exception of 1 process x %d contexts x %d events: table lock %.1f us, "
			 "process lock %.1f us, hook %.1f us longest; all ended in %.1f ms",
			 EXC_CONTEXTS, EXC_EVENTS, r.held[0] / 1e3, r.held[1] / 1e3,
			 r.held[2] / 1e3, r.ended_ns / 1e6);
		early += r.early;
		lost += r.lost;
		wrong += r.wrong;
		before += r.before;
		if (r.held[2] >= 0 && r.held[2] < least)
			least = r.held[2];
	}
	walk_params_restore(saved);

	tap_ok(early == 0, "exception_no_fence_ended_before (%d of %d x %d)", early, EXC_FENCES,
	       try);
	tap_ok(lost == 0, "exception_every_fence_ended (%d lost)", lost);
	tap_ok(wrong == 0, "exception_every_fence_eio (%d not)", wrong);
	tap_ok(before == 0, "exception_no_fence_stamped_before_it (%d)", before);
	tap_ok(least < EXC_HOOK_BOUND_NS,
	       "exception_hook_time_bounded (%.1f us < %.1f us, least of %d)", least / 1e3,
	       EXC_HOOK_BOUND_NS / 1e3, try);
}

int main(int argc, char **argv)
{
	harness_require = hardening_require;
	harness_setup = hardening_setup;
	return harness_main(argc, argv);
}
