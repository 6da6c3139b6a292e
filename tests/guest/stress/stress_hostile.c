// SPDX-License-Identifier: MIT
/*
 * stress_hostile: an unprivileged user against kfdsync.
 *
 * How this program works. The parent never opens /dev/kfd. It makes the
 * device nodes usable by everyone (the guest is ours), forks a victim
 * (root: its own amdkfd process, a registered event, a pending fence) and
 * an attacker (fork, setresuid to nobody) that receives the victim's
 * context, fence and event over a UNIX socket (SCM_RIGHTS) and tries
 * everything a context must refuse: registering, exporting, querying,
 * relaying, importing through the victim's context (EPERM), the victim's
 * ids and slot addresses in its own context (EINVAL, ENOENT), the victim's
 * memory (EFAULT: addresses are the caller's), setting "the victim's"
 * event id (acts on its own process only); and the victim's own forked
 * child with the inherited context (EPERM). The victim's event must not
 * have moved.
 *
 * Then a nobody process fills every per-user limit with the default
 * parameters — contexts, timelines, registered events, pending fences,
 * imports (pins, charged to RLIMIT_MEMLOCK) — and the kernel memory it
 * holds at the top is measured (Slab and SUnreclaim deltas of
 * /proc/meminfo, pinned pages) and printed, while root opens, registers
 * and exports as usual.
 */

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sim_test.h"
#include "stress.h"

static struct stress_opts opts;

struct victim_msg {
	uint32_t event_id;
	uint32_t pad;
	uint64_t slot;
	uint64_t word;		/* an address of the victim's own memory */
	uint64_t age;
};

static pid_t fork_or_bail(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	return pid;
}

static bool drop_to(uid_t uid)
{
	return !setresgid(uid, uid, uid) && !setresuid(uid, uid, uid);
}

/* ---- the victim (root) ---- */

static void victim_main(int sock)
{
	static uint64_t word = 7;
	struct victim_msg m = { 0 };
	HsaEvent *ev;
	int ctx, fence, fds[2], status, ret;
	char c;
	pid_t pid;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(10);
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	ctx = raw_open(RAW_KFDSYNC_DEV);
	if (!ev || ctx < 0 || raw_register(ctx, ev->EventId, slot_addr(ev)))
		_exit(11);
	fence = raw_export(ctx, ev->EventId, 0, 0);
	if (fence < 0)
		_exit(12);
	m.event_id = ev->EventId;
	m.slot = slot_addr(ev);
	m.word = (uintptr_t)&word;
	fds[0] = ctx;
	fds[1] = fence;

	/* Our own child, same user: the inherited context is not its. */
	pid = fork();
	if (!pid) {
		_exit(raw_query(ctx, ev->EventId, &(struct kfdsync_event_query){ 0 }) == -EPERM &&
		      raw_export(ctx, ev->EventId, 0, 0) == -EPERM &&
		      raw_unregister(ctx, ev->EventId) == -EPERM ? 0 : 1);
	}
	status = reap(pid);
	m.pad = (uint32_t)status;
	if (scm_send(sock, &m, sizeof(m), fds, 2, 0))
		_exit(13);
	/* Wait for the attacker to finish, then report our age and fence. */
	if (read(sock, &c, 1) != 1)
		_exit(14);
	m.age = raw_age(ctx, ev->EventId);
	ret = raw_fence_status(fence);
	m.pad = (uint32_t)ret;
	if (word != 7)
		m.pad = 0xdead;
	if (scm_send(sock, &m, sizeof(m), NULL, 0, 0))
		_exit(15);
	raw_unregister(ctx, ev->EventId);
	hsaKmtDestroyEvent(ev);
	close(fence);
	close(ctx);
	hsaKmtCloseKFD();
	_exit(0);
}

/* ---- the attacker (nobody) ---- */

struct attack {
	const char *name;
	int got, want;
};

static struct attack attacks[32];
static unsigned int n_attacks;

static void expect(const char *name, int got, int want)
{
	attacks[n_attacks++] = (struct attack){ name, got, want };
}

