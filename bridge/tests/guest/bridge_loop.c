// SPDX-License-Identifier: MIT
/*
 * bridge_loop - libkfdsync in an application's event loop (kfdsync.h,
 * "Event loops", "The relay"), with the hooks and, as bridge_loop_relay,
 * with kfdsync in forced relay mode (hooks=0, tests/guest/kfdsync/relay-mode).
 *
 * - One epoll loop drives many exports of one context: their sync_files and
 *   the context's poll fd are its only waits, every fd is read without
 *   blocking, kfdsync_ctx_dispatch() runs when the poll fd is readable. The
 *   same scenario (most fences signalled by the simulated GPU's RELEASE_MEM
 *   in another order than exported, some ended by their watchdog, some
 *   cancelled) runs for a context of the threads form and one of the
 *   dispatch form (KFDSYNC_CTX_DISPATCH): every fence ends the same way in
 *   both, none before the RELEASE_MEM that signals it ran, and the dispatch
 *   form never has a thread of the library. Without event ages (6.1) the
 *   dispatch form refuses relayed events with -EOPNOTSUPP, as
 *   KFDSYNC_CAP_DISPATCH says beforehand.
 * - Relay mode, dispatch form: nothing relays without kfdsync_ctx_dispatch()
 *   (no hidden thread), the age read counts what amdkfd already delivered,
 *   and an import that sets a KFD event is finished by dispatch.
 * - Relay failures reach the application: an event destroyed under the
 *   relay, and the relay's /dev/kfd failing, end the fences at once with
 *   -ECANCELED and make the poll fd readable; dispatch says why, once.
 * - kfdsync_ctx_get_caps() on hooks and relay (bridge_caps has the rest);
 *   REGISTER's reply carries the source; the import relay thread blocks
 *   every signal, as the export relay's do.
 */
#include <dirent.h>
#include <fcntl.h>
#include <hsakmt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kfd_raw.h"
#include "kfdsim.h"
#include "kfdsync.h"
#include "kmod.h"
#include "pm4.h"
#include "proc_threads.h"
#include "sim_test.h"
#include "tap.h"

#define MS 1000000LL
#define NEV_MAX 128

static int sim = -1;
static uint32_t queue;
static bool relay_mode, ages;
static HsaEvent *events[NEV_MAX];
static int nev;

static int readable(int fd, int ms);

/* How the loop scenario's fence i is meant to end. */
enum { END_SIGNAL, END_WATCHDOG, END_CANCEL };

static int end_kind(int i)
{
	return i % 8 == 7 ? END_WATCHDOG : i % 8 == 6 ? END_CANCEL : END_SIGNAL;
}

static int32_t want_status(int i)
{
	static const int32_t want[] = { [END_SIGNAL] = 1, [END_WATCHDOG] = -ETIMEDOUT,
					[END_CANCEL] = -ECANCELED };

	return want[end_kind(i)];
}

/* What one run of the loop scenario saw. */
struct loop_run {
	int32_t status[NEV_MAX];	/* how each fence ended (0: never) */
	int ended, dispatches, relayed, failures, max_threads, early;
	bool refused;			/* kfdsync_event_add(): -EOPNOTSUPP */
};

static const char *form_name(uint32_t flags)
{
	return flags & KFDSYNC_CTX_DISPATCH ? "dispatch" : "threads";
}

/* The RELEASE_MEM timestamps written just before each event's signal. */
static uint64_t *stamps;

/*
 * One context of the form @flags, every event exported once and ended as
 * end_kind() says, all in one epoll loop that never blocks elsewhere.
 */
