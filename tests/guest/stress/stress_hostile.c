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
 * imports (each pinning a page of its own, charged to RLIMIT_MEMLOCK) —
 * and the kernel memory it holds at the top is measured (Slab and
 * SUnreclaim deltas of /proc/meminfo, pinned pages) and printed, while
 * root opens, registers and exports as usual. Nobody then pins a word in
 * each of 64 transparent huge pages: the bytes really pinned (pins times
 * the folio size) must stay within its RLIMIT_MEMLOCK.
 *
 * Last, with small limits, user 1000 in a user namespace of its own with
 * 64 subordinate uids (a rootless container) takes every context,
 * timeline and fence it can through all of them, and pins pages through
 * imports, while another user and root open theirs; then the same from a
 * user namespace root made (LXD, Docker's userns-remap, systemd-nspawn -U:
 * its owner is root, whom no limit binds), which must count as one user
 * too; then four real users fill the system-wide limits, and a fifth is
 * refused but root is not.
 */

#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "hugepage.h"
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
	/*
	 * Without an amdkfd process of our own, the victim's id is relayed:
	 * our own word only, nothing of the victim's is read.
	 */
	expect("own_ctx_victim_id_no_kfd_registers", raw_register(own, m.event_id, m.slot), 0);
	memset(&q, 0, sizeof(q));
	raw_query(own, m.event_id, &q);
	expect("own_ctx_victim_id_no_kfd_relayed",
	       q.source == KFDSYNC_SOURCE_RELAY ? 0 : -EINVAL, 0);
	raw_unregister(own, m.event_id);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		_exit(22);
	mine = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!mine)
		_exit(23);
	/*
	 * The victim's slot address means nothing: the slot is found by id in
	 * our own amdkfd process, whatever address we pass.
	 */
	expect("own_ctx_victim_slot_own_process_slot",
	       raw_register(own, m.event_id, m.slot), 0);
	raw_unregister(own, m.event_id);
	expect("own_ctx_own_id_victim_slot_own_process_slot",
	       raw_register(own, mine->EventId, m.slot), 0);
	memset(&q, 0, sizeof(q));
	raw_query(own, mine->EventId, &q);
	expect("own_ctx_own_id_victim_slot_age_zero", q.age == 0 ? 0 : -EINVAL, 0);
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

/* Pages the filler's imports may pin, one each. */
#define IMPORT_PAGES	4096

