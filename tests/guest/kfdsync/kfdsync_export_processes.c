// SPDX-License-Identifier: MIT
/*
 * kfdsync_export_processes: exported fences and other processes.
 *
 * How this program works: with its own event registered (kfdsync_export.h),
 * it starts other processes, which are this program again (re-executed
 * with --child ROLE, talking over a socket pair, tests/common/child.h): a
 * peer with the same event id, whose fences only its own signals move; a
 * forked child refused the inherited context; an owner that exports 4095
 * fences to us and is killed, which ends them with -ECANCELED; a process
 * whose queue gets a hardware exception, which ends its fences with -EIO.
 * Tests register themselves (tests/common/harness.h).
 *
 * Output is TAP; a subtest that cannot run says why (# SKIP).
 */

#include <signal.h>
#include <sys/resource.h>

#include "sim_test.h"
#include "kfdsync_export.h"

#define OWNER_FENCES		4095

/* ---- children ---- */

/* A peer: an event with the id the parent names; report its fence. */
static int child_peer(int sock)
{
	HsaEvent *ev[16];
	unsigned int n = 0;
	struct relay relay;
	struct msg m;
	int fence;

	child_setup();
	if (!msg_recv(sock, &m, NULL, NULL))
		return 12;
	/* Fresh process: ids count up from 1; create until ours matches. */
	do {
		ev[n] = create_event(HSA_EVENTTYPE_SIGNAL, false);
		if (!ev[n])
			return 13;
	} while (ev[n]->EventId != (uint32_t)m.val && ++n < ARRAY_SIZE(ev));
	if (n == ARRAY_SIZE(ev))
		return 14;
	if (__ev_register(kfdsync, ev[n]->EventId, slot_addr(ev[n]), NULL))
		return 15;
	fence = __export(kfdsync, ev[n]->EventId, 0, 0);
	if (fence < 0)
		return 16;
	relay_start(&relay, kfdsync, ev[n]);
	msg_send(sock, MSG_READY, (int32_t)ev[n]->EventId, NULL, 0);

	while (msg_recv(sock, &m, NULL, NULL) && m.cmd != MSG_EXIT) {
		if (m.cmd == MSG_SET)
			hsaKmtSetEvent(ev[n]);
		msg_send(sock, MSG_RESULT, readable(fence, m.val), NULL, 0);
	}
	relay_stop(&relay);
	close(fence);
	do
		hsaKmtDestroyEvent(ev[n]);
	while (n--);
	return 0;
}

/* The owner of OWNER_FENCES fences, which it hands over and then dies. */
static int child_owner(int sock)
{
	int fds[CHILD_MSG_MAX_FDS];
	unsigned int i, n = 0;
	HsaEvent *ev;

	child_setup();
	ev = create_event(HSA_EVENTTYPE_SIGNAL, false);
	if (!ev || __ev_register(kfdsync, ev->EventId, slot_addr(ev), NULL))
		return 12;
	for (i = 0; i < OWNER_FENCES; i++) {
		fds[n] = __export(kfdsync, ev->EventId, 0, 0);
		if (fds[n] < 0) {
			fprintf(stderr, "export %u: %s\n", i, strerror(-fds[n]));
			return 13;
		}
		if (++n == CHILD_MSG_MAX_FDS || i == OWNER_FENCES - 1) {
			msg_send(sock, MSG_FDS, (int32_t)n, fds, n);
			while (n)
				close(fds[--n]);
		}
	}
	msg_send(sock, MSG_DONE, 0, NULL, 0);
	for (;;)
		pause();
}

