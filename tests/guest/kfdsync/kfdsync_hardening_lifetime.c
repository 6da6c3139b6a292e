// SPDX-License-Identifier: MIT
/*
 * kfdsync_hardening_lifetime: when contexts, registrations and amdkfd come
 * and go (issue 25).
 *
 * How this program works (see kfdsync_hardening.h): closing a context waits
 * for its own imports in progress, never for another context's; a process
 * that exits with many contexts ends the fences of every one; a GPU reset
 * (injected through <debugfs>/kfdsync/inject: no GPU here) ends every
 * watched process's fences with -EIO, from a worker; the exact condition
 * the uAPI header states for an event amdkfd destroys while it is being
 * registered; a CPU set through a /dev/kfd descriptor kept across execve()
 * counts only in the setter's own address space; and, last, a context
 * opened before amdgpu unloads registers events again once amdgpu is back. Tests register themselves
 * (tests/common/harness.h); the program runs itself again as a child
 * (tests/common/child.h) where a test needs another process.
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "kfd_raw.h"
#include "sim_test.h"
#include "kfdsync_hardening.h"

#define INJECT			"/sys/kernel/debug/kfdsync/inject"
#define N_IMPORTS		4096
#define N_CONTEXTS		16

enum { MSG_READY = 1, MSG_FDS, MSG_RESULT, MSG_EXIT };

static int import_set_event(int ctx, int fence, uint32_t id, int efd)
{
	struct kfdsync_import imp = {
		.fd = fence, .flags = KFDSYNC_IMPORT_SET_EVENT | KFDSYNC_IMPORT_EVENTFD,
		.event_id = id, .eventfd = efd,
	};

	return raw_ioctl(ctx, KFDSYNC_IOCTL_IMPORT_SYNC_FILE, &imp);
}

static uint64_t eventfd_take(int efd)
{
	uint64_t v = 0;

	return read(efd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

/* ---- closing waits for the context's own imports only ---- */

/*
 * Context B has an import of a fence queued first, then A thousands more of
 * the same fence; the fence signals and B closes at once. B's close returns
 * with its own import done, long before A's are. The test runs SCHED_FIFO
 * meanwhile: the import workers run at high priority and would otherwise
 * keep it off both CPUs until all were done. The timelines' fences get a
 * 10-minute watchdog: on the debug kernel the imports took more than the
 * default 10 s, and the watchdog then ended B's second fence, whose
 * import was to be cancelled.
 */
TEST(close_waits_only_for_own_imports)
{
	int a, b, tl, fence, tl2, other, efd_a, efd_b, ret = 0, i;
	uint64_t done_a = 0, done_b = 0;
	char saved[32] = "1024", wd[32] = "10000", wd_max[32] = "60000";
	HsaEvent *ev = new_event();
	int64_t end;

	kfdsync_param_read("max_imports", saved, sizeof(saved));
	kfdsync_param_read("watchdog_ms", wd, sizeof(wd));
	kfdsync_param_read("watchdog_max_ms", wd_max, sizeof(wd_max));
	param_set("max_imports", N_IMPORTS);
	param_set("watchdog_max_ms", 600000);
	param_set("watchdog_ms", 600000);
	a = open_kfdsync();
	b = open_kfdsync();
	kfdsync_param_write("max_imports", saved);
	tl = raw_open(KFDSYNC_TL_DEVICE);
	tl2 = raw_open(KFDSYNC_TL_DEVICE);
	kfdsync_param_write("watchdog_ms", wd);
	kfdsync_param_write("watchdog_max_ms", wd_max);
	fence = raw_tl_fence(tl, 1);
	other = raw_tl_fence(tl2, 1);
	efd_a = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	efd_b = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (tl < 0 || tl2 < 0 || fence < 0 || other < 0 || efd_a < 0 || efd_b < 0)
		tap_bail("set-up: %s", strerror(errno));

	/* B's first, so that its work is queued before A's. */
	ret = import_set_event(b, fence, ev->EventId, efd_b);
	if (!ret)
		ret = import_set_event(b, other, ev->EventId, efd_b);	/* cancelled */
	for (i = 0; i < N_IMPORTS && !ret; i++)
		ret = import_set_event(a, fence, ev->EventId, efd_a);
	tap_ret(ret, 0, "imports_made (%d)", i);

	if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){ .sched_priority = 10 }))
		tap_diag("SCHED_FIFO: %s", strerror(errno));
	raw_tl_inc(tl, 1);
	close(b);
	done_b = eventfd_take(efd_b);
	done_a = eventfd_take(efd_a);
	sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ .sched_priority = 0 });
	tap_ok(done_b == 1, "close_waits_for_its_own_import (%" PRIu64 " done, 1 expected)",
	       done_b);
	tap_ok(done_a < N_IMPORTS,
	       "close_does_not_wait_for_other_contexts_imports (%" PRIu64 " of %d done)",
	       done_a, N_IMPORTS);
	end = raw_now_ns() + 3 * WAIT_MS * MS;
	while (done_a < N_IMPORTS && raw_now_ns() < end) {
		usleep(10000);
		done_a += eventfd_take(efd_a);
	}
	tap_ok(done_a == N_IMPORTS, "other_contexts_imports_all_done (%" PRIu64 ")", done_a);
	tap_ok(eventfd_take(efd_b) == 0, "cancelled_import_never_done");

	close(a);
	close(efd_a);
	close(efd_b);
	close(fence);
	close(other);
	close(tl);
	close(tl2);
	hsaKmtDestroyEvent(ev);
}