static void loop_run(uint32_t flags, struct loop_run *r)
{
	uint32_t dw[NEV_MAX * 24 + 16];
	struct pm4_buf b = PM4_BUF_INIT(dw);
	struct epoll_event evs[64];
	struct kfdsync_ctx *ctx = NULL;
	int fds[NEV_MAX], ep, pfd, i, ret, base;
	int64_t give_up;

	memset(r, 0, sizeof(*r));
	base = proc_threads("", NULL, 0);
	if (kfdsync_ctx_new_flags(&ctx, flags))
		tap_bail("kfdsync_ctx_new_flags(%s)", form_name(flags));
	ep = epoll_create1(EPOLL_CLOEXEC);
	pfd = kfdsync_ctx_get_poll_fd(ctx);
	if (ep < 0 || pfd < 0 ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, pfd, &(struct epoll_event){
			.events = EPOLLIN, .data.u32 = UINT32_MAX }))
		tap_bail("epoll: %s", strerror(errno));
	for (i = 0; i < nev; i++) {
		ret = kfdsync_event_add_hsa(ctx, events[i], NULL);
		if (ret == -EOPNOTSUPP && !i) {
			r->refused = true;
			goto out;
		}
		if (ret)
			tap_bail("kfdsync_event_add_hsa(%d): %s", i, strerror(-ret));
	}
	memset(stamps, 0, NEV_MAX * sizeof(*stamps));
	for (i = 0; i < nev; i++) {
		struct kfdsync_event_state st;
		int64_t watchdog = end_kind(i) == END_WATCHDOG ? 400 * MS : 60000 * MS;

		if (kfdsync_event_get_state(ctx, events[i]->EventId, &st))
			tap_bail("kfdsync_event_get_state");
		fds[i] = kfdsync_event_export_sync_file(ctx, events[i]->EventId, st.age, watchdog);
		if (fds[i] < 0)
			tap_bail("export %d: %s", i, strerror(-fds[i]));
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &(struct epoll_event){
				.events = EPOLLIN, .data.u32 = (uint32_t)i }))
			tap_bail("epoll_ctl: %s", strerror(errno));
		if (end_kind(i) == END_CANCEL)
			kfdsync_event_remove(ctx, events[i]->EventId);
	}
	/* Signalled in the other order, a little apart, each after its timestamp. */
	for (i = nev - 1; i >= 0; i--) {
		if (end_kind(i) != END_SIGNAL)
			continue;
		pm4_sim_delay(&b, 200);
		pm4_release_mem(&b, (uintptr_t)&stamps[i], 0, PM4_RELEASE_MEM_DATA_GPU_CLOCK,
				PM4_RELEASE_MEM_INT_NONE, 0);
		pm4_release_mem_event(&b, events[i]->EventData.HWData2, events[i]->EventId);
	}
	if (kfdsim_submit_buf(sim, queue, &b, NULL))
		tap_bail("kfdsim_submit_buf");

	give_up = kfdsim_now_ns() + 60000 * MS;
	while (r->ended < nev && kfdsim_now_ns() < give_up) {
		int n = epoll_wait(ep, evs, 64, 100);

		for (int k = 0; k < n; k++) {
			uint32_t tag = evs[k].data.u32;
			struct kfdsync_fence_status fs;
			int32_t st = 0;

			if (tag == UINT32_MAX) {
				ret = kfdsync_ctx_dispatch(ctx);
				r->dispatches++;
				if (ret < 0)
					r->failures++;
				else
					r->relayed += ret;
				continue;
			}
			/* Readable: it has ended; never a wait here. */
			if (kfdsync_sync_file_wait_status(fds[tag], 0, &st) || !st)
				continue;
			r->status[tag] = st;
			if (st == 1 && (kfdsync_sync_file_get_status(fds[tag], NULL, &fs, 1) != 1 ||
					!stamps[tag] || fs.timestamp_ns < stamps[tag]))
				r->early++;
			epoll_ctl(ep, EPOLL_CTL_DEL, fds[tag], NULL);
			close(fds[tag]);
			fds[tag] = -1;
			r->ended++;
		}
		ret = proc_threads("", NULL, 0) - base;
		if (ret > r->max_threads)
			r->max_threads = ret;
	}
	for (i = 0; i < nev; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (i = 0; i < nev; i++)
		if (end_kind(i) != END_CANCEL)
			kfdsync_event_remove(ctx, events[i]->EventId);
out:
	close(ep);
	kfdsync_ctx_free(ctx);
}