static void attacker_main(int sock)
{
	struct victim_msg m;
	struct kfdsync_event_query q;
	struct kfdsync_info info;
	struct kfdsync_status st;
	struct kfdsync_import imp;
	unsigned int n;
	int fds[STRESS_MAX_FDS], vctx, vfence, own, tl, done, merged;
	HsaEvent *mine;
	uint64_t *probe;

	if (!drop_to(NOBODY_UID))
		_exit(20);
	if (scm_recv(sock, &m, sizeof(m), fds, STRESS_MAX_FDS, &n, 0) != sizeof(m) || n != 2)
		_exit(21);
	vctx = fds[0];
	vfence = fds[1];
	expect("victim_child_inherited_context_eperm", (int)m.pad, 0);

	/* The victim's context, received over a socket: not ours. */
	expect("foreign_ctx_register_eperm", raw_register(vctx, m.event_id, m.slot), -EPERM);
	expect("foreign_ctx_export_eperm", raw_export(vctx, m.event_id, 0, 0), -EPERM);
	expect("foreign_ctx_query_eperm", raw_query(vctx, m.event_id, &q), -EPERM);
	expect("foreign_ctx_relay_eperm", raw_relay(vctx, m.event_id), -EPERM);
	expect("foreign_ctx_relays_eperm", raw_relays(vctx, m.event_id, 5), -EPERM);
	expect("foreign_ctx_unregister_eperm", raw_unregister(vctx, m.event_id), -EPERM);
	expect("foreign_ctx_condition_eperm",
	       raw_condition(vctx, m.event_id, &m, KFDSYNC_CONDITION_EQ, 0, 0), -EPERM);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	done = raw_tl_fence(tl, 0);		/* born signalled */
	expect("foreign_ctx_import_eperm", raw_import_memory(vctx, done, &m, 1, 2), -EPERM);
	expect("foreign_ctx_info_allowed", raw_info(vctx, &info), 0);
	expect("foreign_ctx_status_allowed", raw_status(vctx, &st), 0);

	/* Our own context, with the victim's ids, slot and memory. */
	own = raw_open(RAW_KFDSYNC_DEV);
	expect("nobody_opens_own_context", own >= 0 ? 0 : own, 0);
	expect("own_ctx_victim_id_no_kfd_einval", raw_register(own, m.event_id, m.slot), -EINVAL);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(22);
	mine = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!mine)
		_exit(23);
	/*
	 * The victim's slot address means our own memory here: accepted
	 * only if it is exactly our own slot of that id (forked from one
	 * parent, both may map the events area at one address).
	 */
	expect("own_ctx_victim_slot_is_an_address_of_ours",
	       raw_register(own, m.event_id, m.slot),
	       m.slot == slot_addr(mine) - mine->EventId * 8ULL + m.event_id * 8ULL ? 0 : -EINVAL);
	raw_unregister(own, m.event_id);
	expect("own_ctx_own_id_victim_slot_einval",
	       m.event_id == mine->EventId ? -EINVAL : raw_register(own, mine->EventId, m.slot),
	       -EINVAL);
	raw_unregister(own, mine->EventId);
	expect("own_ctx_export_victim_id_enoent", raw_export(own, m.event_id, 0, 0), -ENOENT);
	expect("own_ctx_relay_victim_id_enoent", raw_relay(own, m.event_id), -ENOENT);
	memset(&imp, 0, sizeof(imp));
	imp.fd = done;
	imp.flags = KFDSYNC_IMPORT_FAIL_EVENT;
	imp.fail_event_id = m.event_id;
	expect("own_ctx_fail_event_victim_id_enoent",
	       raw_ioctl(own, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &imp), -ENOENT);
	/* The victim's address is not ours: unmapped here. */
	probe = mmap((void *)(uintptr_t)(m.word & ~4095ULL), 4096, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (probe != MAP_FAILED)
		munmap(probe, 4096);	/* it was free: now unmapped for sure */
	expect("own_ctx_import_victim_memory_efault",
	       probe != MAP_FAILED ? raw_import_memory(own, done, (void *)(uintptr_t)m.word, 1, 2) :
	       -EFAULT, -EFAULT);
	/* "Set the victim's event id": acts on our own process, if at all. */
	memset(&imp, 0, sizeof(imp));
	imp.fd = done;
	imp.flags = KFDSYNC_IMPORT_SET_EVENT;
	imp.event_id = m.event_id;
	raw_ioctl(own, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &imp);
	hsaKmtSetEvent(mine);	/* and our own events, as much as we like */
	/* The victim's fence: a capability to wait and merge, not to signal. */
	merged = raw_merge(vfence, done);
	expect("victim_fence_merges_pending", merged >= 0 ? raw_fence_status(merged) : merged, 0);
	expect("victim_fence_no_signal_ioctl", raw_tl_inc(vfence, 1), -ENOTTY);
	usleep(200000);
	close(merged);
	close(done);
	close(tl);
	close(own);
	close(vctx);
	close(vfence);
	hsaKmtDestroyEvent(mine);
	hsaKmtCloseKFD();
	if (write(sock, &n_attacks, sizeof(n_attacks)) != sizeof(n_attacks) ||
	    write(sock, attacks, sizeof(attacks[0]) * n_attacks) !=
	    (ssize_t)(sizeof(attacks[0]) * n_attacks))
		_exit(24);
	_exit(0);
}