/* ---- a process exiting with many contexts ---- */

/* Opens N_CONTEXTS contexts, a pending fence in each, hands them over, exits. */
static int child_contexts(int sock)
{
	int fds[2 * N_CONTEXTS], i;
	HsaEvent *ev;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS)
		return 10;
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!ev)
		return 11;
	for (i = 0; i < N_CONTEXTS; i++) {
		fds[i] = raw_open(RAW_KFDSYNC_DEV);
		if (fds[i] < 0 || raw_register(fds[i], ev->EventId, slot_addr(ev)))
			return 12;
		fds[N_CONTEXTS + i] = raw_export(fds[i], ev->EventId, 0, 0);
		if (fds[N_CONTEXTS + i] < 0)
			return 13;
	}
	msg_send(sock, MSG_FDS, 0, fds, 2 * N_CONTEXTS);
	/* Exit with everything still open (no leak check: that is the point). */
	_exit(0);
}

TEST(exit_ends_every_contexts_fences)
{
	int sock, fds[2 * N_CONTEXTS], code, i, ended = 0;
	unsigned int n = 0;
	struct msg m;
	pid_t pid = spawn_child("contexts", &sock);

	if (!msg_recv(sock, &m, fds, &n) || m.cmd != MSG_FDS || n != 2 * N_CONTEXTS)
		tap_bail("contexts child failed (status %d)", reap(pid));
	code = reap(pid);
	tap_ret(code, 0, "child_with_%d_contexts_exits", N_CONTEXTS);
	/* Its address space is gone; the files live on here. */
	for (i = 0; i < N_CONTEXTS; i++) {
		raw_wait(fds[N_CONTEXTS + i], WAIT_MS);
		ended += raw_fence_status(fds[N_CONTEXTS + i]) == -ECANCELED;
	}
	tap_ok(ended == N_CONTEXTS, "every_contexts_fence_ecanceled (%d of %d)", ended,
	       N_CONTEXTS);
	for (i = 0; i < 2 * N_CONTEXTS; i++)
		close(fds[i]);
	close(sock);
}

/* ---- amdkfd freeing a process with thousands of watched slots ---- */

#define N_SLOTS			4000

/* Registers N_SLOTS events in one context, hands it over, exits. */
static int child_slots(int sock)
{
	int ctx = raw_open(RAW_KFDSYNC_DEV), i;
	HsaEvent *ev;

	if (hsaKmtOpenKFD() != HSAKMT_STATUS_SUCCESS || ctx < 0)
		return 10;
	for (i = 0; i < N_SLOTS; i++) {
		ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
		if (!ev || raw_register(ctx, ev->EventId, slot_addr(ev)))
			return 11;
	}
	msg_send(sock, MSG_FDS, 0, &ctx, 1);
	_exit(0);
}

/*
 * amdkfd frees a process whose context (kept open elsewhere) watches 4000
 * slots: the free hook runs with preemption off and only makes the process
 * unreachable; its slots end from a worker (issue 35, item 3). The hook's
 * longest hold stays under 2 ms (ending the 4000 slots in the hook took
 * 12 ms under TCG). The least of three tries counts: the host may preempt
 * the guest's CPU for a while in any one of them.
 */