static void loop_tests(void)
{
	struct kfdsync_caps caps;
	struct kfdsync_ctx *ctx;
	static struct loop_run t, d;
	char why[256] = "";
	bool same = true;
	int i, bad = 0;

	if (kfdsync_ctx_new(&ctx) || kfdsync_ctx_get_caps(ctx, &caps))
		tap_bail("kfdsync_ctx_get_caps");
	kfdsync_caps_why_not(&caps, KFDSYNC_CAP_DISPATCH, why, sizeof(why));
	kfdsync_ctx_free(ctx);

	loop_run(0, &t);
	loop_run(KFDSYNC_CTX_DISPATCH, &d);
	for (i = 0; i < nev; i++)
		bad += t.status[i] != want_status(i);
	tap_ok(t.ended == nev && !bad, "loop_threads_every_fence_ends_as_meant (%d of %d ended, "
	       "%d otherwise)", t.ended, nev, bad);
	tap_ok(!t.early, "loop_threads_never_before_release_mem (%d early)", t.early);
	tap_ok(relay_mode ? t.max_threads > 0 : t.max_threads == 0,
	       "loop_threads_relay_threads_only_in_relay_mode (+%d)", t.max_threads);
	if (d.refused) {
		/* Without event ages: said up front, refused at registration. */
		tap_ok(relay_mode && !ages && !(caps.supported & KFDSYNC_CAP_DISPATCH) &&
		       strstr(why, "no event ages"), "loop_dispatch_refused_without_event_ages (%s)",
		       why);
		for (i = 0; i < 4; i++)
			tap_skip("relay mode without event ages: the dispatch form is refused",
				 "loop_dispatch_%d", i);
		return;
	}
	tap_ok(caps.supported & KFDSYNC_CAP_DISPATCH, "loop_dispatch_capability (%s)", why);
	bad = 0;
	for (i = 0; i < nev; i++) {
		bad += d.status[i] != want_status(i);
		same &= d.status[i] == t.status[i];
	}
	tap_ok(d.ended == nev && !bad, "loop_dispatch_every_fence_ends_as_meant (%d of %d ended, "
	       "%d otherwise)", d.ended, nev, bad);
	tap_ok(!d.early, "loop_dispatch_never_before_release_mem (%d early)", d.early);
	tap_ok(d.max_threads == 0 && !d.failures &&
	       (relay_mode ? d.relayed >= nev * 6 / 8 && d.dispatches > 0 : d.dispatches == 0),
	       "loop_dispatch_no_library_thread (+%d threads, %d dispatches relayed %d, "
	       "%d failures)", d.max_threads, d.dispatches, d.relayed, d.failures);
	tap_ok(same, "loop_same_fences_end_the_same_way_in_both_forms");
}

/*
 * The device fd is not for polling (no .poll: poll() always says ready,
 * epoll refuses it, as kfdsync.h says); the poll fd is, and says nothing
 * while nothing failed.
 */
static void poll_fd_tests(void)
{
	struct kfdsync_ctx *ctx;
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC), dev_err, pfd, pfd2;

	if (kfdsync_ctx_new(&ctx) || ep < 0)
		tap_bail("context");
	dev_err = epoll_ctl(ep, EPOLL_CTL_ADD, kfdsync_ctx_fd(ctx), &ev) ? errno : 0;
	pfd = kfdsync_ctx_get_poll_fd(ctx);
	pfd2 = kfdsync_ctx_get_poll_fd(ctx);
	/* poll() of a file without .poll: always "ready", so it tells nothing. */
	tap_ok(dev_err == EPERM && readable(kfdsync_ctx_fd(ctx), 0) && pfd >= 0 && pfd2 == pfd &&
	       !epoll_ctl(ep, EPOLL_CTL_ADD, pfd, &ev) && !readable(pfd, 0) &&
	       (fcntl(pfd, F_GETFD) & FD_CLOEXEC) && kfdsync_ctx_dispatch(ctx) == 0,
	       "ctx_fd_not_pollable_poll_fd_is (device: %s)", strerror(dev_err));
	close(ep);
	kfdsync_ctx_free(ctx);
}

static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* 1 signalled, 0 pending, -errno ended with an error; 98: not a sync_file. */
static int32_t status_of(int fd)
{
	int32_t st = 99;
	int ret = kfdsync_sync_file_wait_status(fd, 0, &st);

	return ret == -ETIME ? 0 : ret ? 98 : st;
}