static void test_foreign(void)
{
	int vs[2], as[2], fds[STRESS_MAX_FDS], i;
	struct victim_msg m;
	struct attack got[32];
	unsigned int n = 0, k;
	pid_t victim, attacker;
	char c = 'x';

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, vs) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, as))
		tap_bail("socketpair: %s", strerror(errno));
	victim = fork_or_bail();
	if (!victim)
		victim_main(vs[1]);
	attacker = fork_or_bail();
	if (!attacker)
		attacker_main(as[1]);
	/* Relay the victim's context and fence to the attacker. */
	if (scm_recv(vs[0], &m, sizeof(m), fds, STRESS_MAX_FDS, &n, 0) != sizeof(m) || n != 2)
		tap_bail("victim failed (status %d)", reap(victim));
	if (scm_send(as[0], &m, sizeof(m), fds, 2, 0))
		tap_bail("send to attacker: %s", strerror(errno));
	close(fds[0]);
	close(fds[1]);
	/* SOCK_STREAM: a scm message then plain bytes. */
	if (read(as[0], &n, sizeof(n)) != sizeof(n) || n > 32 ||
	    read(as[0], got, sizeof(got[0]) * n) != (ssize_t)(sizeof(got[0]) * n))
		n = 0;
	k = (unsigned int)reap(attacker);
	tap_ok(k == 0 && n > 0, "attacker_ran (status %u, %u attempts)", k, n);
	for (k = 0; k < n; k++) {
		if (got[k].got != got[k].want)
			tap_diag("%s: got %d (%s), expected %d", got[k].name, got[k].got,
				 got[k].got < 0 ? strerror(-got[k].got) : "ok", got[k].want);
		/* Names are pointers into the attacker's copy of our text: same binary. */
		tap_ok(got[k].got == got[k].want, "%s", got[k].name);
	}
	if (write(vs[0], &c, 1) != 1 ||
	    scm_recv(vs[0], &m, sizeof(m), fds, STRESS_MAX_FDS, &n, 0) != sizeof(m))
		m.age = UINT64_MAX;
	tap_ok(m.age == 0 && (int)m.pad == 0, "victim_event_untouched (age %" PRIu64
	       ", fence status %d, own memory %s)", m.age, (int)m.pad,
	       m.pad == 0xdead ? "written" : "intact");
	i = reap(victim);
	tap_ok(i == 0, "victim_exits_cleanly (%d)", i);
	close(vs[0]);
	close(vs[1]);
	close(as[0]);
	close(as[1]);
}

/* ---- per-user limits and the worst case one user holds ---- */