TEST(free_hook_does_not_walk_slots)
{
	int sock, ctx, code, before, procs = 0, try;
	long long held[3], least = LLONG_MAX;
	int64_t end;
	unsigned int n;
	struct msg m;
	pid_t pid;

	before = kfdsync_slots(NULL);
	for (try = 0; try < 3; try++) {
		n = 0;
		ctx = -1;
		pid = spawn_child("slots", &sock);
		if (!msg_recv(sock, &m, &ctx, &n) || m.cmd != MSG_FDS || n != 1)
			tap_bail("slots child failed (status %d)", reap(pid));
		write_text("/sys/kernel/debug/kfdsync/slots", "0");
		code = reap(pid);
		if (code)
			tap_bail("slots child: status %d", code);
		/* amdkfd frees the process from a worker of its own, soon after. */
		end = raw_now_ns() + WAIT_MS * MS;
		while ((procs = kfdsync_slots(held)) > before && raw_now_ns() < end)
			usleep(10000);
		if (held[2] >= 0 && held[2] < least)
			least = held[2];
		close(ctx);
		close(sock);
	}
	tap_ok(procs == before, "freed_process_leaves_the_slot_layer (%d, %d before)", procs,
	       before);
	tap_ok(least < 2000000, "free_hook_held_under_2ms (%lld ns, least of 3)", least);
}

/* ---- a GPU reset (injected) ---- */

TEST(reset_ends_fences_from_a_worker)
{
	HsaEvent *ev = registered_event(), *fresh;
	struct kfdsync_event_query q = { 0 };
	int fence, born, ret, f2;

	fence = raw_export(kfdsync, ev->EventId, 0, 0);
	ret = write_text(INJECT, "reset");
	tap_ret(ret, 0, "inject_reset");
	raw_wait(fence, WAIT_MS);
	tap_ret(raw_fence_status(fence), -EIO, "reset_fence_eio");
	tap_ret(raw_query(kfdsync, ev->EventId, &q) ? -1 : q.error, -EIO, "reset_sticky_eio");
	born = raw_export(kfdsync, ev->EventId, raw_age(kfdsync, ev->EventId), 0);
	tap_ret(born >= 0 ? raw_fence_status(born) : born, -EIO, "export_after_reset_born_eio");
	/* The process is not dead: a new registration counts as usual. */
	fresh = registered_event();
	f2 = raw_export(kfdsync, fresh->EventId, 0, 0);
	hsaKmtSetEvent(fresh);
	raw_wait(f2, WAIT_MS);
	tap_ret(raw_fence_status(f2), 1, "registration_after_reset_signals");
	close(f2);
	close(born);
	close(fence);
	raw_unregister(kfdsync, fresh->EventId);
	raw_unregister(kfdsync, ev->EventId);
	hsaKmtDestroyEvent(fresh);
	hsaKmtDestroyEvent(ev);
}

/* ---- an event amdkfd destroys while it is being registered ---- */

/*
 * kfdsync does not ask amdkfd whether the id names an event: a registration
 * of an id whose event was destroyed follows the next event amdkfd gives
 * that id (the uAPI header, KFDSYNC_IOCTL_EVENT_REGISTER).
 */
TEST(register_destroyed_id_follows_next_event)
{
	HsaEvent *ev = new_event(), *fresh;
	uint32_t id = ev->EventId;
	uint64_t slot = slot_addr(ev);

	hsaKmtDestroyEvent(ev);
	tap_ret(raw_register(kfdsync, id, slot), 0, "register_destroyed_id_accepted");
	fresh = new_event();
	if (fresh->EventId != id) {
		tap_skip("amdkfd gave another id", "destroyed_id_follows_next_event");
	} else {
		hsaKmtSetEvent(fresh);
		tap_ok(age_reaches(id, 1, WAIT_MS), "destroyed_id_follows_next_event (age %" PRIu64 ")",
		       raw_age(kfdsync, id));
	}
	raw_unregister(kfdsync, id);
	hsaKmtDestroyEvent(fresh);
}

struct race {
	HsaEvent *ev, *fresh;
	int64_t destroy_ns;
	unsigned int delay_us;
	pthread_barrier_t go;
};

static void *race_destroy(void *arg)
{
	struct race *r = arg;

	pthread_barrier_wait(&r->go);
	if (r->delay_us)
		usleep(r->delay_us);
	r->destroy_ns = raw_now_ns();
	hsaKmtDestroyEvent(r->ev);
	r->fresh = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (r->fresh)
		hsaKmtSetEvent(r->fresh);
	return NULL;
}

/*
 * One thread registers event X and exports a fence while another destroys
 * X, creates an event that takes its id and sets it. The promise holds
 * exactly when the destroy started after the registration returned: the
 * fence never signals then. Before that, either outcome is allowed.
 */