/* A process whose queue gets a hardware exception: report its fences. */
static int child_hw_exception(int sock)
{
	struct kfdsync_event_query q;
	int fence, born, code;
	HsaEvent *ev;
	uint32_t cq;

	child_setup();
	sim = kfdsim_open();
	if (sim < 0)
		return 12;
	cq = queue_create(sim);
	code = child_pending_fence(&ev, &fence);
	if (code)
		return code;
	if (readable(fence, 0))
		return 14;
	if (kfdsim_inject(sim, cq, KFDSIM_INJECT_HW_EXCEPTION))
		return 15;
	readable(fence, WAIT_MS);
	msg_send(sock, MSG_RESULT, fence_status(fence), NULL, 0);
	/* Sticky: a later export is born with the error. */
	born = __export(kfdsync, ev->EventId, 0, 0);
	msg_send(sock, MSG_RESULT, born < 0 ? born : fence_status(born), NULL, 0);
	if (__ev_query(kfdsync, ev->EventId, &q))
		return 16;
	msg_send(sock, MSG_RESULT, q.error, NULL, 0);
	close(fence);
	if (born >= 0)
		close(born);
	hsaKmtDestroyEvent(ev);
	kfdsim_queue_destroy(sim, cq);
	close(sim);
	return 0;
}

static const struct export_child children[] = {
	{ "peer", child_peer },
	{ "owner", child_owner },
	{ "hw_exception", child_hw_exception },
	{ NULL, NULL },
};

/* ---- tests ---- */

TEST(two_processes)
{
	uint64_t age = ev_age(kfdsync, ev1->EventId), end;
	struct msg m = { 0 };
	int sock, fence, res_gpu = -1, res_cpu = -1, res_own = -1, code;
	pid_t pid = spawn_child("peer", &sock);

	msg_send(sock, MSG_READY, (int32_t)ev1->EventId, NULL, 0);
	if (!msg_recv(sock, &m, NULL, NULL) || m.cmd != MSG_READY) {
		tap_ok(false, "two_processes_same_event_id (child status %d)", reap(pid));
		tap_skip("no peer", "foreign_gpu_signal_not_seen");
		tap_skip("no peer", "foreign_cpu_signal_not_seen");
		tap_skip("no peer", "own_signal_signals_only_own");
		close(sock);
		return;
	}
	tap_ok((uint32_t)m.val == ev1->EventId, "two_processes_same_event_id (%u)", m.val);

	fence = export(kfdsync, ev1->EventId, age);
	/* Our GPU signal on the same id: the peer's fence stays pending. */
	end = submit_signal(queue, ev1, 0);
	kfdsim_queue_wait(sim, queue, end, WAIT_MS);
	readable(fence, WAIT_MS);
	msg_send(sock, MSG_CHECK, 200, NULL, 0);
	if (msg_recv(sock, &m, NULL, NULL))
		res_gpu = m.val;
	tap_ok(readable(fence, 0) && res_gpu == 0, "foreign_gpu_signal_not_seen (peer %d)",
	       res_gpu);
	close(fence);
	wait_age(kfdsync, ev1->EventId, age + 1);

	age = ev_age(kfdsync, ev1->EventId);
	hsaKmtSetEvent(ev1);
	wait_age(kfdsync, ev1->EventId, age + 1);
	msg_send(sock, MSG_CHECK, 200, NULL, 0);
	if (msg_recv(sock, &m, NULL, NULL))
		res_cpu = m.val;
	tap_ok(res_cpu == 0, "foreign_cpu_signal_not_seen (peer %d)", res_cpu);

	/* The peer sets its own event: its fence signals, ours does not. */
	age = ev_age(kfdsync, ev1->EventId);
	fence = export(kfdsync, ev1->EventId, age);
	msg_send(sock, MSG_SET, WAIT_MS, NULL, 0);
	if (msg_recv(sock, &m, NULL, NULL))
		res_own = m.val;
	tap_ok(res_own == 1 && !readable(fence, 200), "own_signal_signals_only_own (peer %d)",
	       res_own);
	close(fence);

	msg_send(sock, MSG_EXIT, 0, NULL, 0);
	code = reap(pid);
	if (code)
		tap_diag("peer exited with %d", code);
	close(sock);
}