static long meminfo_kb(const char *key)
{
	char line[128];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

struct fill {
	int ctxs, ctx_err, tls, tl_err, events, ev_err, fences, fence_err, imports, imp_err;
	long slab_kb, sunreclaim_kb, pins;
	uint64_t memlock;
	struct kfdsync_status st;
};

#define MAX_FDS (1024 + 1024 + 17000 + 64)

/*
 * As nobody: open contexts and timelines until refused, register events
 * (the same amdkfd events in several contexts), create pending timeline
 * fences and imports until refused. Report through @f, hold everything
 * until @go is readable, then exit.
 */
static void filler_main(struct fill *f, int ready, int go)
{
	static int ctx[1100], tl[1100];
	static HsaEvent *evs[4096];
	long slab0 = meminfo_kb("Slab"), unrec0 = meminfo_kb("SUnreclaim");
	long pin0, rel0;
	struct rlimit rl;
	int i, k, fd, nev = 0, imp_fence, ret;
	static uint64_t words[8][512];
	char c;

	vmstat_refresh();
	pin0 = vmstat_value("nr_foll_pin_acquired");
	rel0 = vmstat_value("nr_foll_pin_released");
	if (!drop_to(NOBODY_UID))
		_exit(30);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	f->memlock = rl.rlim_cur;
	for (f->ctxs = 0; f->ctxs < 1100; f->ctxs++) {
		fd = raw_open(RAW_KFDSYNC_DEV);
		if (fd < 0) {
			f->ctx_err = fd;
			break;
		}
		ctx[f->ctxs] = fd;
	}
	for (f->tls = 0; f->tls < 1100; f->tls++) {
		fd = raw_open(KFDSYNC_TL_DEVICE);
		if (fd < 0) {
			f->tl_err = fd;
			break;
		}
		tl[f->tls] = fd;
	}
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(31);
	while (nev < 4095) {
		evs[nev] = create_event(HSA_EVENTTYPE_SIGNAL, false);
		if (!evs[nev])
			break;
		nev++;
	}
	/* Events: the same events in one context after another (ENOSPC: the user's). */
	for (k = 0; k < f->ctxs && !f->ev_err; k++)
		for (i = 0; i < nev; i++) {
			ret = raw_register(ctx[k], evs[i]->EventId, slot_addr(evs[i]));
			if (ret) {
				f->ev_err = ret;
				break;
			}
			f->events++;
		}
	/*
	 * Imports of one pending fence, each pinning a page: a context's
	 * max_imports, then the next context, until the user's limit
	 * (ENOSPC in a fresh context) or RLIMIT_MEMLOCK (ENOMEM).
	 */
	imp_fence = raw_tl_fence(tl[0], 1);
	for (k = 0; k < f->ctxs && !f->imp_err && imp_fence >= 0; k++)
		for (i = 0; i < 1100; i++) {
			ret = raw_import_memory(ctx[k], imp_fence, &words[i % 8][(i / 8) % 512],
						1, 2);
			if (ret == -ENOSPC && i)
				break;		/* this context is full */
			if (ret) {
				f->imp_err = ret;
				break;
			}
			f->imports++;
		}
	/* Pending fences: a timeline's max, then the next, until the user's. */
	for (k = 1; k < f->tls && !f->fence_err; k++)
		for (i = 1; i <= 1100; i++) {
			fd = raw_tl_fence(tl[k], (uint32_t)i);
			if (fd == -ENOSPC && i > 1)
				break;		/* this timeline is full */
			if (fd < 0) {
				f->fence_err = fd;
				break;
			}
			f->fences++;
		}
	f->fences += imp_fence >= 0;
	vmstat_refresh();
	f->pins = (vmstat_value("nr_foll_pin_acquired") - pin0) -
		  (vmstat_value("nr_foll_pin_released") - rel0);
	f->slab_kb = meminfo_kb("Slab") - slab0;
	f->sunreclaim_kb = meminfo_kb("SUnreclaim") - unrec0;
	raw_status(ctx[0], &f->st);
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(32);
	_exit(0);
}

/* Put back the watchdog parameters test_limits() raised (the default first). */
static void watchdog_restore(const char *watchdog, const char *watchdog_max)
{
	kfdsync_param_write("watchdog_ms", watchdog);
	kfdsync_param_write("watchdog_max_ms", watchdog_max);
}

static void test_limits(void)
{
	struct fill *f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ready[2], go[2], rctx, rtl, fence, code;
	struct rlimit nofile = { MAX_FDS, MAX_FDS };
	char watchdog[32] = "", watchdog_max[32] = "";
	struct kfdsync_status st;
	pid_t pid;
	char c;

	if (f == MAP_FAILED || pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		tap_bail("setup: %s", strerror(errno));
	memset(f, 0, sizeof(*f));
	setrlimit(RLIMIT_NOFILE, &nofile);	/* root may raise it for the child */
	/*
	 * The filler's fences must stay pending however long filling takes
	 * (on the debug kernel it outlasted the 10 s default watchdog: expired
	 * fences made room for more and the count passed the limit): the
	 * largest watchdog while it runs (taken when contexts and timelines
	 * are opened).
	 */
	if (kfdsync_param_read("watchdog_ms", watchdog, sizeof(watchdog)) ||
	    kfdsync_param_read("watchdog_max_ms", watchdog_max, sizeof(watchdog_max)))
		tap_bail("cannot read kfdsync's watchdog parameters");
	if (kfdsync_param_write("watchdog_max_ms", "3600000") ||
	    kfdsync_param_write("watchdog_ms", "3600000")) {
		watchdog_restore(watchdog, watchdog_max);
		tap_bail("cannot raise kfdsync's watchdog for the filler");
	}
	pid = fork_or_bail();
	if (!pid)
		filler_main(f, ready[1], go[0]);
	if (read(ready[0], &c, 1) != 1) {
		tap_ok(false, "filler_ran (status %d)", reap(pid));
		watchdog_restore(watchdog, watchdog_max);
		return;
	}
	tap_diag("one user (nobody) holds: %d contexts (then %s), %d timelines (then %s), "
		 "%d registered events (then %s), %d pending fences (then %s), %d imports "
		 "(then %s)", f->ctxs, strerror(-f->ctx_err), f->tls, strerror(-f->tl_err),
		 f->events, strerror(-f->ev_err), f->fences, strerror(-f->fence_err),
		 f->imports, strerror(-f->imp_err));
	tap_diag("worst case of one user with the default limits: Slab +%ld kB (SUnreclaim "
		 "+%ld kB), %ld pinned pages (%ld kB), RLIMIT_MEMLOCK %" PRIu64 " kB",
		 f->slab_kb, f->sunreclaim_kb, f->pins, f->pins * 4, f->memlock / 1024);
	tap_ok(f->ctxs == (int)f->st.max_user_contexts && f->ctx_err == -EMFILE,
	       "user_contexts_limit_holds (%d of %u)", f->ctxs, f->st.max_user_contexts);
	tap_ok(f->tls == (int)f->st.max_user_timelines && f->tl_err == -EMFILE,
	       "user_timelines_limit_holds (%d of %u)", f->tls, f->st.max_user_timelines);
	tap_ok(f->events == (int)f->st.max_user_events && f->ev_err == -ENOSPC,
	       "user_events_limit_holds (%d of %u)", f->events, f->st.max_user_events);
	tap_ok(f->fences == (int)f->st.max_user_fences && f->fence_err == -ENOSPC &&
	       f->st.user_fences == f->st.max_user_fences,
	       "user_fences_limit_holds (%d of %u, %u pending)", f->fences,
	       f->st.max_user_fences, f->st.user_fences);
	tap_ok(f->imports > 0 && (f->imp_err == -ENOMEM || f->imp_err == -ENOSPC),
	       "user_imports_bounded (%d, %s)", f->imports, strerror(-f->imp_err));
	tap_ok(f->memlock == RLIM_INFINITY || f->pins * 4096 <= (long)f->memlock,
	       "pins_within_rlimit_memlock (%ld pages)", f->pins);

	/* Root is another user: unaffected. */
	rctx = raw_open(RAW_KFDSYNC_DEV);
	rtl = raw_open(KFDSYNC_TL_DEVICE);
	fence = rtl >= 0 ? raw_tl_fence(rtl, 1) : rtl;
	tap_ok(rctx >= 0 && rtl >= 0 && fence >= 0 && !raw_status(rctx, &st) &&
	       st.user_contexts == 1 && st.user_timelines == 1 && st.user_fences == 1,
	       "root_unaffected_while_nobody_full (%d %d %d)", rctx, rtl, fence);
	if (fence >= 0)
		close(fence);
	if (rtl >= 0)
		close(rtl);
	if (rctx >= 0)
		close(rctx);
	if (write(go[1], "g", 1) != 1)
		tap_diag("go: %s", strerror(errno));
	code = reap(pid);
	tap_ok(code == 0, "filler_exits_cleanly (%d)", code);
	watchdog_restore(watchdog, watchdog_max);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	munmap(f, sizeof(*f));
}

int main(int argc, char **argv)
{
	scrub_hsa_env();
	stress_parse(argc, argv, "stress_hostile", 0, 0, &opts);
	require_sim_guest();
	if (access(RAW_KFDSYNC_DEV, F_OK) || geteuid()) {
		printf("1..0 # SKIP needs root and %s (the guest)\n", RAW_KFDSYNC_DEV);
		return 0;
	}
	nodes_for_everyone();
	chmod("/dev/kfd", 0666);
	stress_check_zero("counters_zero_before", 0, 0, 2000);
	test_foreign();
	test_limits();
	stress_check_zero("counters_zero_after", 0, 0, 15000);
	printf("1..%u\n", tap_count);
	return tap_exit();
}