TEST(destroy_during_register_exact_condition)
{
	unsigned int i, after = 0, before = 0, followed = 0, violations = 0, refused = 0;
	struct race r;
	pthread_t t;

	for (i = 0; i < 200; i++) {
		int64_t registered_ns;
		int ret, fence = -1, status;
		uint64_t slot;
		uint32_t id;

		memset(&r, 0, sizeof(r));
		r.ev = new_event();
		r.delay_us = i % 50;
		id = r.ev->EventId;
		slot = slot_addr(r.ev);	/* the thread frees r.ev */
		pthread_barrier_init(&r.go, NULL, 2);
		pthread_create(&t, NULL, race_destroy, &r);
		pthread_barrier_wait(&r.go);
		ret = raw_register(kfdsync, id, slot);
		registered_ns = raw_now_ns();
		if (!ret)
			fence = raw_export(kfdsync, id, 0, 0);
		pthread_join(t, NULL);
		pthread_barrier_destroy(&r.go);
		if (ret || fence < 0) {
			refused++;
		} else {
			raw_wait(fence, 100);
			status = raw_fence_status(fence);
			if (r.destroy_ns > registered_ns) {
				after++;
				violations += status != -ECANCELED;
			} else {
				before++;
				followed += status == 1;
			}
			close(fence);
		}
		raw_unregister(kfdsync, id);
		if (r.fresh)
			hsaKmtDestroyEvent(r.fresh);
	}
	tap_diag("destroy after the registration returned: %u; before: %u (%u followed the "
		 "new event); registration refused: %u", after, before, followed, refused);
	tap_ok(!violations, "destroy_after_register_never_signals (%u violations in %u)",
	       violations, after);
}

/* ---- a CPU set through a /dev/kfd descriptor kept across execve() ---- */

/*
 * The image before execve(): a /dev/kfd of its own (kept across exec) with
 * a signal event; then this program again, told the descriptor and the id.
 */
static int child_exec_old(int sock)
{
	struct kfd_raw_create_event_args ce = { .event_type = KFD_RAW_EVENT_SIGNAL,
						.auto_reset = 1 };
	char fd_arg[16], id_arg[16], sock_arg[16];
	int kfd = open("/dev/kfd", O_RDWR);

	if (kfd < 0 || ioctl(kfd, KFD_RAW_IOC_CREATE_EVENT, &ce))
		return 10;
	msg_send(sock, MSG_READY, (int32_t)ce.event_id, NULL, 0);
	snprintf(fd_arg, sizeof(fd_arg), "%d", kfd);
	snprintf(id_arg, sizeof(id_arg), "%u", ce.event_id);
	snprintf(sock_arg, sizeof(sock_arg), "%d", sock);
	execl(self_exe(), self_exe(), "--exec-new", fd_arg, id_arg, sock_arg, (char *)NULL);
	return 11;
}

/*
 * The new image sets the event through the old descriptor. It does not
 * open /dev/kfd itself: on 6.1, amdkfd makes a second process of the same
 * pid then, warns of a duplicate sysfs entry and oopses when the old one
 * is released, so the case the uAPI header describes (an event of the
 * same id registered in the new image) cannot be run here.
 */
static int exec_new_main(int old_kfd, uint32_t old_id, int sock)
{
	struct kfd_raw_event_id_args set = { .event_id = old_id };
	int ret = ioctl(old_kfd, KFD_RAW_IOC_SET_EVENT, &set) ? -errno : 0;

	msg_send(sock, MSG_RESULT, ret, NULL, 0);
	return 0;
}

/*
 * A CPU set through a descriptor kept across execve() counts only for the
 * setter's own address space: this process's registered event of the same
 * id does not move.
 */
TEST(set_through_descriptor_kept_across_exec)
{
	HsaEvent *evs[16] = { NULL }, *mine = NULL;
	int sock, code, fence, ret = -1;
	unsigned int i;
	struct msg m;
	pid_t pid = spawn_child("exec-old", &sock);

	if (!msg_recv(sock, &m, NULL, NULL) || m.cmd != MSG_READY)
		tap_bail("exec child failed (status %d)", reap(pid));
	/* An event of ours with the child's id, registered, a fence pending. */
	for (i = 0; i < 16 && !mine; i++) {
		evs[i] = new_event();
		if (evs[i]->EventId == (uint32_t)m.val)
			mine = evs[i];
	}
	if (!mine || raw_register(kfdsync, mine->EventId, slot_addr(mine)))
		tap_bail("no registered event with the child's id %d", m.val);
	fence = raw_export(kfdsync, mine->EventId, 0, 0);
	if (msg_recv(sock, &m, NULL, NULL) && m.cmd == MSG_RESULT)
		ret = m.val;
	code = reap(pid);
	tap_ret(code, 0, "exec_child_ran");
	tap_ret(ret, 0, "old_descriptor_sets_old_process_event");
	raw_wait(fence, 500);
	tap_ok(raw_fence_status(fence) == 0 && raw_age(kfdsync, mine->EventId) == 0,
	       "set_counts_only_in_setters_address_space (age %" PRIu64 ")",
	       raw_age(kfdsync, mine->EventId));
	close(fence);
	raw_unregister(kfdsync, mine->EventId);
	for (i = 0; i < 16 && evs[i]; i++)
		hsaKmtDestroyEvent(evs[i]);
	close(sock);
}