/* Pins (nr_foll_pin_acquired - released) now, as root (it folds the counts). */
static long pins_now(void)
{
	vmstat_refresh();
	return vmstat_value("nr_foll_pin_acquired") - vmstat_value("nr_foll_pin_released");
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
	struct rlimit rl;
	int i, k, fd, nev = 0, imp_fence, ret, n_imp = 0;
	/* Small pages, each pinned once: the most memory imports can pin. */
	char *pages = mmap(NULL, IMPORT_PAGES * 4096UL, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char c;

	if (pages == MAP_FAILED)
		_exit(33);
	madvise(pages, IMPORT_PAGES * 4096UL, MADV_NOHUGEPAGE);
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
	 * Imports of one pending fence, each pinning a page of its own: a
	 * context's max_imports, then the next context, until the user's limit
	 * (ENOSPC in a fresh context) or RLIMIT_MEMLOCK (ENOMEM).
	 */
	imp_fence = raw_tl_fence(tl[0], 1);
	for (k = 0; k < f->ctxs && !f->imp_err && imp_fence >= 0; k++)
		for (i = 0; i < 1100; i++) {
			ret = raw_import_memory(ctx[k], imp_fence,
						pages + (n_imp++ % IMPORT_PAGES) * 4096UL, 1, 2);
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
	long pins0;
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
	pins0 = pins_now();
	pid = fork_or_bail();
	if (!pid)
		filler_main(f, ready[1], go[0]);
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		tap_ok(false, "filler_ran (status %d)", reap(pid));
		watchdog_restore(watchdog, watchdog_max);
		return;
	}
	f->pins = pins_now() - pins0;
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
	close(go[1]);
	munmap(f, sizeof(*f));
}

/* ---- pins in huge pages ---- */

#define THP_AREA	64	/* huge pages offered to the attacker */

struct thp_fill {
	int pins, err;
	long huge_kb, vmstat_pins;
	uint64_t memlock;
};

/* As nobody: one import into each of THP_AREA huge pages, until refused. */
static void thp_filler_main(struct thp_fill *f, int ready, int go)
{
	struct rlimit rl;
	char *area;
	int ctx, tl, fence, i, ret;
	char c;

	if (!drop_to(NOBODY_UID))
		_exit(40);
	getrlimit(RLIMIT_MEMLOCK, &rl);
	f->memlock = rl.rlim_cur;
	area = thp_area(THP_AREA);
	if (!area)
		_exit(41);
	f->huge_kb = anon_huge_kb(area);
	ctx = raw_open(RAW_KFDSYNC_DEV);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	fence = raw_tl_fence(tl, 1);
	for (i = 0; i < THP_AREA && fence >= 0; i++) {
		ret = raw_import_memory(ctx, fence, area + i * HUGE_SIZE + 64, 1, 2);
		if (ret) {
			f->err = ret;
			break;
		}
		f->pins++;
	}
	if (write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		_exit(42);
	_exit(0);
}

/*
 * The worst case one user pins through imports in huge pages: bytes
 * really pinned (the pins /proc/vmstat counts, times the folio size) against
 * its RLIMIT_MEMLOCK.
 */
static void test_thp_pins(void)
{
	struct thp_fill *f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ready[2], go[2], code;
	long folio_kb, pins0;
	pid_t pid;
	char c;

	if (f == MAP_FAILED || pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		tap_bail("setup: %s", strerror(errno));
	memset(f, 0, sizeof(*f));
	pins0 = pins_now();
	pid = fork_or_bail();
	if (!pid)
		thp_filler_main(f, ready[1], go[0]);
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		tap_ok(false, "thp_filler_ran (status %d)", reap(pid));
		close(ready[0]);
		close(go[1]);
		return;
	}
	f->vmstat_pins = pins_now() - pins0;
	if (f->huge_kb < THP_AREA * 2048L) {
		tap_skip("no transparent huge pages", "thp_pins_within_rlimit_memlock");
	} else {
		folio_kb = HUGE_SIZE / 1024;
		tap_diag("worst case of one user pinning words of huge pages: %d pins (%ld in "
			 "/proc/vmstat, then %s), %ld kB really pinned, RLIMIT_MEMLOCK %" PRIu64
			 " kB", f->pins, f->vmstat_pins, strerror(-f->err),
			 f->vmstat_pins * folio_kb, f->memlock / 1024);
		tap_ok(f->vmstat_pins * folio_kb * 1024 <= (long)f->memlock && f->err == -ENOMEM,
		       "thp_pins_within_rlimit_memlock (%ld kB)", f->vmstat_pins * folio_kb);
	}
	if (write(go[1], "g", 1) != 1)
		tap_diag("go: %s", strerror(errno));
	code = reap(pid);
	tap_ok(code == 0, "thp_filler_exits_cleanly (%d)", code);
	close(ready[0]);
	close(go[1]);
	munmap(f, sizeof(*f));
}

/* ---- a subordinate-uid range against everyone else ---- */

/*
 * A rootless container: user 1000 creates a user namespace, and root maps
 * SUBUIDS of its subordinate uids into it (what newuidmap does). Inside,
 * one process per uid pins what it can (imports into pages of its own,
 * RLIMIT_MEMLOCK PIN_PAGES pages each) and takes every context, timeline
 * and fence it can. (The device nodes are everyone's here, as the render
 * group's members' are: rootless containers keep their supplementary
 * groups.) A root-owned container (owner 0, SUBUID_ROOT_BASE) does the
 * same.
 */
#define ATTACKER_UID	1000
#define SUBUID_BASE	200000
#define SUBUID_ROOT_BASE 300000
#define SUBUIDS		64
#define VICTIM_UID	2000
#define SMALL_USER	8	/* per-user contexts and timelines while it runs */
#define SMALL_GLOBAL	32	/* system-wide: four users' worth */
#define SMALL_FENCES	64	/* per-user pending fences */
#define PIN_PAGES	16	/* RLIMIT_MEMLOCK in the container, in pages */

struct subuid_report {
	int ctxs, ctx_err, tls, tl_err, fences, fence_err, pins, pin_err, done, failed;
	int arrived[2];		/* r[0] only: processes at each barrier */
};

/* Where the container gave up (r[0].failed), and why. */
enum { CONTAINER_CHROOT = 1, CONTAINER_DROP, CONTAINER_UNSHARE, CONTAINER_MAPPED };

/*
 * The guest's command runs chrooted into the host's root (tests/vm's
 * init), and no user namespace can be made in a chroot (unshare(2):
 * EPERM). Root may leave it, the classic way: chroot into a directory
 * while the working directory stays outside, climb up from there, and
 * make the top the root: the initramfs, where the same devtmpfs is /dev,
 * as a process of a booted system would see it.
 */
static bool leave_chroot(void)
{
	const char *dir = "/tmp/kfdsync-leave-chroot";
	int i;

	mkdir(dir, 0700);
	if (chdir("/") || chroot(dir))
		return false;
	for (i = 0; i < 32; i++)
		if (chdir(".."))
			return false;
	return !chroot(".") && !chdir("/");
}

/* Wait until all SUBUIDS processes reached @phase (10 s at most). */
static void subuid_barrier(struct subuid_report *r, int phase)
{
	int64_t end = now_ns() + 10 * S_NS;

	__atomic_add_fetch(&r[0].arrived[phase], 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&r[0].arrived[phase], __ATOMIC_ACQUIRE) < SUBUIDS &&
	       now_ns() < end)
		sleep_ns(MS_NS);
}

/*
 * One uid of the range (report @r[@i]): a context first, and once every
 * uid has tried, an import of @fence into each of PIN_PAGES pages of its
 * own (each pins one); then take everything else; report, hold it until
 * @hold closes.
 */
static void subuid_main(struct subuid_report *r, unsigned int i, int fence, int hold)
{
	char *pages = mmap(NULL, PIN_PAGES * 4096UL, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct subuid_report *me = &r[i];
	int fd, tl, k, ctx, ret;
	char c;

	if (pages == MAP_FAILED || setresuid(i, i, i)) {
		me->failed = 1;
		_exit(1);
	}
	madvise(pages, PIN_PAGES * 4096UL, MADV_NOHUGEPAGE);
	ctx = raw_open(RAW_KFDSYNC_DEV);
	me->ctxs = ctx >= 0;
	me->ctx_err = ctx < 0 ? ctx : 0;
	/* Every uid that got a context pins, not only the first one. */
	subuid_barrier(r, 0);
	for (k = 0; k < PIN_PAGES && ctx >= 0 && fence >= 0; k++) {
		ret = raw_import_memory(ctx, fence, pages + k * 4096UL, 1, 2);
		if (ret) {
			me->pin_err = ret;
			break;
		}
		me->pins++;
	}
	subuid_barrier(r, 1);
	for (k = 0; ctx >= 0 && k < 4 * SMALL_USER; k++) {
		fd = raw_open(RAW_KFDSYNC_DEV);
		if (fd < 0) {
			me->ctx_err = fd;
			break;
		}
		me->ctxs++;
	}
	tl = -1;
	for (k = 0; k < 4 * SMALL_USER; k++) {
		fd = raw_open(KFDSYNC_TL_DEVICE);
		if (fd < 0) {
			me->tl_err = fd;
			break;
		}
		if (tl < 0)
			tl = fd;
		me->tls++;
	}
	for (k = 1; tl >= 0 && k <= 4 * SMALL_FENCES; k++) {
		fd = raw_tl_fence(tl, (uint32_t)k);
		if (fd < 0) {
			me->fence_err = fd;
			break;
		}
		me->fences++;
	}
	__atomic_store_n(&me->done, 1, __ATOMIC_RELEASE);
	while (read(hold, &c, 1) > 0)
		;
	_exit(0);
}

/*
 * User @owner (ATTACKER_UID, or root) in a user namespace of its own,
 * with RLIMIT_MEMLOCK PIN_PAGES pages: waits for root to map its range
 * (@mapped), then starts a process per uid.
 */
static void container_main(struct subuid_report *r, uid_t owner, int ready, int mapped,
			   int hold)
{
	struct rlimit rl = { PIN_PAGES * 4096UL, PIN_PAGES * 4096UL };
	pid_t pids[SUBUIDS];
	unsigned int i;
	int tl, fence;
	char c;

	if (!leave_chroot()) {
		r[0].failed = CONTAINER_CHROOT;
		r[0].ctx_err = -errno;
		_exit(1);
	}
	if (setrlimit(RLIMIT_MEMLOCK, &rl) || (owner && !drop_to(owner))) {
		r[0].failed = CONTAINER_DROP;
		_exit(1);
	}
	if (unshare(CLONE_NEWUSER)) {
		r[0].failed = CONTAINER_UNSHARE;
		r[0].ctx_err = -errno;
		_exit(1);
	}
	if (write(ready, "u", 1) != 1 || read(mapped, &c, 1) != 1) {
		r[0].failed = CONTAINER_MAPPED;
		_exit(1);
	}
	/* The fence every uid imports: one of the owner's pending fences. */
	tl = raw_open(KFDSYNC_TL_DEVICE);
	fence = tl >= 0 ? raw_tl_fence(tl, 1) : tl;
	r[0].fence_err = fence < 0 ? fence : 0;
	for (i = 0; i < SUBUIDS; i++) {
		pids[i] = fork();
		if (!pids[i])
			subuid_main(r, i, fence, hold);
	}
	close(hold);
	for (i = 0; i < SUBUIDS; i++)
		reap(pids[i]);
	_exit(0);
}

/* As @uid: a context, a timeline and a fence; 0 or the first -errno. */
static int user_opens(uid_t uid)
{
	pid_t pid = fork_or_bail();
	int ctx, tl, fence;

	if (!pid) {
		if (uid && !drop_to(uid))
			_exit(100);
		ctx = raw_open(RAW_KFDSYNC_DEV);
		tl = raw_open(KFDSYNC_TL_DEVICE);
		fence = tl >= 0 ? raw_tl_fence(tl, 1) : tl;
		_exit(ctx < 0 ? -ctx : tl < 0 ? -tl : fence < 0 ? -fence : 0);
	}
	return -reap(pid);
}

/*
 * The watchdog too: the container's imports must stay pending (and pinned)
 * while it is measured, whatever an earlier program left.
 */
static const char *const small_params[][2] = {
	{ "max_user_contexts", "8" }, { "max_contexts", "32" },
	{ "max_user_timelines", "8" }, { "max_timelines", "32" },
	{ "max_user_fences", "64" }, { "watchdog_max_ms", "600000" },
	{ "watchdog_ms", "600000" },
};

#define N_SMALL (sizeof(small_params) / sizeof(small_params[0]))

static void params_small(char saved[][32], bool set)
{
	unsigned int i;

	for (i = 0; i < N_SMALL; i++) {
		if (set) {
			kfdsync_param_read(small_params[i][0], saved[i], 32);
			kfdsync_param_write(small_params[i][0], small_params[i][1]);
		} else {
			kfdsync_param_write(small_params[i][0], saved[i]);
		}
	}
}

/*
 * Distinct real users fill the system-wide limit: the next user is refused
 * (ENFILE), root, with CAP_SYS_ADMIN, is not.
 */
static void test_global_limit_spares_root(void)
{
	char saved[N_SMALL][32];
	int hold[2], ready[2], code, root;
	pid_t pids[SMALL_GLOBAL / SMALL_USER];
	unsigned int i, n = SMALL_GLOBAL / SMALL_USER;
	char c;

	if (pipe2(hold, O_CLOEXEC) || pipe2(ready, O_CLOEXEC))
		tap_bail("pipe: %s", strerror(errno));
	params_small(saved, true);
	for (i = 0; i < n; i++) {
		pids[i] = fork_or_bail();
		if (!pids[i]) {
			int k;

			close(hold[1]);
			close(ready[0]);
			if (!drop_to(3000 + i))
				_exit(1);
			for (k = 0; k < SMALL_USER; k++)
				if (raw_open(RAW_KFDSYNC_DEV) < 0 || raw_open(KFDSYNC_TL_DEVICE) < 0)
					_exit(2);
			if (write(ready[1], "r", 1) != 1)
				_exit(3);
			while (read(hold[0], &c, 1) > 0)
				;
			_exit(0);
		}
	}
	close(ready[1]);
	for (i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			tap_diag("a user could not fill its share");
	code = user_opens(3000 + n);
	root = user_opens(0);
	tap_ok(code == -ENFILE, "global_limit_refuses_another_user (%s)", strerror(-code));
	tap_ok(root == 0, "global_limit_spares_root (%s)", strerror(-root));
	close(hold[1]);
	for (i = 0; i < n; i++)
		reap(pids[i]);
	params_small(saved, false);
	close(hold[0]);
	close(ready[0]);
}

/*
 * A container of @owner (ATTACKER_UID: rootless; 0: made by root) with
 * SUBUIDS subordinate uids from @base; test names carry @prefix.
 */
static void test_subuid_range(uid_t owner, int base, const char *prefix)
{
	struct subuid_report *r = mmap(NULL, sizeof(*r) * SUBUIDS, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ready[2], mapped[2], hold[2], ctxs = 0, tls = 0, fences = 0, pins = 0, victim;
	int root, pin_err = 0;
	long pins0, vm_pins;
	char saved[N_SMALL][32], path[64], map[64], c;
	unsigned int i, done = 0;
	int64_t end;
	pid_t pid;

	/* Every Debian kernel has them; a kernel without cannot be attacked so. */
	if (access("/proc/self/ns/user", F_OK)) {
		static const char *const names[] = {
			"root_maps_the_subordinate_range", "every_subordinate_uid_ran",
			"subordinate_uids_charged_to_namespace_owner",
			"subordinate_uids_pin_one_rlimit_memlock",
			"another_user_not_denied", "root_not_denied",
		};

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			tap_skip("this kernel has no user namespaces (CONFIG_USER_NS)", "%s%s",
				 prefix, names[i]);
		if (r != MAP_FAILED)
			munmap(r, sizeof(*r) * SUBUIDS);
		return;
	}
	if (r == MAP_FAILED || pipe2(ready, O_CLOEXEC) || pipe2(mapped, O_CLOEXEC) ||
	    pipe2(hold, O_CLOEXEC))
		tap_bail("setup: %s", strerror(errno));
	memset(r, 0, sizeof(*r) * SUBUIDS);
	/* Debian's switch for unprivileged user namespaces, where it exists. */
	write_text("/proc/sys/kernel/unprivileged_userns_clone", "1");
	params_small(saved, true);

	pins0 = pins_now();
	pid = fork_or_bail();
	if (!pid) {
		close(hold[1]);
		close(ready[0]);
		close(mapped[1]);
		container_main(r, owner, ready[1], mapped[0], hold[0]);
	}
	close(hold[0]);
	close(ready[1]);
	close(mapped[0]);
	if (read(ready[0], &c, 1) != 1) {
		i = (unsigned int)reap(pid);
		tap_ok(false, "%scontainer_starts (status %u, step %d, %s)", prefix, i,
		       r[0].failed, strerror(-r[0].ctx_err));
		params_small(saved, false);
		close(hold[1]);
		close(ready[0]);
		close(mapped[1]);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	snprintf(map, sizeof(map), "0 %d %d\n", base, SUBUIDS);
	tap_ret(write_text(path, map), 0, "%sroot_maps_the_subordinate_range", prefix);
	if (write(mapped[1], "m", 1) != 1)
		tap_bail("mapped: %s", strerror(errno));
	/*
	 * Until every uid is done, or none got done for 60 s: a debug kernel
	 * beside other guests took more than 60 s for all 64.
	 */
	end = now_ns() + 60 * S_NS;
	while (done < SUBUIDS && now_ns() < end) {
		unsigned int before = done;

		for (done = 0, i = 0; i < SUBUIDS; i++)
			done += __atomic_load_n(&r[i].done, __ATOMIC_ACQUIRE) || r[i].failed;
		if (done > before)
			end = now_ns() + 60 * S_NS;
		sleep_ns(20 * MS_NS);
	}
	for (i = 0; i < SUBUIDS; i++) {
		ctxs += r[i].ctxs;
		tls += r[i].tls;
		fences += r[i].fences;
		pins += r[i].pins;
		pin_err = pin_err ?: r[i].pin_err;
	}
	/* Pins really held now (the imports' fence is pending). */
	vm_pins = pins_now() - pins0;
	tap_diag("user %d through %d subordinate uids holds %d contexts, %d timelines, %d "
		 "pending fences (per-user limits %d, %d, %d; system-wide %d, %d), %d pinned "
		 "pages (then %s; %ld held in /proc/vmstat; RLIMIT_MEMLOCK %d pages)", owner,
		 SUBUIDS, ctxs, tls, fences, SMALL_USER, SMALL_USER, SMALL_FENCES, SMALL_GLOBAL,
		 SMALL_GLOBAL, pins, strerror(-pin_err), vm_pins, PIN_PAGES);

	/* Another user and root, while the container holds all it could take. */
	victim = user_opens(VICTIM_UID);
	root = user_opens(0);
	tap_ok(done == SUBUIDS, "%severy_subordinate_uid_ran (%u of %d)", prefix, done, SUBUIDS);
	tap_ok(ctxs <= SMALL_USER && tls <= SMALL_USER && fences <= SMALL_FENCES,
	       "%ssubordinate_uids_charged_to_namespace_owner (%d, %d, %d)", prefix, ctxs, tls,
	       fences);
	/*
	 * Distinct small pages, each uid with a context importing PIN_PAGES:
	 * one RLIMIT_MEMLOCK's worth in all, and the others refused.
	 */
	tap_ok(pins == PIN_PAGES && vm_pins <= PIN_PAGES && pin_err == -ENOMEM,
	       "%ssubordinate_uids_pin_one_rlimit_memlock (%d pages of %d, %ld held, then %s)",
	       prefix, pins, PIN_PAGES, vm_pins, strerror(-pin_err));
	tap_ok(victim == 0, "%sanother_user_not_denied (%s)", prefix, strerror(-victim));
	tap_ok(root == 0, "%sroot_not_denied (%s)", prefix, strerror(-root));

	close(hold[1]);
	reap(pid);
	params_small(saved, false);
	close(ready[0]);
	close(mapped[1]);
	munmap(r, sizeof(*r) * SUBUIDS);
}

int main(int argc, char **argv)
{
	scrub_hsa_env();
	stress_parse(argc, argv, "stress_hostile", 0, 0, &opts);
	require_sim_guest();
	stress_require_root();
	nodes_for_everyone();
	chmod("/dev/kfd", 0666);
	stress_check_zero("counters_zero_before", 0, 0, 2000);
	test_foreign();
	test_limits();
	test_thp_pins();
	test_subuid_range(ATTACKER_UID, SUBUID_BASE, "");
	test_subuid_range(0, SUBUID_ROOT_BASE, "root_container_");
	test_global_limit_spares_root();
	stress_check_zero("counters_zero_after", 0, 0, 15000);
	printf("1..%u\n", tap_count);
	return tap_exit();
}