/* A forked child inherits the file, not the right to use it. */
TEST(context_other_process)
{
	int ret;
	pid_t pid;

	pid = fork();
	if (!pid) {
		struct kfdsync_event_query q = { .event_id = ev1->EventId };

		_exit(ioctl(kfdsync, KFDSYNC_IOCTL_EVENT_QUERY, &q) == -1 && errno == EPERM ?
		      0 : 1);
	}
	ret = reap(pid);
	tap_ok(ret == 0, "context_refuses_other_process_eperm (child %d)", ret);
}

TEST(owner_killed)
{
	int old_fences = param_read("max_fences");
	struct rlimit rl = { 8192, 8192 };
	static int fds[OWNER_FENCES];
	static struct pollfd pfd[OWNER_FENCES];
	unsigned int n = 0, k, ready = 0, canceled = 0, pending_before = 0;
	struct msg m;
	int64_t t0, dt;
	int sock;
	pid_t pid;

	if (old_fences < 0 || setrlimit(RLIMIT_NOFILE, &rl) ||
	    !param_write("max_fences", OWNER_FENCES + 1)) {
		tap_skip("cannot raise limits", "owner_killed_fences_received");
		tap_skip("cannot raise limits", "owner_killed_fences_canceled");
		return;
	}
	pid = spawn_child("owner", &sock);
	while (msg_recv(sock, &m, fds + n, &k) && m.cmd == MSG_FDS && n + k <= OWNER_FENCES)
		n += k;
	param_write("max_fences", old_fences);
	for (k = 0; k < n; k++) {
		pfd[k] = (struct pollfd){ .fd = fds[k], .events = POLLIN };
		pending_before += fence_status(fds[k]) == 0;
	}
	tap_ok(n == OWNER_FENCES && m.cmd == MSG_DONE && pending_before == n,
	       "owner_killed_fences_received (%u, %u pending)", n, pending_before);

	kill(pid, SIGKILL);
	t0 = kfdsim_now_ns();
	while (kfdsim_now_ns() - t0 < (int64_t)WAIT_MS * 1000000) {
		if (poll(pfd, n, 100) < 0 && errno != EINTR)
			break;
		for (k = 0, ready = 0; k < n; k++)
			ready += !!(pfd[k].revents & POLLIN);
		if (ready == n)
			break;
	}
	dt = kfdsim_now_ns() - t0;
	for (k = 0; k < n; k++) {
		canceled += fence_status(fds[k]) == -ECANCELED;
		close(fds[k]);
	}
	reap(pid);
	close(sock);
	tap_ok(n && ready == n && canceled == n && dt < 5000000000LL,
	       "owner_killed_fences_canceled (%u of %u, %u ECANCELED, %" PRId64 " ms)", ready,
	       n, canceled, dt / 1000000);
}

TEST(hw_exception)
{
	int res[3] = { 1, 1, 1 }, sock, i, code;
	struct msg m;
	pid_t pid;

	if (relay_mode) {
		tap_skip("relay mode: no exception hooks", "hw_exception_fence_eio");
		tap_skip("relay mode: no exception hooks", "hw_exception_sticky_export_eio");
		tap_skip("relay mode: no exception hooks", "hw_exception_query_error");
		return;
	}
	pid = spawn_child("hw_exception", &sock);
	for (i = 0; i < 3 && msg_recv(sock, &m, NULL, NULL); i++)
		res[i] = m.val;
	code = reap(pid);
	close(sock);
	if (code)
		tap_diag("hw_exception child exited with %d", code);
	tap_ok(res[0] == -EIO, "hw_exception_fence_eio (%d)", res[0]);
	tap_ok(res[1] == -EIO, "hw_exception_sticky_export_eio (%d)", res[1]);
	tap_ok(res[2] == -EIO, "hw_exception_query_error (%d)", res[2]);
}

int main(int argc, char **argv)
{
	return export_main(argc, argv, NULL, children);
}