/*
 * Relay mode, dispatch form: the caller's thread does the relay's work,
 * nobody else: a signal is not counted until dispatch, the age read first
 * counts it, and a relayed import's event is set by dispatch.
 */
static void dispatch_relay_tests(void)
{
	const char *why = !relay_mode ? "hooks mode: nothing to relay" :
			  !ages ? "no event ages: the dispatch form is refused" : NULL;
	struct kfdsync_event_state st;
	struct kfdsync_timeline *tl = NULL;
	struct kfdsync_ctx *ctx = NULL;
	HsaEvent *ev = events[0], *set = NULL;
	int fd, tf, pfd, ret, n = 0, before, after;

	if (why) {
		for (int i = 0; i < 3; i++)
			tap_skip(why, "dispatch_relay_%d", i);
		return;
	}
	if (kfdsync_ctx_new_flags(&ctx, KFDSYNC_CTX_DISPATCH) ||
	    kfdsync_event_add_hsa(ctx, ev, NULL))
		tap_bail("dispatch context");
	pfd = kfdsync_ctx_get_poll_fd(ctx);
	fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 60000 * MS);
	hsaKmtSetEvent(ev);
	/* The tick comes, but nobody dispatches: the fence waits for us. */
	ret = readable(pfd, 5000);
	usleep(200000);
	before = status_of(fd);
	n = kfdsync_ctx_dispatch(ctx);
	after = status_of(fd);
	tap_ok(ret && before == 0 && n == 1 && after == 1,
	       "dispatch_relays_on_the_callers_thread_only (readable %d, fence %d, dispatch %d, "
	       "fence %d)", ret, before, n, after);
	close(fd);

	/* A signal nobody dispatched yet is counted before the age is read. */
	hsaKmtSetEvent(ev);
	ret = kfdsync_event_get_state(ctx, ev->EventId, &st);
	tap_ok(!ret && st.age == 2, "dispatch_get_state_counts_what_amdkfd_delivered (age %llu)",
	       (unsigned long long)st.age);
	kfdsync_event_remove(ctx, ev->EventId);

	/* A relayed import: its event is set by dispatch, after the fence ended. */
	set = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (kfdsync_timeline_new(&tl) || !set)
		tap_bail("timeline or event");
	tf = kfdsync_timeline_create_fence(tl, 1, "import");
	ret = kfdsync_import_to_event(ctx, tf, set->EventId);
	close(tf);
	kfdsync_timeline_inc(tl, 1);
	/* An event loop: until dispatch handled the import, its event stays unset. */
	n = 0;
	for (int i = 0; !ret && !n && i < 50; i++) {
		if (!readable(pfd, 100))
			continue;
		if (hsaKmtWaitOnEvent(set, 0) == HSAKMT_STATUS_SUCCESS)
			ret = -EALREADY;
		else
			n = kfdsync_ctx_dispatch(ctx);
	}
	if (!ret)
		ret = hsaKmtWaitOnEvent(set, 1000) == HSAKMT_STATUS_SUCCESS ? 0 : -ENOENT;
	tap_ok(!ret && n == 1 && proc_threads("kfdsync-", NULL, 0) == 0,
	       "dispatch_sets_relayed_import_event (%d, %d handled)", ret, n);
	kfdsync_timeline_free(tl);
	hsaKmtDestroyEvent(set);
	kfdsync_ctx_free(ctx);
}

/* The /dev/kfd fds of this process, as a bit set of fd numbers below 1024. */
static void kfd_fds(uint8_t *set)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	memset(set, 0, 128);
	while (d && (e = readdir(d))) {
		char path[300], target[64];
		int fd = atoi(e->d_name);
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0 && fd < 1024) {
			target[n] = '\0';
			if (!strcmp(target, "/dev/kfd"))
				set[fd / 8] |= 1u << (fd % 8);
		}
	}
	if (d)
		closedir(d);
}

/*
 * Relay failures, per form: an event destroyed under the relay, then the
 * relay's /dev/kfd failing (replaced by /dev/null under it). Each ends the
 * fences at once (-ECANCELED, long before their watchdog), makes the poll
 * fd readable, and dispatch returns the errno once.
 */