/* ---- amdgpu goes and comes back (last: it takes /dev/kfd away) ---- */

/* A signal event through a /dev/kfd of our own, its events area mapped. */
static int raw_kfd_event(int kfd, uint32_t *id, uint64_t *slot)
{
	struct kfd_raw_create_event_args ce = { .event_type = KFD_RAW_EVENT_SIGNAL,
						.auto_reset = 1 };
	void *page;

	if (ioctl(kfd, KFD_RAW_IOC_CREATE_EVENT, &ce))
		return -errno;
	page = mmap(NULL, 4096 * 8, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
		    (off_t)ce.event_page_offset);
	if (page == MAP_FAILED)
		return -errno;
	*id = ce.event_id;
	*slot = (uintptr_t)page + ce.event_id * 8ULL;
	return 0;
}

/*
 * A context opened before amdgpu unloads: its fences end with -EIO, and
 * once amdgpu is back it registers and exports as a new one would. After
 * the reload, /dev/kfd is used directly (libhsakmt is not reopened).
 */
TEST(context_registers_again_after_amdgpu_returns)
{
	HsaEvent *ev = registered_event();
	struct kfd_raw_event_id_args set = { 0 };
	int fence, ret, f2 = -1, kfd;
	uint32_t old = ev->EventId, id = 0;
	uint64_t slot = 0;

	if (!getenv("KFDSYNC_KMOD_DIR")) {
		tap_skip("needs the guest", "context_registers_again_after_amdgpu_returns");
		return;
	}
	fence = raw_export(kfdsync, old, 0, 0);
	/*
	 * Off /dev/kfd entirely (the context stays), so that amdgpu can go;
	 * the event stays in amdkfd until then (only libhsakmt's struct goes).
	 */
	munmap((void *)(uintptr_t)(slot_addr(ev) - (uint64_t)old * 8), 4096 * 8);
	free(ev);
	hsaKmtCloseKFD();
	ret = kmod_unload("amdgpu", 50);
	tap_ret(ret, 0, "amdgpu_unloads");
	raw_wait(fence, WAIT_MS);
	tap_ret(raw_fence_status(fence), -EIO, "amdgpu_gone_fence_eio");
	close(fence);
	ret = system("modprobe amdgpu");
	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (ret || kfd < 0 || raw_kfd_event(kfd, &id, &slot))
		tap_bail("amdgpu did not come back (%d, %s)", ret, strerror(errno));
	tap_ret(raw_unregister(kfdsync, old), 0, "old_registration_unregisters");
	ret = raw_register(kfdsync, id, slot);
	tap_ret(ret, 0, "context_registers_after_amdgpu_returns");
	if (!ret)
		f2 = raw_export(kfdsync, id, 0, 0);
	set.event_id = id;
	ioctl(kfd, KFD_RAW_IOC_SET_EVENT, &set);
	if (f2 >= 0)
		raw_wait(f2, WAIT_MS);
	tap_ret(f2 >= 0 ? raw_fence_status(f2) : f2, 1, "fence_after_amdgpu_returns_signals");
	if (f2 >= 0)
		close(f2);
	raw_unregister(kfdsync, id);
	close(kfd);
}

int main(int argc, char **argv)
{
	const char *role;
	int sock, code;

	if (argc == 5 && !strcmp(argv[1], "--exec-new"))
		return exec_new_main(atoi(argv[2]), (uint32_t)strtoul(argv[3], NULL, 0),
				     atoi(argv[4]));
	if (child_args(argc, argv, &role, &sock)) {
		scrub_hsa_env();
		if (!strcmp(role, "contexts"))
			code = child_contexts(sock);
		else if (!strcmp(role, "slots"))
			code = child_slots(sock);
		else if (!strcmp(role, "exec-old"))
			code = child_exec_old(sock);
		else
			code = 99;
		return code;
	}
	harness_require = hardening_require;
	harness_setup = hardening_setup;
	return harness_main(argc, argv);
}