static void failure_tests(uint32_t flags)
{
	const char *form = form_name(flags);
	const char *why = !relay_mode ? "hooks mode: no relay to fail" :
			  (flags & KFDSYNC_CTX_DISPATCH) && !ages ?
			  "no event ages: the dispatch form is refused" : NULL;
	uint8_t before[128], after[128];
	struct kfdsync_ctx *ctx = NULL;
	HsaEvent *doomed, *ev = events[1];
	int fd, pfd, ret, again, relay_fd = -1, null;
	uint32_t id;

	if (why) {
		tap_skip(why, "relay_failure_%s_destroyed_event", form);
		tap_skip(why, "relay_failure_%s_kfd_fd", form);
		return;
	}
	doomed = create_event(HSA_EVENTTYPE_SIGNAL, false);
	kfd_fds(before);
	if (!doomed || kfdsync_ctx_new_flags(&ctx, flags) ||
	    kfdsync_event_add_hsa(ctx, doomed, NULL))
		tap_bail("failure context");
	pfd = kfdsync_ctx_get_poll_fd(ctx);
	fd = kfdsync_event_export_sync_file(ctx, doomed->EventId, 0, 60000 * MS);
	/* Against the rules: destroyed while registered (and relayed). */
	id = doomed->EventId;
	hsaKmtDestroyEvent(doomed);
	ret = 0;
	for (int i = 0; ret >= 0 && i < 100; i++)
		ret = readable(pfd, 100) ? kfdsync_ctx_dispatch(ctx) : 0;
	again = kfdsync_ctx_dispatch(ctx);
	tap_ok(ret == -EIDRM && again >= 0 && readable(fd, 0) && status_of(fd) == -ECANCELED &&
	       kfdsync_event_remove(ctx, id) == -ENOENT,
	       "relay_failure_%s_destroyed_event (dispatch %d then %d, fence %d)", form, ret,
	       again, status_of(fd));
	close(fd);

	/* The relay's own /dev/kfd: the one that appeared with the first relay. */
	kfd_fds(after);
	for (int i = 0; i < 1024 && relay_fd < 0; i++)
		if ((after[i / 8] & ~before[i / 8]) & (1u << (i % 8)))
			relay_fd = i;
	ret = kfdsync_event_add_hsa(ctx, ev, NULL);
	fd = ret ? ret : kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 60000 * MS);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (relay_fd >= 0 && fd >= 0 && null >= 0 && dup3(null, relay_fd, O_CLOEXEC) == relay_fd) {
		/* A waiting thread sees it at its next wait: wake it. */
		if (!(flags & KFDSYNC_CTX_DISPATCH))
			hsaKmtSetEvent(ev);
		ret = 0;
		for (int i = 0; ret >= 0 && i < 100; i++)
			ret = readable(pfd, 100) ? kfdsync_ctx_dispatch(ctx) : 0;
	} else {
		ret = -EBADFD;
	}
	/* The fence may have signalled first (threads form: the wake-up was relayed). */
	tap_ok(ret == -ENOTTY && readable(fd, 10000) && status_of(fd) != 0 &&
	       kfdsync_event_remove(ctx, ev->EventId) == -ENOENT,
	       "relay_failure_%s_kfd_fd (relay fd %d, dispatch %d, fence %d)", form, relay_fd,
	       ret, fd >= 0 ? status_of(fd) : fd);
	if (null >= 0)
		close(null);
	if (fd >= 0)
		close(fd);
	kfdsync_ctx_free(ctx);
}

/* What kfdsync_ctx_get_caps() says here, and why not. */
static void caps_tests(void)
{
	struct kfdsync_module_info mi;
	struct kfdsync_caps caps;
	struct kfdsync_ctx *ctx;
	char why[256];
	bool deadline, eventfd;

	if (kfdsync_ctx_new(&ctx) || kfdsync_ctx_get_caps(ctx, &caps) ||
	    kfdsync_ctx_get_module_info(ctx, &mi))
		tap_bail("caps");
	deadline = mi.kernel_version >= 0x060400;
	eventfd = mi.kernel_version >= 0x060600;
	tap_ok(!!(caps.supported & KFDSYNC_CAP_HOOKS) == !relay_mode &&
	       caps.source == (relay_mode ? KFDSYNC_SOURCE_RELAY : KFDSYNC_SOURCE_HOOKS) &&
	       kfdsync_caps_why_not(&caps, KFDSYNC_CAP_HOOKS, why, sizeof(why)) == !relay_mode &&
	       (!relay_mode || (caps.relay_reason == KFDSYNC_RELAY_FORCED && strstr(why, "relay"))),
	       "caps_source_%s (%s)", relay_mode ? "relay" : "hooks", why);
	/* An amdkfd process already (hsaKmtOpenKFD()): /dev/kfd probed without asking. */
	tap_ok((caps.supported & (KFDSYNC_CAP_EVENTS | KFDSYNC_CAP_HSA | KFDSYNC_CAP_IMPORT |
				  KFDSYNC_CAP_TIMELINES | KFDSYNC_CAP_MODULE_ABI)) ==
	       (KFDSYNC_CAP_EVENTS | KFDSYNC_CAP_HSA | KFDSYNC_CAP_IMPORT | KFDSYNC_CAP_TIMELINES |
		KFDSYNC_CAP_MODULE_ABI) &&
	       caps.kfd_version && !caps.kfd_error, "caps_module_and_amdkfd (%#x, KFD %u.%u)",
	       caps.supported, caps.kfd_version >> 16, caps.kfd_version & 0xffff);
	kfdsync_caps_why_not(&caps, KFDSYNC_CAP_DEADLINE, why, sizeof(why));
	/* The syncobj eventfd also needs a render node with timelines: bridge_caps. */
	tap_ok(!!(caps.supported & KFDSYNC_CAP_DEADLINE) == deadline &&
	       (!(caps.supported & KFDSYNC_CAP_SYNCOBJ_EVENTFD) || eventfd) &&
	       (deadline || strstr(why, "SYNC_IOC_SET_DEADLINE")), "caps_kernel_features (%s)",
	       deadline ? "6.4+" : why);
	/* The gate's verdict: a match with the hooks, nothing checked with hooks=N. */
	kfdsync_caps_why_not(&caps, KFDSYNC_CAP_AMDKFD_ABI, why, sizeof(why));
	tap_ok(relay_mode ? !(caps.supported & KFDSYNC_CAP_AMDKFD_ABI) &&
			    caps.amdkfd_verdict == KFDSYNC_AMDKFD_ABI_UNCHECKED &&
			    strstr(why, "not checked") && caps.amdkfd_reason[0] :
			    (caps.supported & KFDSYNC_CAP_AMDKFD_ABI) &&
			    caps.amdkfd_verdict == KFDSYNC_AMDKFD_ABI_MATCH && caps.amdkfd_abi[0],
	       "caps_amdkfd_abi_gate (%u, ABI \"%s\", %s)", caps.amdkfd_verdict, caps.amdkfd_abi,
	       relay_mode ? why : "matched");
	/* The dispatch form: with the hooks always; in relay mode with event ages. */
	tap_ok(!!(caps.supported & KFDSYNC_CAP_DISPATCH) == (!relay_mode || ages),
	       "caps_dispatch_%s", !relay_mode ? "hooks" : ages ? "ages" : "no_ages");
	kfdsync_ctx_free(ctx);
}

/*
 * An event the hooks cannot watch (inject "unwatchable": what a process
 * whose signal page kfdsync cannot find would get) is registered with the
 * relay in hooks mode, and the library relays it in either form: a CPU set
 * reaches its fence. The dispatch form needs event ages to relay (6.5+).
 */
static void unwatchable_tests(uint32_t flags)
{
	const char *form = form_name(flags);
	struct kfdsync_event_state st;
	struct kfdsync_caps caps;
	struct kfdsync_ctx *ctx;
	HsaEvent *ev = events[4];
	int fd, ret, n = 0;
	char why[256];

	if (relay_mode) {
		tap_skip("relay mode: every event is relayed", "unwatchable_%s_caps_before", form);
		tap_skip("relay mode: every event is relayed", "unwatchable_%s_caps", form);
		tap_skip("relay mode: every event is relayed", "unwatchable_%s_relayed", form);
		return;
	}
	if (kfdsync_ctx_new_flags(&ctx, flags) || kfdsync_ctx_get_caps(ctx, &caps))
		tap_bail("context");
	if (kfdsync_inject("unwatchable"))
		tap_bail("inject unwatchable");
	tap_ok(caps.supported & KFDSYNC_CAP_HOOKS_WATCH, "unwatchable_%s_caps_before", form);
	kfdsync_ctx_get_caps(ctx, &caps);
	kfdsync_caps_why_not(&caps, KFDSYNC_CAP_HOOKS_WATCH, why, sizeof(why));
	tap_ok(!(caps.supported & KFDSYNC_CAP_HOOKS_WATCH) && strstr(why, "relayed") &&
	       !!(caps.supported & KFDSYNC_CAP_DISPATCH) == ages,
	       "unwatchable_%s_caps (%s)", form, why);
	ret = kfdsync_event_add(ctx, ev->EventId, 0, NULL);
	kfdsync_inject("watchable");
	if (flags & KFDSYNC_CTX_DISPATCH && !ages) {
		tap_ok(ret == -EOPNOTSUPP, "unwatchable_%s_relayed (no event ages: %d)", form, ret);
		kfdsync_ctx_free(ctx);
		return;
	}
	kfdsync_event_get_state(ctx, ev->EventId, &st);
	fd = kfdsync_event_export_sync_file(ctx, ev->EventId, 0, 60000 * MS);
	hsaKmtSetEvent(ev);
	for (int i = 0; flags & KFDSYNC_CTX_DISPATCH && !n && i < 50; i++)
		if (readable(kfdsync_ctx_get_poll_fd(ctx), 100))
			n = kfdsync_ctx_dispatch(ctx);
	ret = ret ? ret : readable(fd, 5000) ? status_of(fd) : 0;
	tap_ok(ret == 1 && st.source == KFDSYNC_SOURCE_RELAY,
	       "unwatchable_%s_relayed (source %u, fence %d)", form, st.source, ret);
	close(fd);
	kfdsync_event_remove(ctx, ev->EventId);
	kfdsync_ctx_free(ctx);
}

/* REGISTER's reply: the source in one call, old callers unchanged. */
static void register_reply_tests(void)
{
	uint32_t src = relay_mode ? KFDSYNC_REGISTER_RELAY : KFDSYNC_REGISTER_HOOKS;
	HsaEvent *ev = events[2];
	struct kfdsync_event_register a = { .event_id = ev->EventId,
					    .slot_addr = ev->EventData.HWData2,
					    .flags = KFDSYNC_REGISTER_REPORT, .age = 7 };
	struct kfdsync_event_unregister u = { .event_id = ev->EventId };
	int c = open("/dev/kfdsync", O_RDWR | O_CLOEXEC), r1, r2, r3;
	uint32_t f1, f2;

	r1 = ioctl(c, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
	f1 = a.flags;
	tap_ok(!r1 && f1 == (KFDSYNC_REGISTER_REPORT | src) && a.age == 0,
	       "register_reply_has_source (%d, flags %#x)", r1, f1);
	/* The same struct again: the out bits are ignored on the way in. */
	ioctl(c, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u);
	r2 = ioctl(c, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
	f2 = a.flags;
	ioctl(c, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u);
	a.flags = 0;
	r3 = ioctl(c, KFDSYNC_IOCTL_EVENT_REGISTER, &a);
	tap_ok(!r2 && f2 == f1 && !r3 && a.flags == 0,
	       "register_reply_reused_struct_and_old_callers (%d %#x, %d %#x)", r2, f2, r3,
	       a.flags);
	ioctl(c, KFDSYNC_IOCTL_EVENT_UNREGISTER, &u);
	a.flags = 8;
	tap_errno(ioctl(c, KFDSYNC_IOCTL_EVENT_REGISTER, &a), EINVAL, "register_unknown_flag_8");
	close(c);
}

/* glibc's internal signals 32 and 33, as bits of a SigBlk mask. */
#define GLIBC_SIGS	(3ULL << 31)

/* The signal mask of the first thread named @name ("" if none), from its status. */
static void sigblk_of(const char *name, char *out, size_t size)
{
	struct proc_thread t[64];
	int n = proc_threads(name, t, 64);

	out[0] = '\0';
	for (int i = 0; i < n && i < 64 && !out[0]; i++) {
		char path[64], line[128];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/status", t[i].tid);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "SigBlk: %63s", out) == 1)
				break;
		if (f)
			fclose(f);
	}
	(void)size;
}

/* The threads form's import relay thread blocks all signals, like the export relay's. */
static void import_thread_signals(void)
{
	struct kfdsync_timeline *tl = NULL;
	struct kfdsync_ctx *ctx = NULL;
	char imp[64], rel[64];
	int tf, ret;

	if (!relay_mode) {
		tap_skip("hooks mode: imports set events in the kernel, no thread",
			 "import_relay_thread_blocks_all_signals");
		return;
	}
	if (kfdsync_ctx_new(&ctx) || kfdsync_timeline_new(&tl) ||
	    kfdsync_event_add_hsa(ctx, events[3], NULL))
		tap_bail("import context");
	tf = kfdsync_timeline_create_fence(tl, 1, NULL);
	ret = kfdsync_import_to_event(ctx, tf, events[4]->EventId);
	close(tf);
	proc_threads_settled("kfdsync-import", 1);
	sigblk_of("kfdsync-import", imp, sizeof(imp));
	sigblk_of("kfdsync-relay", rel, sizeof(rel));
	/*
	 * Compared without glibc's own signals 32 and 33 (SIGCANCEL,
	 * SIGSETXID): a thread reads them blocked until its start routine
	 * runs (a run once read fffffffffffbfeff against fffffffe7ffbfeff).
	 */
	tap_ok(!ret && imp[0] && rel[0] &&
	       (strtoull(imp, NULL, 16) & ~GLIBC_SIGS) == (strtoull(rel, NULL, 16) & ~GLIBC_SIGS) &&
	       strtoull(imp, NULL, 16) & (1ULL << (SIGINT - 1)),
	       "import_relay_thread_blocks_all_signals (import %s, relay %s)", imp, rel);
	kfdsync_timeline_free(tl);
	kfdsync_ctx_free(ctx);
}

int main(void)
{
	struct kfdsync_module_info mi;
	struct kfdsync_ctx *ctx;
	int kfd;

	scrub_hsa_env();
	require_sim_guest();
	tap_plan(31);
	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		tap_bail("hsaKmtOpenKFD");
	if (kfdsync_ctx_new(&ctx) || kfdsync_ctx_get_module_info(ctx, &mi))
		tap_bail("kfdsync context");
	kfdsync_ctx_free(ctx);
	relay_mode = mi.flags & KFDSYNC_INFO_RELAY_FORCED;
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	ages = kfd >= 0 && kfd_raw_has_event_age(kfd);
	if (kfd >= 0)
		close(kfd);
	tap_diag("kfdsync in %s mode, amdkfd %s event ages", relay_mode ? "relay" : "hooks",
		 ages ? "with" : "without");
	/* Without event ages every relayed event has a thread: fewer of them. */
	nev = relay_mode && !ages ? 32 : NEV_MAX;
	for (int i = 0; i < nev; i++) {
		events[i] = create_event(HSA_EVENTTYPE_SIGNAL, false);
		if (!events[i])
			tap_bail("hsaKmtCreateEvent %d", i);
	}
	stamps = calloc(NEV_MAX, sizeof(*stamps));
	/* 6.16+: a process without a GPU has no pasid for the simulator. */
	tap_skip_rest_if("KFDSYNC_SIM_UNUSABLE");
	sim = kfdsim_open();
	if (!stamps || sim < 0 || kfdsim_queue_create(sim, 16384, &queue, NULL))
		tap_bail("kfdsim");

	loop_tests();
	poll_fd_tests();
	dispatch_relay_tests();
	failure_tests(0);
	failure_tests(KFDSYNC_CTX_DISPATCH);
	caps_tests();
	unwatchable_tests(0);
	unwatchable_tests(KFDSYNC_CTX_DISPATCH);
	register_reply_tests();
	import_thread_signals();

	kfdsim_queue_destroy(sim, queue);
	close(sim);
	for (int i = 0; i < nev; i++)
		hsaKmtDestroyEvent(events[i]);
	hsaKmtCloseKFD();
	return tap_exit();
}
